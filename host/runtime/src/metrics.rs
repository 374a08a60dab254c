//! Counters the host exposes in Prometheus text at `/metrics`, with ADR 0028's names.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;

/// The host's counters.
#[derive(Debug, Default)]
pub struct Metrics {
    /// By name, then label: a count of an existing series allocates nothing
    /// (every event counts one, ADR 048).
    counters: Mutex<BTreeMap<&'static str, BTreeMap<String, u64>>>,
    /// A node process's bucket requests, by verb and purpose (issue 57).
    bucket_requests: std::sync::OnceLock<std::sync::Arc<crate::counting_bucket::RequestCounts>>,
}

/// `wasmkeep_bucket_requests_total{verb,purpose}`: a node process's requests
/// to its bucket, by verb (get, put, delete, list) and what they are for.
pub const BUCKET_REQUESTS_TOTAL: &str = "wasmkeep_bucket_requests_total";

/// `wasmkeep_idle_expiry_candidates_total`: idle expiry candidates found, summed over passes.
pub const EXPIRY_CANDIDATES_TOTAL: &str = "wasmkeep_idle_expiry_candidates_total";

/// `wasmkeep_actor_deletes_total{how}`: deletes recorded.
pub const DELETES_TOTAL: &str = "wasmkeep_actor_deletes_total";
/// `wasmkeep_actor_delete_failures_total{how}`: deletes that failed to be recorded.
pub const DELETE_FAILURES_TOTAL: &str = "wasmkeep_actor_delete_failures_total";
/// `wasmkeep_history_collect_failures_total`: erases after a delete that failed
/// (old history objects stay in the bucket; no restore uses them).
pub const HISTORY_COLLECT_FAILURES_TOTAL: &str = "wasmkeep_history_collect_failures_total";
/// `wasmkeep_events_total{kind}`: events run.
pub const EVENTS_TOTAL: &str = "wasmkeep_events_total";
/// `wasmkeep_event_failures_total{kind}`: events that trapped or ran out of time.
pub const EVENT_FAILURES_TOTAL: &str = "wasmkeep_event_failures_total";

/// `wasmkeep_resident_waits_total`: events whose actor waited for a resident
/// slot (the node was at its resident-actor cap).
pub const RESIDENT_WAITS_TOTAL: &str = "wasmkeep_resident_waits_total";
/// `wasmkeep_resident_refusals_total`: events refused with 503 because too
/// many actors waited for a resident slot already.
pub const RESIDENT_REFUSALS_TOTAL: &str = "wasmkeep_resident_refusals_total";

/// `wasmkeep_mailbox_refusals_total`: events from outside refused because
/// their actor's mailbox was full.
pub const MAILBOX_REFUSALS_TOTAL: &str = "wasmkeep_mailbox_refusals_total";

/// `wasmkeep_requests_run_here_total`: requests run on the thread that
/// received them, without a hand-off to their actor's worker (ADR 048).
pub const REQUESTS_RUN_HERE_TOTAL: &str = "wasmkeep_requests_run_here_total";

/// Counters with one series and no label.
const UNLABELLED: &[&str] = &[
    REQUESTS_RUN_HERE_TOTAL,
    HISTORY_COLLECT_FAILURES_TOTAL,
    EXPIRY_CANDIDATES_TOTAL,
    RESIDENT_WAITS_TOTAL,
    RESIDENT_REFUSALS_TOTAL,
    MAILBOX_REFUSALS_TOTAL,
];

const HELP: &[(&str, &str)] = &[
    (
        DELETES_TOTAL,
        "Actor deletes recorded, by how (self, self_durable, operator, expired).",
    ),
    (
        DELETE_FAILURES_TOTAL,
        "Actor deletes that failed to be recorded, by how.",
    ),
    (
        HISTORY_COLLECT_FAILURES_TOTAL,
        "Collections after a delete that failed (old history objects left in the bucket).",
    ),
    (EVENTS_TOTAL, "Events run, by kind."),
    (EVENT_FAILURES_TOTAL, "Events that trapped or ran out of time, by kind."),
    (
        EXPIRY_CANDIDATES_TOTAL,
        "Idle expiry candidates found (records idle past their class's limit), summed over passes.",
    ),
    (
        RESIDENT_WAITS_TOTAL,
        "Events whose actor waited for a resident slot (the node at its resident-actor cap).",
    ),
    (
        RESIDENT_REFUSALS_TOTAL,
        "Events refused with 503 because too many actors waited for a resident slot.",
    ),
    (
        MAILBOX_REFUSALS_TOTAL,
        "Events from outside refused because their actor's mailbox was full.",
    ),
    (
        REQUESTS_RUN_HERE_TOTAL,
        "Requests run on the thread that received them, without a hand-off to their actor's worker.",
    ),
];

impl Metrics {
    /// Adds one to `name{label}`.
    pub fn inc(&self, name: &'static str, label: &str) {
        self.add(name, label, 1);
    }

    /// Adds `n` to `name{label}`.
    pub fn add(&self, name: &'static str, label: &str, n: u64) {
        let mut c = crate::unpoisoned::lock(&self.counters);
        let series = c.entry(name).or_default();
        match series.get_mut(label) {
            Some(v) => *v += n,
            None => {
                series.insert(label.to_owned(), n);
            }
        }
    }

    /// The value of `name{label}`.
    pub fn get(&self, name: &str, label: &str) -> u64 {
        let c = crate::unpoisoned::lock(&self.counters);
        c.get(name).and_then(|s| s.get(label)).copied().unwrap_or(0)
    }

    /// Shows `counts` as [`BUCKET_REQUESTS_TOTAL`] (once: a node process's
    /// bucket, counted from its start).
    pub fn show_bucket_requests(&self, counts: std::sync::Arc<crate::counting_bucket::RequestCounts>) {
        let _ = self.bucket_requests.set(counts);
    }

    /// Prometheus text exposition of every counter. The delete metrics are
    /// always present (at 0) for both `how` values so that dashboards see them.
    pub fn render(&self) -> String {
        let c = crate::unpoisoned::lock(&self.counters);
        let mut out = String::new();
        for (name, help) in HELP {
            let label_name = if name.starts_with("wasmkeep_actor_delete") {
                "how"
            } else {
                "kind"
            };
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
            let mut rows: BTreeMap<String, u64> = c.get(name).cloned().unwrap_or_default();
            if label_name == "how" {
                for how in [
                    crate::deletion::DeleteHow::SelfDelete,
                    crate::deletion::DeleteHow::SelfDurable,
                    crate::deletion::DeleteHow::Operator,
                    crate::deletion::DeleteHow::Expired,
                ] {
                    rows.entry(how.label().to_owned()).or_insert(0);
                }
            }
            if UNLABELLED.contains(name) {
                // One series, no label.
                let _ = writeln!(out, "{name} {}", rows.values().sum::<u64>());
                continue;
            }
            for (label, v) in rows {
                let _ = writeln!(out, "{name}{{{label_name}=\"{label}\"}} {v}");
            }
        }
        if let Some(counts) = self.bucket_requests.get() {
            let name = BUCKET_REQUESTS_TOTAL;
            let _ = writeln!(
                out,
                "# HELP {name} Requests to the bucket, by verb and what they are for.\n# TYPE {name} counter"
            );
            for (verb, purpose, n) in counts.nonzero() {
                let _ = writeln!(
                    out,
                    "{name}{{verb=\"{}\",purpose=\"{}\"}} {n}",
                    verb.name(),
                    purpose.name()
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delete_metrics_are_rendered_even_at_zero() {
        let m = Metrics::default();
        let text = m.render();
        assert!(
            text.contains("wasmkeep_actor_deletes_total{how=\"self_durable\"} 0"),
            "{text}"
        );
        assert!(
            text.contains("wasmkeep_actor_delete_failures_total{how=\"self\"} 0"),
            "{text}"
        );
        m.inc(DELETES_TOTAL, "self_durable");
        assert!(
            m.render()
                .contains("wasmkeep_actor_deletes_total{how=\"self_durable\"} 1"),
            "a recorded delete counts once"
        );
    }
}
