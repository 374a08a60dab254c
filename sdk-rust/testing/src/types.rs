//! What the harness's verbs answer: plain data of this crate, the same
//! whichever driver runs the host (the prebuilt library or the host compiled
//! in), so that a test reads the same fields either way.

use std::fmt;

/// The header a chaos schedule's lost answer carries (the host answered 503
/// after the event ran and kept its writes): a client that retries must find
/// its first try kept.
pub const LOST_ANSWER_HEADER: (&str, &str) = ("wasmkeep-chaos", "lost-answer");

/// The header naming the kind of a failure the host answered itself.
pub const FAILURE_HEADER: &str = "wasmkeep-failure";

/// An actor's full address: app (`tenant/app`), class and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ActorKey {
    /// `tenant/app`.
    pub app: String,
    /// The class, as named in the manifest.
    pub class: String,
    /// The actor's name within its class.
    pub name: String,
}

impl ActorKey {
    /// Builds a key.
    pub fn new(app: impl Into<String>, class: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            app: app.into(),
            class: class.into(),
            name: name.into(),
        }
    }
}

impl fmt::Display for ActorKey {
    /// `app:class/name`, as the host's logs and messages write it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}/{}", self.app, self.class, self.name)
    }
}

/// Who may create and reach a class's actors (the manifest's `access`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Access {
    /// Any request creates the actor.
    #[default]
    Open,
    /// Requests reach only actors that exist; calls from the app create them.
    Existing,
    /// Calls from the app's actors only.
    Internal,
}

/// An actor's answer to a request (or the host's, when the event failed first).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// Header names and values, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The first header named `name` (ASCII case ignored).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// When the host answered a failure itself (not the guest), its kind
    /// (`internal`, `overloaded`, ...), from the `wasmkeep-failure` header:
    /// what a test compares rather than the message's words.
    pub fn failure_kind(&self) -> Option<&str> {
        self.header(FAILURE_HEADER)
    }
}

/// A call's failure, as the WIT's `call-error`; each carries its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallFailure {
    /// Not delivered (no such app or class, a call cycle).
    Refused(String),
    /// The callee answered with an error (its own words).
    Rejected(String),
    /// The callee's event failed (a trap, its time limit, the host stopping).
    Failed(String),
}

/// A WebSocket message, either way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SocketMessage {
    /// A text frame.
    Text(String),
    /// A binary frame.
    Binary(Vec<u8>),
}

/// What the host sent to a socket's client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outbound {
    /// A message from the actor.
    Message(SocketMessage),
    /// The socket is closed with this code and reason.
    Close {
        /// WebSocket close code.
        code: u16,
        /// Close reason.
        reason: String,
    },
}

/// A line an actor logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// When, on the host's (virtual) clock, in ms since the epoch.
    pub at: u64,
    /// The actor (`app:class/name`).
    pub actor: String,
    /// `debug`, `info`, `warn` or `error`.
    pub level: String,
    /// The text.
    pub message: String,
}

/// What an operator delete did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdminDeleted {
    /// Deleted through the one delete routine (its sockets closed first).
    Deleted,
    /// Its database could not be opened (damaged): its files were removed.
    RemovedUnopenable,
    /// There was no such actor.
    Absent,
}

/// Whether an actor was deleted, from positive evidence only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeletionStatus {
    /// Deleted at `at_ms` (ms since the epoch), by `how` (`self`,
    /// `self_durable`, `operator`, `expired`, or `unknown`).
    Deleted {
        /// When, on the deleting node's clock.
        at_ms: u64,
        /// How.
        how: String,
    },
    /// No evidence of a delete.
    NotDeleted,
    /// Not known (the bucket could not be read, a removal has not finished).
    Unknown {
        /// Why.
        reason: String,
    },
}

/// One position of an actor's history ([`ActorTest::history`](crate::ActorTest::history)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryPosition {
    /// Its bookmark: restore to it ([`RestoreTo::Bookmark`]); bookmarks sort
    /// as positions do.
    pub bookmark: String,
    /// What it is: `upload` (a whole image), `pages`, `fence` or `reset`.
    pub kind: String,
    /// When it was written, on the host's clock (ms since the epoch).
    pub at: u64,
    /// Whether it is the actor's current state.
    pub head: bool,
}

/// Where a restore goes back to ([`ActorTest::restore`](crate::ActorTest::restore)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RestoreTo {
    /// A bookmark, as the history lists it (or a restore's `undo`).
    Bookmark(String),
    /// A time on the host's clock (ms since the epoch): the last state
    /// written at or before it.
    Time(u64),
}

/// What a restore did: three bookmarks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// The position whose state was restored.
    pub from: String,
    /// The new head, where the restored state now stands.
    pub at: String,
    /// The head before the restore: restoring to it undoes this one.
    pub undo: String,
}

/// A seed under which a chaos body failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChaosFailure {
    /// The seed: `WASMKEEP_CHAOS_SEED=<seed>` replays exactly this run.
    pub seed: u64,
    /// What the schedule did before each event, a line per step, in order
    /// (`before event 2 (to a:b/c on node 1): fail-removal armed`).
    pub schedule: Vec<String>,
    /// What the body said failed.
    pub message: String,
    /// How many seeds passed before this one.
    pub passed: usize,
    /// The report every harness shows: the seed, how to replay it, the
    /// message and the schedule.
    pub report: String,
}

impl fmt::Display for ChaosFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.report)
    }
}

impl std::error::Error for ChaosFailure {}
