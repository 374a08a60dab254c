//! Which requests of a resident actor run on the thread that received them
//! instead of its worker's thread, on a single node (ADR 048, ADR 059).

use std::time::Duration;

/// Which of a resident actor's requests run on the thread that received
/// them. A read is a request that committed nothing; after a quick read
/// (one that took at most `quick`) the actor's worker parks at once, and
/// the next request runs where it is received. A write or a slower read
/// sends the next requests to the worker's thread until one is a quick read
/// again. Only on a single node: in a cluster an event can wait on the
/// network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadsHere {
    /// None: every request goes to its actor's worker thread.
    Never,
    /// After a quick read while the actor's requests overlap (one of the
    /// last 32 came while another waited or ran): many connections to one
    /// actor. One request at a time goes to the worker's thread, where it
    /// runs faster (ADR 048's addenda), from the 32nd request after the
    /// last overlap on. The default, with `quick` 25 µs.
    WhileOverlapping {
        /// The longest read after which the next request runs here.
        quick: Duration,
    },
    /// After every quick read, one request at a time included: ADR 048's
    /// rule as first built, for a machine where a read runs as fast on the
    /// receiving thread as on the worker's. ADR 048's tests use it, since
    /// they send one request at a time.
    AfterEveryQuickRead {
        /// The longest read after which the next request runs here.
        quick: Duration,
    },
}

impl Default for ReadsHere {
    fn default() -> Self {
        Self::WhileOverlapping {
            quick: Self::DEFAULT_QUICK,
        }
    }
}

impl ReadsHere {
    /// The default `quick`: a release build's read of a row or a few.
    pub const DEFAULT_QUICK: Duration = Duration::from_micros(25);

    /// The longest read after which the next request may run here; `None`
    /// when none does.
    pub(crate) fn quick(self) -> Option<Duration> {
        match self {
            Self::Never => None,
            Self::WhileOverlapping { quick } | Self::AfterEveryQuickRead { quick } => Some(quick),
        }
    }

    /// Whether, after a quick read, the next request may run where it is
    /// received now; `overlapping` says whether the actor's requests
    /// overlap, and is asked only when that decides it.
    pub(crate) fn now(self, overlapping: impl FnOnce() -> bool) -> bool {
        match self {
            Self::Never => false,
            Self::WhileOverlapping { .. } => overlapping(),
            Self::AfterEveryQuickRead { .. } => true,
        }
    }
}
