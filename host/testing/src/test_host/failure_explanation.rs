//! The logs-on-failure rule, for every harness: an answer of 500 or more
//! comes with what explains it (the request, and what the actor logged), so
//! a failing test shows why without a second run. Each harness prints the
//! text in its own language (so its test framework captures it); under chaos
//! a 5xx is expected, so the text is kept and shown only for the seed that
//! fails ([`TestHost::fail_chaos`]).

use super::*;

/// Set to anything but `0`, no harness prints what explains a 5xx.
pub const QUIET_VAR: &str = "WASMKEEP_HARNESS_QUIET";

/// The most log lines an explanation shows (the last ones).
const MOST_LINES: usize = 50;

impl TestHost {
    /// What explains an answer of `status` to `method path` sent to `key`
    /// (on node `node`, when the test named one): `None` below 500, under
    /// chaos (kept for [`TestHost::fail_chaos`]), or with
    /// [`QUIET_VAR`] set.
    pub(super) fn explain_answer(
        &self,
        key: &ActorKey,
        method: &str,
        path: &str,
        node: Option<usize>,
        status: u16,
    ) -> Option<String> {
        if status < 500 || std::env::var_os(QUIET_VAR).is_some_and(|v| v != "0") {
            return None;
        }
        let text = self.explanation(key, method, path, node, status);
        match lock(&self.chaos).as_mut() {
            Some(chaos) => {
                chaos.explanations.push(text);
                None
            }
            None => Some(text),
        }
    }

    fn explanation(&self, key: &ActorKey, method: &str, path: &str, node: Option<usize>, status: u16) -> String {
        use std::fmt::Write as _;
        let lines = self.logs_of(key).unwrap_or_default();
        let shown = &lines[lines.len().saturating_sub(MOST_LINES)..];
        let on = node.map(|n| format!(" on node {n}")).unwrap_or_default();
        let mut text = format!("wasmkeep: {method} {path} to {key}{on} answered {status}; ");
        if lines.is_empty() {
            text.push_str("the actor logged nothing\n");
        } else if shown.len() < lines.len() {
            let _ = writeln!(
                text,
                "what the actor logged (the last {} of {} lines):",
                shown.len(),
                lines.len()
            );
        } else {
            text.push_str("what the actor logged:\n");
        }
        for l in shown {
            let _ = writeln!(
                text,
                "  [{} {}] {}",
                l.level,
                l.actor,
                l.message.replace('\n', "\n    ")
            );
        }
        text
    }
}
