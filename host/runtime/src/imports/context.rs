//! `wasmkeep:actor/context`: who the actor is, the time, and its logs and
//! reports (cut to what one line or report may hold).

use super::HostState;
use super::R;
use crate::bindings::context;
use crate::bindings::types;
use crate::deletion::{DeleteHow, parse_deletion_record};

/// The longest log line kept whole.
const MAX_LOG_LINE: usize = 8 << 10;
/// The longest failure report kept whole (a deep stack fits; the answer
/// keeps its head and tail lines anyway).
const MAX_REPORT: usize = 64 << 10;

impl context::Host for HostState {
    fn self_address(&mut self) -> R<types::Address> {
        Ok(types::Address {
            class: self.key.class.clone(),
            name: self.key.name.clone(),
        })
    }

    fn app(&mut self) -> R<String> {
        Ok(self.key.app.clone())
    }

    fn now(&mut self) -> R<u64> {
        Ok(self.clock.now_ms())
    }

    fn previous_deletion(&mut self) -> R<Option<context::Deletion>> {
        use context::DeletionCause as C;
        let Some((at, how)) = self.actor.previous_deletion().and_then(parse_deletion_record) else {
            return Ok(None);
        };
        let cause = match how {
            DeleteHow::SelfDelete => C::DeleteSelf,
            DeleteHow::SelfDurable => C::DeleteSelfDurable,
            DeleteHow::Operator => C::Operator,
            DeleteHow::Expired => C::Expired,
        };
        Ok(Some(context::Deletion { at, cause }))
    }

    fn report_failure(&mut self, report: context::FailureReport) -> R<()> {
        let mut text = report.message;
        if !report.detail.trim().is_empty() {
            text.push('\n');
            text.push_str(&report.detail);
        }
        cut_at(&mut text, MAX_REPORT);
        self.ev.failure_report = Some(text);
        Ok(())
    }

    fn log(&mut self, level: context::LogLevel, mut message: String) -> R<()> {
        cut_at(&mut message, MAX_LOG_LINE);
        let actor = &self.key;
        match level {
            context::LogLevel::Debug => tracing::debug!(target: "actor", %actor, "{message}"),
            context::LogLevel::Info => tracing::info!(target: "actor", %actor, "{message}"),
            context::LogLevel::Warn => tracing::warn!(target: "actor", %actor, "{message}"),
            context::LogLevel::Error => tracing::error!(target: "actor", %actor, "{message}"),
        }
        self.node.log(&self.key, level_name(level), &message);
        Ok(())
    }
}

fn level_name(l: context::LogLevel) -> &'static str {
    match l {
        context::LogLevel::Debug => "debug",
        context::LogLevel::Info => "info",
        context::LogLevel::Warn => "warn",
        context::LogLevel::Error => "error",
    }
}

/// Cuts `text` to at most `max` bytes (on a character boundary), saying so.
fn cut_at(text: &mut String, max: usize) {
    if text.len() > max {
        let mut cut = max;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str(&format!(" … (cut at {} KiB)", max >> 10));
    }
}
