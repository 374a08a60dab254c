//! Paths of this run written as placeholders in saved inputs, and back.

use super::SqlGuardTarget;

impl SqlGuardTarget {
    fn replacements(&self) -> Vec<(String, &'static str)> {
        let own = self.rt.admin().db_path(&self.key);
        let tmp = std::env::temp_dir().display().to_string();
        vec![
            (own.display().to_string(), "{OWN_DB}"),
            (self.data.path().display().to_string(), "{DATA}"),
            (self.cwd.path().display().to_string(), "{CWD}"),
            (self.outside.path().display().to_string(), "{OUTSIDE}"),
            (
                format!("{}/{}", tmp.trim_end_matches('/'), self.prefix),
                "{TMP}/{PREFIX}",
            ),
            (self.prefix.clone(), "{PREFIX}"),
        ]
    }

    pub(super) fn placeholders(&self, text: &str) -> String {
        let mut t = text.to_owned();
        for (real, ph) in self.replacements() {
            t = t.replace(&real, ph);
        }
        t
    }

    pub(super) fn expand(&self, text: &str) -> String {
        let mut t = text.to_owned();
        for (real, ph) in self.replacements() {
            t = t.replace(ph, &real);
        }
        t
    }
}
