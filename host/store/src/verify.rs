//! The orphan sweep (`wasmkeep-shim verify`): finds what the deletion rules
//! should have removed and did not, and never deletes anything. It fails
//! closed (actingweb's lesson): a listing that fails, or an app whose owner
//! listing is empty while it has history, makes the whole report unknown
//! rather than clean.

use crate::address::ActorKey;
use crate::alarm_index::AlarmIndex;
use crate::bucket::ObjectStore;
use crate::operator::{Listed, REQUEST_TTL_MS};
use crate::replica::{Kind, parse_history_key};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One thing found that should not be there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Orphan {
    /// What kind of leftover it is.
    pub kind: String,
    /// Where: a bucket key or a file path.
    pub at: String,
}

/// What a sweep found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// Leftovers.
    pub orphans: Vec<Orphan>,
    /// Listings that failed or could not be trusted: the report is incomplete.
    pub failures: Vec<String>,
}

impl Report {
    /// The exit code: 2 when the sweep could not see everything (fail closed),
    /// 1 when it found orphans, 0 when clean.
    pub fn exit_code(&self) -> u8 {
        if !self.failures.is_empty() {
            2
        } else if !self.orphans.is_empty() {
            1
        } else {
            0
        }
    }

    fn orphan(&mut self, kind: &str, at: impl Into<String>) {
        self.orphans.push(Orphan {
            kind: kind.into(),
            at: at.into(),
        });
    }
}

/// Sweeps a bucket: per app, history objects before a reset, and operator
/// delete requests and outcomes past their expiry. `now` is the bucket's clock.
pub fn sweep_bucket(bucket: &dyn ObjectStore, now: u64, report: &mut Report) {
    let all = match bucket.list(crate::keys::STATE_ROOT) {
        Ok(l) => l,
        Err(e) => return report.failures.push(format!("listing the bucket: {e}")),
    };
    let mut apps: Vec<String> = all
        .iter()
        .filter_map(|m| crate::keys::app_of_state_key(&m.key))
        .collect();
    apps.sort();
    apps.dedup();
    for app in apps {
        let history_prefix = crate::keys::history_of_app(&app);
        let has_history = all.iter().any(|m| m.key.starts_with(&history_prefix));
        match bucket.list(&crate::keys::owners_of_app(&app)) {
            Ok(owners) if owners.is_empty() && has_history => report.failures.push(format!(
                "app {app}: its owner listing came back empty while it has history; not trusted"
            )),
            Ok(_) => {}
            Err(e) => report.failures.push(format!("app {app}: listing owners: {e}")),
        }
        sweep_history(&all, &history_prefix, report);
        match crate::operator::list(bucket, &app) {
            Ok(listed) => {
                for l in listed {
                    match l {
                        Listed::Request(r) if r.t + REQUEST_TTL_MS < now => {
                            report.orphan("delete request past expiry", r.object);
                        }
                        Listed::Outcome { object, t } if t + REQUEST_TTL_MS < now => {
                            report.orphan("delete outcome past expiry", object);
                        }
                        _ => {}
                    }
                }
            }
            Err(e) => report.failures.push(format!("app {app}: listing delete requests: {e}")),
        }
    }
}

/// History objects before an actor's last reset (the erase after it failed).
fn sweep_history(all: &[crate::bucket::ObjectMeta], history_prefix: &str, report: &mut Report) {
    let mut by_actor: std::collections::BTreeMap<String, Vec<crate::replica::HistoryObject>> = Default::default();
    for m in all.iter().filter(|m| m.key.starts_with(history_prefix)) {
        let Some(rest) = m.key.strip_prefix(history_prefix) else {
            continue;
        };
        let mut parts = rest.splitn(3, '/');
        let (Some(class), Some(name), Some(_)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let prefix = format!("{history_prefix}{class}/{name}/");
        if let Some(o) = parse_history_key(&prefix, &m.key) {
            by_actor.entry(prefix).or_default().push(o);
        }
    }
    for objects in by_actor.values() {
        // The head's chain must reach a whole object: a page set whose
        // parent is gone lost what the states after it hold (ADR 064).
        if let Some(head) = crate::history_chain::head(objects)
            && let Err(e @ crate::history_chain::ChainError::Broken { .. }) =
                crate::history_chain::chain(objects, head.pos)
        {
            report.orphan("history whose chain is broken", e.to_string());
        }
        let Some(reset) = objects.iter().filter(|o| o.kind == Kind::Reset).map(|o| o.pos).max() else {
            continue;
        };
        for o in objects.iter().filter(|o| o.pos < reset) {
            report.orphan("history before a reset", o.key.clone());
        }
    }
}

/// Sweeps a node's data directory: `.db.replaced` files and removals left
/// unfinished (`.db.deleting`) always; in a cluster (`bucket` given), local
/// databases whose `.db.head` is not the bucket's head; on a single node,
/// alarm index entries of actors without an alarm.
pub fn sweep_node_dir(dir: &Path, bucket: Option<&dyn ObjectStore>, report: &mut Report) {
    let state = dir.join("state");
    let mut files = Vec::new();
    collect_files(&state, &mut files);
    for f in &files {
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.contains(".db.replaced") {
            report.orphan("set-aside local copy (.db.replaced)", f.display().to_string());
        } else if name.ends_with(".db.deleting") {
            // The marker may still hold the database's pages (a crash
            // between its rename and its record, ADR 053); the host finishes
            // the removal only when the actor is next used.
            report.orphan(
                "removal left unfinished (.db.deleting; the actor's next event finishes it)",
                f.display().to_string(),
            );
        }
    }
    match bucket {
        Some(bucket) => sweep_local_heads(&state, &files, bucket, report),
        None => sweep_alarm_index(dir, report),
    }
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect_files(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// `state/<tenant>/<app>/<class>/<encoded name>.db` → the actor (a
/// shortened name is read from inside the database).
fn actor_of(state: &Path, db: &Path) -> Option<ActorKey> {
    let rel = db.strip_prefix(state).ok()?;
    let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let [tenant, app, class, file] = parts.as_slice() else {
        return None;
    };
    crate::state_store::actor_of_file(&format!("{tenant}/{app}"), class, file.strip_suffix(".db")?, db)
}

fn sweep_local_heads(state: &Path, files: &[PathBuf], bucket: &dyn ObjectStore, report: &mut Report) {
    for db in files.iter().filter(|f| f.extension().is_some_and(|e| e == "db")) {
        let Some(key) = actor_of(state, db) else { continue };
        let prefix = crate::keys::history_prefix(&key);
        let listing = match bucket.list(&prefix) {
            Ok(l) => l,
            Err(e) => {
                report.failures.push(format!("listing the history of {key}: {e}"));
                continue;
            }
        };
        let head = listing
            .iter()
            .filter_map(|m| parse_history_key(&prefix, &m.key))
            .filter(|o| o.kind != Kind::Snapshot)
            .map(|o| o.pos)
            .max();
        let mut head_file = db.as_os_str().to_owned();
        head_file.push(".head");
        let local = std::fs::read_to_string(PathBuf::from(head_file)).ok();
        if head.map(|h| h.to_string()) != local.map(|l| l.trim().to_owned()) {
            report.orphan("local database that is not the bucket's head", db.display().to_string());
        }
    }
}

fn sweep_alarm_index(dir: &Path, report: &mut Report) {
    let path = dir.join("alarms.db");
    if !path.exists() {
        return;
    }
    let index = match crate::alarm_index::SqliteAlarmIndex::open(&path) {
        Ok(i) => i,
        Err(e) => return report.failures.push(format!("opening {}: {e}", path.display())),
    };
    let entries = match index.due(u64::MAX) {
        Ok(e) => e,
        Err(e) => return report.failures.push(format!("reading {}: {e}", path.display())),
    };
    let store = crate::state_store::LocalStateStore::new(dir, std::sync::Arc::default());
    for (key, _) in entries {
        use crate::state_store::StateStore as _;
        let db = store.db_path(&key);
        let has_alarm = db.exists()
            && rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .and_then(|c| {
                    c.query_row("SELECT count(*) FROM _wasmkeep_meta WHERE key = 'alarm'", [], |r| {
                        r.get::<_, i64>(0)
                    })
                })
                .map(|n| n > 0)
                .unwrap_or(true); // Unreadable: not shown to be an orphan.
        if !has_alarm {
            report.orphan("alarm index entry of an actor without an alarm", key.to_string());
        }
    }
}

/// A finished sweep's report, kept so that a rerun can replay it.
#[derive(Debug, Serialize, Deserialize)]
pub struct Checkpoint {
    /// When the sweep finished (ms since the epoch).
    pub finished_at: u64,
    /// Its report.
    pub report: Report,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::ActorKey;
    use crate::bucket::{MemoryBucket, PutCondition};
    use crate::clock::VirtualClock;
    use crate::history::{Kind, Pos, pages_key, whole_key};
    use crate::page_set::PageSet;
    use std::sync::Arc;

    #[test]
    fn a_page_set_whose_parent_is_gone_is_reported_and_a_whole_chain_is_not() {
        let bucket = MemoryBucket::new(Arc::new(VirtualClock::default()));
        let key = ActorKey::new("t/app", "c", "a");
        let prefix = crate::keys::history_prefix(&key);
        let p = |generation, seq| Pos { generation, seq };
        let put = |k: String, body: Vec<u8>| bucket.put(&k, &body, &PutCondition::IfAbsent).expect("put");
        put(whole_key(&prefix, p(1, 0), 1, Kind::Segment), Vec::new());
        put(pages_key(&prefix, p(1, 1), 2, p(1, 0)), PageSet::new(512, 1).encode());
        let mut report = Report::default();
        sweep_bucket(&bucket, 10, &mut report);
        assert!(
            report.orphans.iter().all(|o| o.kind != "history whose chain is broken"),
            "{:?}",
            report.orphans
        );
        // The head's parent erased: what the head holds is lost.
        put(pages_key(&prefix, p(1, 3), 3, p(1, 2)), PageSet::new(512, 1).encode());
        let mut report = Report::default();
        sweep_bucket(&bucket, 10, &mut report);
        assert!(
            report.orphans.iter().any(|o| o.kind == "history whose chain is broken"),
            "{:?}",
            report.orphans
        );
    }
}
