//! What the guard learns from a guest statement's text alone (VACUUM, an
//! empty text, a rename), kept for the last text seen: an actor runs the
//! same statement over and over, and each of the checks scans the text.

use std::cell::RefCell;

/// The checks of one SQL text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TextChecks {
    /// It has the keyword VACUUM (refused).
    pub(super) vacuum: bool,
    /// Nothing but spaces and semicolons (refused as SQLite would).
    pub(super) empty: bool,
    /// It has the letters RENAME: checked again after it runs.
    pub(super) renames: bool,
}

impl TextChecks {
    /// Scans `sql`.
    pub(super) fn of(sql: &str) -> Self {
        Self {
            vacuum: super::guard::mentions_vacuum(sql),
            empty: sql.trim().trim_matches(';').trim().is_empty(),
            renames: sql.as_bytes().windows(6).any(|w| w.eq_ignore_ascii_case(b"RENAME")),
        }
    }
}

/// The last text checked and its checks.
#[derive(Debug, Default)]
pub(super) struct LastText(RefCell<Option<(String, TextChecks)>>);

impl LastText {
    /// The checks of `sql`, scanned only when it differs from the last text.
    pub(super) fn checks(&self, sql: &str) -> TextChecks {
        let mut last = self.0.borrow_mut();
        if let Some((text, checks)) = last.as_ref()
            && text == sql
        {
            return *checks;
        }
        let checks = TextChecks::of(sql);
        match last.as_mut() {
            Some((text, c)) => {
                // The allocation is reused when the new text fits.
                text.clear();
                text.push_str(sql);
                *c = checks;
            }
            None => *last = Some((sql.to_owned(), checks)),
        }
        checks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remembered_checks_are_those_of_the_text_asked() {
        let last = LastText::default();
        let texts = [
            "INSERT INTO t(x) VALUES (?1)",
            "vacuum",
            "INSERT INTO t(x) VALUES (?1)",
            " ; ;",
            "ALTER TABLE t RENAME TO u",
            "ALTER TABLE t RENAME TO u",
            "SELECT 'vacuum'",
            "INSERT INTO t(x) VALUES (?1)",
        ];
        for sql in texts {
            assert_eq!(last.checks(sql), TextChecks::of(sql), "{sql}");
        }
        assert!(TextChecks::of("VACUUM").vacuum);
        assert!(!TextChecks::of("SELECT 'vacuum'").vacuum);
        assert!(TextChecks::of(" ; ").empty);
        assert!(TextChecks::of("alter table t rename to u").renames);
    }
}
