//! Each app's retention window, as its manifest set it (ADR 064): how far
//! back every acknowledged state stays restorable. Set when an app loads,
//! read when an actor opens.

use std::collections::HashMap;
use std::sync::RwLock;
use std::time::Duration;

/// The window of an app whose manifest names none: seven days.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(7 * 86_400);

/// Retention windows by app.
#[derive(Debug, Default)]
pub(crate) struct RetentionWindows {
    by_app: RwLock<HashMap<String, Duration>>,
}

impl RetentionWindows {
    /// Sets `app`'s window.
    pub(crate) fn set(&self, app: &str, window: Duration) {
        self.by_app
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(app.to_owned(), window);
    }

    /// `app`'s window in milliseconds ([`DEFAULT_RETENTION`] if none was set).
    pub(crate) fn window_ms(&self, app: &str) -> u64 {
        let window = self
            .by_app
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(app)
            .copied()
            .unwrap_or(DEFAULT_RETENTION);
        u64::try_from(window.as_millis()).unwrap_or(u64::MAX)
    }
}
