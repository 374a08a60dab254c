//! What a deletion is (ADR 0028): how an actor was deleted, the record a
//! deletion leaves (`<ms> <how>`), and the status read back from it. A leaf:
//! the storage, the metrics, the guest imports and the admin API share it.

use serde::Serialize;

/// How an actor was deleted, the `how` label of the delete metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DeleteHow {
    /// `storage.delete-self`.
    SelfDelete,
    /// `storage.delete-self-durable`.
    SelfDurable,
    /// An operator's `actor delete`.
    Operator,
    /// Idle expiry.
    Expired,
}

impl DeleteHow {
    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            DeleteHow::SelfDelete => "self",
            DeleteHow::SelfDurable => "self_durable",
            DeleteHow::Operator => "operator",
            DeleteHow::Expired => "expired",
        }
    }

    /// The value of a label, if it is one.
    pub fn from_label(label: &str) -> Option<Self> {
        [Self::SelfDelete, Self::SelfDurable, Self::Operator, Self::Expired]
            .into_iter()
            .find(|h| h.label() == label)
    }

    /// The deletion record `<ms> <how>` that a reset's marker and a single
    /// node's removal record carry.
    pub fn record(self, at_ms: u64) -> String {
        format!("{at_ms} {}", self.label())
    }
}

/// Reads a deletion record `<ms> <how>`.
pub fn parse_deletion_record(record: &str) -> Option<(u64, DeleteHow)> {
    let (at, how) = record.trim().split_once(' ')?;
    Some((at.parse().ok()?, DeleteHow::from_label(how)?))
}

/// Whether an actor was deleted, from positive evidence only (actingweb's
/// lesson): a reset at the head of its history, with the marker its empty
/// database carries. Absence of history is never "deleted".
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum DeletionStatus {
    /// The head is a reset: deleted at `at_ms` (ms since the epoch), by `how`
    /// (`self`, `self_durable`; `unknown` for a reset without a marker).
    Deleted {
        /// When, on the deleting node's clock.
        at_ms: u64,
        /// How.
        how: String,
    },
    /// No evidence of a delete: no history, or a head that is not a reset.
    NotDeleted,
    /// The bucket could not be read; neither answer is known.
    Unknown {
        /// Why.
        reason: String,
    },
}
