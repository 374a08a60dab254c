//! Why a harness operation failed, and its kind: what every language's
//! harness exposes for a test to match on (`HostError.kind` in Python,
//! `error.code` in TypeScript, `wkh_last_error_kind` in C), rather than the
//! English of the message.

use super::MOST_NODES;
use std::fmt;
use std::str::FromStr;
use wasmkeep_host::{FailureKind, FaultKind, RuntimeError};

/// Why a harness operation failed.
#[derive(Debug, thiserror::Error)]
pub enum TestHostError {
    /// The host was closed.
    #[error("the host is closed: make a new one")]
    Closed,
    /// The runtime refused or failed.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// A fault name that is not one.
    #[error("unknown fault {0:?} (known: {known})", known = FaultKind::ALL.map(FaultKind::name).join(", "))]
    UnknownFault(String),
    /// An access that is not one.
    #[error("class {class}: access {access:?} is not open, existing or internal")]
    UnknownAccess {
        /// The class.
        class: String,
        /// What was given.
        access: String,
    },
    /// A socket this host did not open.
    #[error("no socket {0} was opened by this host")]
    NoSuchSocket(u64),
    /// A node the host does not run.
    #[error("no node {node}: the host runs {nodes} (nodes are numbered from 1)")]
    NoSuchNode {
        /// The node asked for.
        node: usize,
        /// How many there are.
        nodes: usize,
    },
    /// A node count a test host does not run.
    #[error("nodes = {0}: a test host runs 1 to {MOST_NODES} nodes (1 is a single node, 2 or more a local cluster)")]
    BadNodes(usize),
    /// A cluster verb on a single node.
    #[error("this needs a cluster: start the host with nodes = 2 or more")]
    NeedsCluster,
    /// A single node started without `history` has none to read or restore from.
    #[error(
        "this host keeps no history: start it with history on (a single node's option `history`), or with two nodes or more"
    )]
    NoHistory,
    /// A bookmark that is not one (`<generation>-<seq>`, in hex, as the history lists them).
    #[error("{0:?} is not a bookmark: take one from the actor's history")]
    BadBookmark(String),
    /// The cluster's bucket refused or failed.
    #[error("{0}")]
    Cluster(String),
    /// The temporary data directory could not be made.
    #[error("creating a temporary data directory: {0}")]
    TempDir(#[source] std::io::Error),
}

impl TestHostError {
    /// Its kind: the host's own [`FailureKind`] for what the runtime
    /// refused or failed, else what the harness itself refused.
    pub fn kind(&self) -> TestHostErrorKind {
        match self {
            TestHostError::Closed => TestHostErrorKind::Closed,
            TestHostError::Runtime(e) => TestHostErrorKind::Host(e.kind()),
            TestHostError::UnknownFault(_) => TestHostErrorKind::UnknownFault,
            TestHostError::UnknownAccess { .. } => TestHostErrorKind::UnknownAccess,
            TestHostError::NoSuchSocket(_) => TestHostErrorKind::Host(FailureKind::NoSuchSocket),
            TestHostError::NoSuchNode { .. } => TestHostErrorKind::NoSuchNode,
            TestHostError::BadNodes(_) => TestHostErrorKind::BadNodes,
            TestHostError::NeedsCluster => TestHostErrorKind::Host(FailureKind::NeedsCluster),
            TestHostError::NoHistory | TestHostError::BadBookmark(_) => {
                TestHostErrorKind::Host(FailureKind::BadArgument)
            }
            TestHostError::Cluster(_) => TestHostErrorKind::Host(FailureKind::Bucket),
            TestHostError::TempDir(_) => TestHostErrorKind::TempDir,
        }
    }
}

/// What kind of failure a harness operation met. New kinds may come in a
/// minor version, so a `match` on it needs a `_` arm.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TestHostErrorKind {
    /// The host refused or failed: its kind, as its answers name it.
    Host(FailureKind),
    /// The test host was closed.
    Closed,
    /// A fault name that is not one.
    UnknownFault,
    /// An access that is not `open`, `existing` or `internal`.
    UnknownAccess,
    /// A node the host does not run.
    NoSuchNode,
    /// A node count a test host does not run.
    BadNodes,
    /// The temporary data directory could not be made.
    TempDir,
}

impl TestHostErrorKind {
    /// The harness's own kinds (a host's kind is any [`FailureKind`]).
    pub const HARNESS: [TestHostErrorKind; 6] = [
        TestHostErrorKind::Closed,
        TestHostErrorKind::UnknownFault,
        TestHostErrorKind::UnknownAccess,
        TestHostErrorKind::NoSuchNode,
        TestHostErrorKind::BadNodes,
        TestHostErrorKind::TempDir,
    ];

    /// Its name, as every harness spells it: a [`FailureKind`]'s
    /// (`no-such-class`, `needs-cluster`, ...) or the harness's own
    /// (`closed`, `no-such-node`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            TestHostErrorKind::Host(k) => k.as_str(),
            TestHostErrorKind::Closed => "closed",
            TestHostErrorKind::UnknownFault => "unknown-fault",
            TestHostErrorKind::UnknownAccess => "unknown-access",
            TestHostErrorKind::NoSuchNode => "no-such-node",
            TestHostErrorKind::BadNodes => "bad-nodes",
            TestHostErrorKind::TempDir => "temp-dir",
        }
    }

    /// Whether it is a bad argument of the caller's (Python raises
    /// `ValueError` for these) rather than something the host refused.
    pub fn is_bad_argument(self) -> bool {
        matches!(
            self,
            TestHostErrorKind::UnknownFault
                | TestHostErrorKind::UnknownAccess
                | TestHostErrorKind::BadNodes
                | TestHostErrorKind::Host(FailureKind::BadArgument)
        )
    }
}

impl fmt::Display for TestHostErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is no [`TestHostErrorKind`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a test host error kind")]
pub struct UnknownTestHostErrorKind(pub String);

impl FromStr for TestHostErrorKind {
    type Err = UnknownTestHostErrorKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TestHostErrorKind::HARNESS
            .into_iter()
            .find(|k| k.as_str() == s)
            .or_else(|| s.parse().ok().map(TestHostErrorKind::Host))
            .ok_or_else(|| UnknownTestHostErrorKind(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_from_its_name_and_none_is_spelled_twice() {
        let mut seen = std::collections::HashSet::new();
        let all = TestHostErrorKind::HARNESS
            .into_iter()
            .chain(FailureKind::ALL.into_iter().map(TestHostErrorKind::Host));
        for k in all {
            assert!(seen.insert(k.as_str()), "{k} is spelled twice");
            assert_eq!(k.as_str().parse::<TestHostErrorKind>(), Ok(k));
        }
        assert!("nope".parse::<TestHostErrorKind>().is_err());
    }
}
