//! [`ActorTest`]: one actor class in a test host, with short verbs for what
//! a test does most, over the driver chosen at start ([`Driver`]).

use crate::build::component_with_features;
use crate::driver::{Driver, HarnessError, HostDriver, HostSetup};
use crate::types::{
    Access, ActorKey, AdminDeleted, CallFailure, DeletionStatus, HistoryPosition, HttpResponse, LogLine, Outbound,
    RestoreTo, Restored,
};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The app every [`ActorTest`] loads its class into.
const APP: &str = "test/app";

/// How to set up an [`ActorTest`]; [`ActorTest::of_this_crate`] takes the defaults.
#[derive(Debug, Clone)]
pub struct Builder {
    manifest_dir: PathBuf,
    features: Vec<String>,
    class: String,
    access: Access,
    setup: HostSetup,
    driver: Option<Driver>,
}

impl Builder {
    /// The class name requests address (`/<class>/<name>`); default `actor`.
    #[must_use]
    pub fn class(mut self, class: impl Into<String>) -> Self {
        self.class = class.into();
        self
    }

    /// Builds the crate with these cargo features on (a variant of the actor).
    #[must_use]
    pub fn features(mut self, features: &[&str]) -> Self {
        self.features = features.iter().map(|f| (*f).to_owned()).collect();
        self
    }

    /// Runs a local cluster of `n` nodes (sharing a bucket and the virtual
    /// clock) instead of one node; the short verbs go to node 1, the `_on`
    /// ones to the node named.
    #[must_use]
    pub fn nodes(mut self, n: usize) -> Self {
        self.setup.nodes = Some(n);
        self
    }

    /// Whether a single node keeps its actors' history, every state
    /// restorable ([`ActorTest::history`], [`ActorTest::restore`]); default
    /// off (each write then also writes a file). A cluster keeps it in its
    /// bucket whatever this says.
    #[must_use]
    pub fn history(mut self, on: bool) -> Self {
        self.setup.history = on;
        self
    }

    /// The class's access; default `open`.
    #[must_use]
    pub fn access(mut self, access: Access) -> Self {
        self.access = access;
        self
    }

    /// An event's time limit; default 5 s.
    #[must_use]
    pub fn event_timeout(mut self, limit: Duration) -> Self {
        self.setup.event_timeout = Some(limit);
        self
    }

    /// Runs the host with this driver rather than the one
    /// [`Driver::from_env`] picks.
    #[must_use]
    pub fn driver(mut self, driver: Driver) -> Self {
        self.driver = Some(driver);
        self
    }

    /// Builds the crate (once per test process) and starts the host.
    ///
    /// # Errors
    /// The crate does not build into a component, the driver's host cannot
    /// start (the prebuilt library is not found: the message says where it
    /// looked and what to install), or the class does not load.
    pub fn start(self) -> anyhow::Result<ActorTest> {
        let features: Vec<&str> = self.features.iter().map(String::as_str).collect();
        let component = component_with_features(&self.manifest_dir, &features)?;
        let driver = match self.driver {
            Some(d) => d,
            None => Driver::from_env()?,
        };
        let host: Box<dyn HostDriver + Send + Sync> = match driver {
            Driver::Prebuilt => Box::new(crate::prebuilt::PrebuiltHost::start(&self.setup)?),
            #[cfg(feature = "in-process")]
            Driver::InProcess => Box::new(crate::in_process::InProcessHost::start(&self.setup)?),
            #[cfg(not(feature = "in-process"))]
            Driver::InProcess => anyhow::bail!(
                "the in-process driver is not compiled in: turn on wasmkeep-actor-testing's `in-process` \
                 feature, or use the prebuilt one (unset WASMKEEP_HARNESS)"
            ),
        };
        host.add_class(APP, &self.class, &component, self.access)?;
        Ok(ActorTest {
            host,
            class: self.class,
            chaos_seed: None,
        })
    }
}

/// An actor crate under test: its class loaded in a fresh test host (a
/// virtual clock, a temporary data directory). The verbs panic with the
/// host's message when the host refuses, as test helpers do.
pub struct ActorTest {
    host: Box<dyn HostDriver + Send + Sync>,
    class: String,
    /// The seed [`run_chaos`](crate::run_chaos) runs the body under.
    pub(crate) chaos_seed: Option<u64>,
}

/// A request's refusal as a test helper's panic: the driver's message already
/// names the request, its actor and node (as the C library words it).
fn refused<T>(e: HarnessError) -> T {
    panic!("{e}")
}

impl ActorTest {
    /// The actor crate at `manifest_dir` (pass `env!("CARGO_MANIFEST_DIR")`),
    /// as class `actor`, open to requests.
    ///
    /// # Errors
    /// See [`Builder::start`].
    pub fn of_this_crate(manifest_dir: impl AsRef<Path>) -> anyhow::Result<Self> {
        Self::builder(manifest_dir).start()
    }

    /// Set up the class name, access or time limit first.
    pub fn builder(manifest_dir: impl AsRef<Path>) -> Builder {
        Builder {
            manifest_dir: manifest_dir.as_ref().to_path_buf(),
            features: Vec::new(),
            class: "actor".into(),
            access: Access::Open,
            setup: HostSetup::default(),
            driver: None,
        }
    }

    /// The address of the actor named `name`.
    pub fn key(&self, name: &str) -> ActorKey {
        ActorKey::new(APP, &self.class, name)
    }

    /// The whole host compiled in, for everything the short verbs leave out
    /// (feature `in-process`).
    ///
    /// # Panics
    /// The test runs the prebuilt driver (`WASMKEEP_HARNESS=prebuilt`).
    #[cfg(feature = "in-process")]
    pub fn host(&self) -> &wasmkeep_host_testing::TestHost {
        self.host
            .test_host()
            .expect("ActorTest::host needs the in-process driver, and this test runs the prebuilt one")
    }

    /// The driver, for the chaos loop.
    pub(crate) fn driver_mut(&mut self) -> &mut (dyn HostDriver + Send + Sync) {
        self.host.as_mut()
    }

    /// Sends `method path` with `body` to the actor named `name` and waits
    /// for its answer (the event's end included).
    ///
    /// # Panics
    /// The host refused the request (its message says why).
    pub fn request(&self, name: &str, method: &str, path: &str, body: impl Into<Vec<u8>>) -> HttpResponse {
        self.send(name, None, method, path, body.into())
    }

    /// A request to node `n` of a cluster (it serves it, or forwards it to
    /// the actor's holder).
    ///
    /// # Panics
    /// No such node, or the host refused the request.
    pub fn request_on(&self, n: usize, name: &str, method: &str, path: &str, body: impl Into<Vec<u8>>) -> HttpResponse {
        self.send(name, Some(n), method, path, body.into())
    }

    fn send(&self, name: &str, node: Option<usize>, method: &str, path: &str, body: Vec<u8>) -> HttpResponse {
        let key = self.key(name);
        self.host
            .request(&key, method, path, &body, node)
            .unwrap_or_else(refused)
    }

    /// Cuts node `n` off: it holds nothing from now on, and the other nodes
    /// take its actors over from the bucket.
    pub fn cut_off(&self, n: usize) {
        self.host
            .cut_off(n)
            .unwrap_or_else(|e| panic!("cutting node {n} off: {e}"));
    }

    /// Cluster: an operator delete of the actor named `name`, as
    /// `wasmkeep-shim actor delete` asks for it; carried out before this returns.
    pub fn request_operator_delete(&self, name: &str) -> String {
        let key = self.key(name);
        self.host
            .request_operator_delete(&key)
            .unwrap_or_else(|e| panic!("operator delete of {key}: {e}"))
    }

    /// Cluster: the class's `expire-after-idle` (at least an hour; `None` removes it).
    pub fn expire_after_idle(&self, limit: Option<Duration>) {
        self.host
            .set_expire_after_idle(APP, &self.class, limit)
            .unwrap_or_else(|e| panic!("{e}"));
    }

    /// Cluster: runs each node's idle-expiry pass; how many actors expired.
    /// (Advancing the clock runs it every ten minutes of virtual time too.)
    pub fn run_expiry_passes(&self) -> usize {
        self.host.run_expiry_passes().unwrap_or_else(|e| panic!("{e}"))
    }

    /// Cluster: deletes the app, as `wasmkeep-shim app delete` does.
    pub fn delete_app(&self) {
        self.host.delete_app(APP).unwrap_or_else(|e| panic!("{e}"));
    }

    /// `GET path`.
    pub fn get(&self, name: &str, path: &str) -> HttpResponse {
        self.request(name, "GET", path, Vec::new())
    }

    /// `POST path` with `body`.
    pub fn post(&self, name: &str, path: &str, body: impl Into<Vec<u8>>) -> HttpResponse {
        self.request(name, "POST", path, body)
    }

    /// `DELETE path`.
    pub fn delete(&self, name: &str, path: &str) -> HttpResponse {
        self.request(name, "DELETE", path, Vec::new())
    }

    /// Runs `on-call` of the actor named `name` as the host.
    ///
    /// # Panics
    /// The host refused the call.
    pub fn call(&self, name: &str, payload: impl Into<Vec<u8>>) -> Result<Vec<u8>, CallFailure> {
        let key = self.key(name);
        self.host
            .call(&key, &payload.into())
            .unwrap_or_else(|e| panic!("call to {key}: {e}"))
    }

    /// Waits until every event queued for the actor has run.
    pub fn settle(&self, name: &str) {
        let key = self.key(name);
        self.host.settle(&key).unwrap_or_else(|e| panic!("settling {key}: {e}"));
    }

    /// The host's time now (ms).
    pub fn now_ms(&self) -> u64 {
        self.host.now_ms().unwrap_or_else(|e| panic!("{e}"))
    }

    /// Moves the virtual clock on by `ms`; returns the new time. Alarms that
    /// come due do not run until [`ActorTest::run_due_alarms`]; to run them
    /// as the clock moves, use [`ActorTest::advance_clock_running_due`].
    pub fn advance_clock(&self, ms: u64) -> u64 {
        self.host.advance_clock(ms).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Moves the virtual clock on by `ms` as a running clock would, running
    /// what falls due on the way: each alarm due by the new time runs at its
    /// own time, in order (an alarm that sets itself again inside the window
    /// runs again), alarms already due first; a cluster's passes run as the
    /// clock passes their intervals. Returns how many alarms ran `on-alarm`
    /// ([`ActorTest::now_ms`] is the new time).
    ///
    /// ```no_run
    /// # let t = wasmkeep_actor_testing::ActorTest::builder(".").start().unwrap();
    /// // Three virtual days: a daily alarm runs three times.
    /// assert_eq!(t.advance_clock_running_due(3 * 24 * 3600 * 1000), 3);
    /// ```
    pub fn advance_clock_running_due(&self, ms: u64) -> usize {
        self.host
            .advance_clock_running_due(ms)
            .map(|(_, ran)| ran)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// The seed [`run_chaos`](crate::run_chaos) runs the body under, if any:
    /// draw the body's own choices from it, so that the seed replays them.
    pub fn chaos_seed(&self) -> Option<u64> {
        self.chaos_seed
    }

    /// Starts seeded chaos by hand, for a loop of the test's own (call
    /// [`ActorTest::reset`] first): what [`run_chaos`](crate::run_chaos) does
    /// for each seed. From now on the seed's schedule acts before each event,
    /// until [`ActorTest::end_chaos`]; the same seed and the same events draw
    /// the same schedule, on one node and on several.
    ///
    /// # Panics
    /// The host refused (it is closed).
    pub fn start_chaos(&mut self, seed: u64) {
        self.host.start_chaos(seed).unwrap_or_else(refused);
        self.chaos_seed = Some(seed);
    }

    /// Stops the chaos [`ActorTest::start_chaos`] started: what its schedule
    /// did, a line per step in order, as a failure's report prints them
    /// (empty when it did nothing, or none ran).
    ///
    /// # Panics
    /// The host refused (it is closed).
    pub fn end_chaos(&mut self) -> Vec<String> {
        self.chaos_seed = None;
        self.host.end_chaos().unwrap_or_else(refused)
    }

    /// Runs every due alarm; how many ran. In a cluster the lowest live node
    /// runs them, forwarding each to the actor's holder.
    pub fn run_due_alarms(&self) -> usize {
        self.host.run_due_alarms().unwrap_or_else(|e| panic!("{e}"))
    }

    /// Runs the alarm of the actor named `name` if it is due; whether one
    /// ran. In a cluster it goes through the lowest live node, which forwards
    /// it to the holder.
    pub fn run_alarm(&self, name: &str) -> bool {
        self.host
            .run_alarm(None, &self.key(name))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// As [`ActorTest::run_alarm`], through node `n` (numbered from 1).
    ///
    /// # Panics
    /// No such node.
    pub fn run_alarm_on(&self, n: usize, name: &str) -> bool {
        self.host
            .run_alarm(Some(n), &self.key(name))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// The actor's tables, as `{"<table>": {"columns": [...], "rows": [[...]]}}`,
    /// a value per column: `{"integer": "1"}` (exact beyond 2^53),
    /// `{"real": 1.5}`, text as a string, `{"blob": "<hex>"}`, NULL as `null`.
    pub fn tables(&self, name: &str) -> serde_json::Value {
        let key = self.key(name);
        self.host
            .tables(&key)
            .unwrap_or_else(|e| panic!("tables of {key}: {e}"))
    }

    /// Whether the actor named `name` exists (has a database).
    pub fn exists(&self, name: &str) -> bool {
        let key = self.key(name);
        self.host.exists(&key).unwrap_or_else(|e| panic!("{e}"))
    }

    /// What the actor named `name` logged so far.
    pub fn logs_of(&self, name: &str) -> Vec<LogLine> {
        self.host.logs_of(&self.key(name)).unwrap_or_default()
    }

    /// Arms `count` occurrences of the fault `name` (`fail-removal`, ...).
    ///
    /// # Panics
    /// No such fault.
    pub fn arm_fault(&self, name: &str, count: u32) {
        self.host.arm_fault(None, name, count).unwrap_or_else(|e| panic!("{e}"));
    }

    /// Arms `count` occurrences of the fault `name` on node `n` (numbered
    /// from 1): it hits only events that node runs.
    ///
    /// # Panics
    /// No such fault or node.
    pub fn arm_fault_on(&self, n: usize, name: &str, count: u32) {
        self.host
            .arm_fault(Some(n), name, count)
            .unwrap_or_else(|e| panic!("{e}"));
    }

    /// Restarts the actor named `name` as a crash and recovery would: what it
    /// kept in memory is gone, an open transaction rolled back; its next
    /// event recovers it from its database. Its sockets stay open.
    pub fn restart(&self, name: &str) {
        let key = self.key(name);
        self.host
            .restart(&key)
            .unwrap_or_else(|e| panic!("restarting {key}: {e}"));
    }

    /// Deletes the actor named `name` as an operator would (no guest code
    /// runs; its sockets are closed with 1000).
    pub fn operator_delete(&self, name: &str) -> AdminDeleted {
        let key = self.key(name);
        self.host
            .operator_delete(&key)
            .unwrap_or_else(|e| panic!("deleting {key}: {e}"))
    }

    /// Whether the actor named `name` was deleted, from positive evidence
    /// only: `Deleted` or `NotDeleted` in a cluster, from its history in
    /// the bucket; a single node has no bucket to read it from.
    pub fn deletion_status(&self, name: &str) -> DeletionStatus {
        let key = self.key(name);
        self.host
            .deletion_status(&key)
            .unwrap_or_else(|e| panic!("deletion status of {key}: {e}"))
    }

    /// Starts over for the next test: no actor, socket, alarm, fault or log
    /// line is left, the clock is back at its start, and the class is loaded
    /// again (already compiled).
    pub fn reset(&mut self) {
        self.host.reset().unwrap_or_else(|e| panic!("resetting the host: {e}"));
    }

    /// Restarts the whole host, as its process would stop and start again on
    /// the same data: every socket is closed with 1001 "going away", every
    /// resident actor is released (an open transaction rolled back), and the
    /// host starts again on the same data, at the same virtual time, with the
    /// class loaded; alarms stay indexed, and a node that was cut off is live
    /// again. Chaos, if running, goes on.
    pub fn restart_host(&mut self) {
        self.host
            .restart_host()
            .unwrap_or_else(|e| panic!("restarting the host: {e}"));
    }

    /// The history of the actor named `name`, oldest first: each position's
    /// bookmark, kind, time and whether it is the head. A single node keeps
    /// one only when started with [`Builder::history`]; a cluster always.
    ///
    /// # Panics
    /// The host keeps no history (see [`ActorTest::try_history`]).
    pub fn history(&self, name: &str) -> Vec<HistoryPosition> {
        self.try_history(name).unwrap_or_else(refused)
    }

    /// As [`ActorTest::history`], with the host's refusal as a value: kind
    /// `bad-argument` for a single node started without history.
    ///
    /// # Errors
    /// The host refused.
    pub fn try_history(&self, name: &str) -> Result<Vec<HistoryPosition>, HarnessError> {
        self.host.history(&self.key(name))
    }

    /// Restores the actor named `name` to a bookmark of its history or to a
    /// time (the last state written at or before it), after the events
    /// queued for it: its open sockets close with 1012, its alarm becomes the
    /// restored state's, and its next event runs on the restored state. The
    /// restore is a new position: restoring to the answer's `undo` undoes it.
    ///
    /// # Panics
    /// The host refused (see [`ActorTest::try_restore`]).
    pub fn restore(&self, name: &str, to: RestoreTo) -> Restored {
        self.try_restore(name, to).unwrap_or_else(refused)
    }

    /// As [`ActorTest::restore`], with the host's refusal as a value:
    /// `bad-argument` for a malformed bookmark, a host without history, or a
    /// target before the actor's first state or its last delete;
    /// `no-such-actor` for an actor that never was.
    ///
    /// # Errors
    /// The host refused.
    pub fn try_restore(&self, name: &str, to: RestoreTo) -> Result<Restored, HarnessError> {
        self.host.restore(&self.key(name), &to)
    }

    /// Hibernates every actor (their next event wakes them from their files).
    pub fn hibernate_all(&self) {
        self.host.hibernate_all().unwrap_or_else(|e| panic!("{e}"));
    }

    /// Opens a WebSocket to the actor named `name` at `path`; its id.
    pub fn open_socket(&self, name: &str, path: &str) -> u64 {
        let key = self.key(name);
        let id = self
            .host
            .open_socket(&key, path)
            .unwrap_or_else(|e| panic!("opening a socket to {key}: {e}"));
        self.settle(name);
        id
    }

    /// Sends a text message on socket `id` and waits for the actor to handle it.
    pub fn socket_send_text(&self, name: &str, id: u64, text: &str) {
        self.host.socket_send_text(id, text).unwrap_or_else(|e| panic!("{e}"));
        self.settle(name);
    }

    /// What the actor sent to socket `id` since last asked.
    pub fn socket_take(&self, id: u64) -> Vec<Outbound> {
        self.host.socket_take(id).unwrap_or_else(|e| panic!("{e}"))
    }
}
