//! The last lines actors logged, for the admin API and the dashboard. The
//! book owns its lock and hands out copies.

use serde::Serialize;
use std::collections::VecDeque;
use std::sync::Mutex;

/// How many lines the book keeps; the oldest go first.
const KEPT: usize = 1000;

/// A log line an actor wrote.
#[derive(Debug, Clone, Serialize)]
pub struct LogLine {
    /// When, on the host's clock (ms since the epoch; virtual under tests).
    pub at: u64,
    /// The actor.
    pub actor: String,
    /// debug, info, warn, error.
    pub level: &'static str,
    /// The text.
    pub message: String,
}

/// The last [`KEPT`] lines.
#[derive(Default)]
pub(crate) struct LogBook {
    lines: Mutex<VecDeque<LogLine>>,
}

impl LogBook {
    /// Keeps `line`, dropping the oldest past [`KEPT`].
    pub(crate) fn record(&self, line: LogLine) {
        let mut lines = crate::unpoisoned::lock(&self.lines);
        if lines.len() >= KEPT {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The lines kept, oldest first.
    pub(crate) fn lines(&self) -> Vec<LogLine> {
        crate::unpoisoned::lock(&self.lines).iter().cloned().collect()
    }
}
