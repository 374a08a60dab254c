//! What a node does with its replicas (cluster mode): take an actor (acquire,
//! restore, decide whether the local files are the bucket's head), upload after
//! events, and give an actor up after a failure.

use crate::address::ActorKey;
use crate::replica::{Acquired, Replica};
use crate::runtime::Shared;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where an actor is, once a node tried to take it.
pub(crate) enum Taken {
    /// This node holds it; its local database is the bucket's head.
    Here(Box<Replica>),
    /// It has no history and the event may not create it.
    Absent,
    /// Another live node holds it: the event goes there.
    Elsewhere(Arc<Shared>),
}

fn sidecar(db: &Path, ext: &str) -> PathBuf {
    let mut p = db.as_os_str().to_owned();
    p.push(ext);
    PathBuf::from(p)
}

/// The file that says which bucket position the local database equals.
fn head_file(db: &Path) -> PathBuf {
    sidecar(db, ".head")
}

/// Records that the local database equals the bucket's `head`.
pub(crate) fn note_head(shared: &Shared, key: &ActorKey, head: Option<crate::replica::Pos>) {
    let db = shared.state.db_path(key);
    match head {
        Some(h) => {
            let _ = std::fs::write(head_file(&db), h.to_string());
        }
        None => {
            let _ = std::fs::remove_file(head_file(&db));
        }
    }
}

/// The local files are no longer known to be the head (a failed upload): the
/// next take sets them aside.
pub(crate) fn forget_head(shared: &Shared, key: &ActorKey) {
    let _ = std::fs::remove_file(head_file(&shared.state.db_path(key)));
}

/// Moves a local database that is not the bucket's head out of the way, as
/// `<name>.db.replaced` (ADR 0028 §1).
fn set_aside(db: &Path) -> std::io::Result<()> {
    let (wal, shm) = crate::state_store::sidecars(db);
    std::fs::rename(db, sidecar(db, ".replaced"))?;
    if wal.exists() {
        std::fs::rename(&wal, sidecar(db, ".replaced-wal"))?;
    }
    let _ = std::fs::remove_file(shm);
    let _ = std::fs::remove_file(head_file(db));
    Ok(())
}

fn write_image(db: &Path, image: &[u8]) -> std::io::Result<()> {
    let (wal, shm) = crate::state_store::sidecars(db);
    let _ = std::fs::remove_file(wal);
    let _ = std::fs::remove_file(shm);
    let tmp = sidecar(db, ".restoring");
    std::fs::write(&tmp, image)?;
    std::fs::File::open(&tmp)?.sync_all()?;
    std::fs::rename(&tmp, db)
}

/// Takes `key` on this node: acquire and restore, or find who holds it.
pub(crate) fn take(
    shared: &Arc<Shared>,
    key: &ActorKey,
    create: bool,
    unchanged: Option<&crate::bucket::ETag>,
) -> Result<Taken, String> {
    let Some(c) = &shared.cluster else {
        return Err("host bug: take() on a single node".into());
    };
    let live = c.live();
    if !live(&c.node) {
        return Err(format!(
            "node {} is cut off from the cluster: send the event to another node",
            c.node
        ));
    }
    // No node brings a deleted app back: nothing is acquired under a tombstone.
    match crate::app_delete::read_tombstone(c.bucket.as_ref(), &key.app) {
        Ok(None) => {}
        Ok(Some(t)) => {
            return Err(format!(
                "app {} was deleted (at {} ms, by {}): nothing of it is served",
                key.app, t.at_ms, t.by
            ));
        }
        Err(e) => return Err(format!("reading the tombstone of {}: {e}", key.app)),
    }
    let mut replica = Replica::new(c.bucket.clone(), c.faults.clone(), key.clone(), c.node.clone());
    let acquired = match unchanged {
        // Idle expiry: only the record exactly as listed; changed or held → not taken.
        Some(etag) => match replica.acquire_unchanged(etag, &live) {
            Ok(None) => return Ok(Taken::Absent),
            Ok(Some(a)) => Ok(a),
            Err(e) => Err(e),
        },
        None => replica.acquire(&live),
    };
    match acquired {
        Err(e) => Err(format!("{key} could not be acquired on node {}: {e}", c.node)),
        Ok(Acquired::HeldBy(n)) => match c.cluster.node(&n) {
            Some(s) if !Arc::ptr_eq(&s, shared) => Ok(Taken::Elsewhere(s)),
            _ => Err(format!(
                "{key} is held by node {n}, which does not answer; retry once its hold lapses"
            )),
        },
        Ok(Acquired::Held { image, head }) => {
            if image.is_none() && !create {
                let _ = replica.release();
                return Ok(Taken::Absent);
            }
            let db = shared.state.db_path(key);
            let local_head = std::fs::read_to_string(head_file(&db)).ok();
            let is_head = db.exists() && replica.head().is_some() && local_head == head.map(|h| h.to_string());
            if !is_head {
                shared
                    .state
                    .prepare(key)
                    .map_err(|e| format!("creating the directory of {key}: {e}"))?;
                if db.exists() {
                    set_aside(&db).map_err(|e| format!("setting aside the stale local copy of {key}: {e}"))?;
                }
                match &image {
                    Some(img) => write_image(&db, img).map_err(|e| format!("restoring {key}: {e}"))?,
                    None => forget_head(shared, key),
                }
            }
            note_head(shared, key, replica.head());
            Ok(Taken::Here(Box::new(replica)))
        }
    }
}

/// Whether the actor has a history in the bucket (cluster) or files (one node).
pub(crate) fn exists(shared: &Shared, key: &ActorKey) -> bool {
    match &shared.cluster {
        Some(c) => c
            .bucket
            .list(&crate::cluster::keys::history_prefix(key))
            .map(|l| !l.is_empty())
            .unwrap_or(false),
        None => shared.state.exists(key),
    }
}
