//! A spinner with what is happening and the elapsed time, for the CLI's long
//! steps (loading an app's classes, waiting on a delete). indicatif draws it
//! only when stderr is a terminal: in CI and pipes the output is unchanged.

use indicatif::{ProgressBar, ProgressStyle};
use std::time::Duration;

/// A running spinner; it is cleared when finished or dropped.
pub(crate) struct Spinner(ProgressBar);

impl Spinner {
    /// Starts a spinner saying `what` (e.g. "loading 8 classes").
    pub(crate) fn start(what: impl Into<String>) -> Self {
        let bar = ProgressBar::new_spinner();
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} {elapsed}") {
            bar.set_style(style);
        }
        bar.set_message(what.into());
        bar.enable_steady_tick(Duration::from_millis(100));
        Self(bar)
    }

    /// Says what is happening now.
    pub(crate) fn say(&self, what: impl Into<String>) {
        self.0.set_message(what.into());
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}
