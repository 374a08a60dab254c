//! One node of a cluster: the bucket's history is the actor's state and the
//! local database a cache of its head. Taking an actor acquires it, restores
//! the head (setting aside a local copy that is not the head), and fences;
//! writes are durable once an upload is acknowledged; a delete is a reset on
//! the head, then the history before it is erased (ADR 0028 §1–2, ADR 006).

use super::error::StorageError;
use super::holding::Holding;
use super::open_actor::OpenActor;
use super::removal::finish_unfinished_removal;
use super::retention::RetentionWindows;
use super::seam::{ActorStorage, OpenMode, Opened};
use crate::actor_db::{ActorDb, PageChange};
use crate::address::ActorKey;
use crate::bucket::ObjectStore;
use crate::cluster::Cluster;
use crate::deletion::DeletionStatus;
use crate::faults::Faults;
use crate::metrics::{HISTORY_COLLECT_FAILURES_TOTAL, Metrics};
use crate::replica::{Acquired, Kind, Pos, Replica, parse_history_key};
use crate::state_store::StateStore;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Actors of one cluster node.
pub(crate) struct ClusterStorage {
    node: String,
    cluster: Arc<Cluster>,
    /// The bucket as this node reaches it (through its own faults).
    bucket: Arc<dyn ObjectStore>,
    faults: Arc<Faults>,
    files: Arc<dyn StateStore>,
    metrics: Arc<Metrics>,
    retention: Arc<RetentionWindows>,
}

impl ClusterStorage {
    /// Storage for `node` of `cluster`, reaching the bucket as `bucket`.
    pub(crate) fn new(
        node: String,
        cluster: Arc<Cluster>,
        bucket: Arc<dyn ObjectStore>,
        faults: Arc<Faults>,
        files: Arc<dyn StateStore>,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            node,
            cluster,
            bucket,
            faults,
            files,
            metrics,
            retention: Arc::new(RetentionWindows::default()),
        }
    }

    /// The cluster's virtual clock (the contract test moves it).
    #[cfg(test)]
    pub(super) fn clock_for_tests(&self) -> &crate::clock::VirtualClock {
        self.cluster.clock().as_virtual().expect("a virtual clock")
    }

    /// Acquires `key` and makes the local database the bucket's head.
    fn take(&self, key: &ActorKey, mode: &OpenMode) -> Result<Option<Replica>, StorageError> {
        // Looking first writes nothing: acquiring fences, and a fence on a
        // deleted actor's reset would hide the evidence of its deletion.
        if !matches!(mode, OpenMode::Create) && !self.exists(key)? {
            return Ok(None);
        }
        let live = |n: &str| self.cluster.is_live(n);
        let mut replica = Replica::new(self.bucket.clone(), self.faults.clone(), key.clone(), self.node.clone())
            .with_clock(self.cluster.clock().clone());
        replica.set_broken(self.cluster.broken());
        let acquire_failed = |source| StorageError::Bucket {
            what: format!("{key} could not be acquired on node {}", self.node),
            source,
        };
        let acquired = match mode {
            // Idle expiry: only the record exactly as listed; changed or held → not taken.
            OpenMode::Unchanged(etag) => match replica.acquire_unchanged(etag, &live).map_err(acquire_failed)? {
                None => return Ok(None),
                Some(a) => a,
            },
            OpenMode::Create | OpenMode::Existing => replica.acquire(&live).map_err(acquire_failed)?,
        };
        let (image, head, deleted) = match acquired {
            Acquired::HeldBy(node) => {
                return Err(StorageError::HolderUnreachable {
                    key: key.clone(),
                    node,
                    address: None,
                });
            }
            Acquired::Held { image, head, deleted } => (image, head, deleted),
        };
        // A deleted actor exists no more than one never created (as on a single node).
        if (image.is_none() || deleted) && !matches!(mode, OpenMode::Create) {
            let _ = replica.release();
            return Ok(None);
        }
        let db = self.files.db_path(key);
        let local_head = std::fs::read_to_string(head_file(&db)).ok();
        let is_head = db.exists() && replica.head().is_some() && local_head == head.map(|h| h.to_string());
        if !is_head {
            let files = |what: String| move |source| StorageError::Files { what, source };
            self.files
                .prepare(key)
                .map_err(files(format!("creating the directory of {key}")))?;
            if db.exists() {
                set_aside(&db).map_err(files(format!("setting aside the stale local copy of {key}")))?;
            }
            match &image {
                Some(img) => super::write_restored(&db, img).map_err(files(format!("restoring {key}")))?,
                None => forget_head(&db),
            }
            // The head is here now: the copy set aside is nobody's state, and
            // may hold what a delete removed (issue 57).
            remove_set_aside(&db);
        }
        note_head(&db, replica.head());
        Ok(Some(replica))
    }
}

/// What a node's start found among its local copies (issue 57).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LocalCopies {
    /// Actors whose set-aside copies (`.db.replaced`, `.db.replaced-wal`) went.
    pub(crate) set_aside: usize,
    /// Local databases that were not the bucket's head, removed.
    pub(crate) not_the_head: usize,
    /// Removals of an actor's files left unfinished (`.db.deleting`), finished.
    pub(crate) removals: usize,
    /// Actors whose head could not be read: their copies stay until the
    /// actor is next taken here (which sets a stale one aside and removes it).
    pub(crate) unread: usize,
}

impl ClusterStorage {
    /// At the node's start, before it takes any actor: every local copy that
    /// is not the bucket's head goes, once a listing of that actor's history
    /// says what the head is (issue 57). A copy set aside by an earlier take
    /// (`.db.replaced`) is never read again; a database whose `.db.head` is
    /// not the head (its actor taken over by another node while this one was
    /// down, perhaps deleted since) would only be set aside by the next take
    /// here. Either may hold rows a delete removed, which must not stay on
    /// this node's disk. A copy that is the head stays (the next take uses
    /// it). A removal left unfinished (`.db.deleting`) is finished. Listings
    /// go 8 at a time; an actor whose listing fails keeps its copies.
    pub(crate) fn clean_local_copies(&self, state: &Path) -> LocalCopies {
        let found = local_copies(state);
        let next = std::sync::atomic::AtomicUsize::new(0);
        let total = std::sync::Mutex::new(LocalCopies::default());
        std::thread::scope(|scope| {
            for _ in 0..found.len().min(8) {
                scope.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(copy) = found.get(i) else { break };
                        let done = self.clean_copy(copy);
                        let mut t = crate::unpoisoned::lock(&total);
                        t.set_aside += done.set_aside;
                        t.not_the_head += done.not_the_head;
                        t.removals += done.removals;
                        t.unread += done.unread;
                    }
                });
            }
        });
        total.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn clean_copy(&self, copy: &LocalCopy) -> LocalCopies {
        let mut done = LocalCopies::default();
        if copy.removal_pending {
            if finish_unfinished_removal(self.files.as_ref(), &copy.key).is_ok() {
                done.removals = 1;
            }
            if !copy.set_aside {
                return done;
            }
        }
        let prefix = crate::keys::history_prefix(&copy.key);
        let head = match self.bucket.list(&prefix) {
            Ok(listing) => listing
                .iter()
                .filter_map(|m| parse_history_key(&prefix, &m.key))
                .filter(|o| o.kind != Kind::Snapshot)
                .map(|o| o.pos)
                .max(),
            Err(e) => {
                tracing::warn!(actor = %copy.key, "at start, listing its history to check the local copy: {e}");
                done.unread = 1;
                return done;
            }
        };
        let db = self.files.db_path(&copy.key);
        if copy.set_aside {
            remove_set_aside(&db);
            done.set_aside = 1;
        }
        if !copy.removal_pending && db.exists() {
            let local = std::fs::read_to_string(head_file(&db)).ok();
            if local.as_deref().map(str::trim) != head.map(|h| h.to_string()).as_deref() {
                match remove_stale(&db) {
                    Ok(()) => done.not_the_head = 1,
                    Err(e) => {
                        tracing::warn!(actor = %copy.key, "at start, removing a local copy that is not the head: {e}")
                    }
                }
            }
        }
        done
    }
}

/// One actor's local files as a node's start finds them.
struct LocalCopy {
    key: ActorKey,
    /// It has a `.db.replaced` or `.db.replaced-wal`.
    set_aside: bool,
    /// Its removal began and did not finish (`.db.deleting`).
    removal_pending: bool,
}

/// The actors under `state/<tenant>/<app>/<class>/` with a database, a copy
/// set aside, or a removal left unfinished.
fn local_copies(state: &Path) -> Vec<LocalCopy> {
    let mut out: std::collections::BTreeMap<PathBuf, LocalCopy> = std::collections::BTreeMap::new();
    let dirs = |p: &Path| std::fs::read_dir(p).into_iter().flatten().flatten().map(|e| e.path());
    for tenant in dirs(state).filter(|p| p.is_dir()) {
        for app in dirs(&tenant).filter(|p| p.is_dir()) {
            for class in dirs(&app).filter(|p| p.is_dir()) {
                for file in dirs(&class) {
                    let name = file
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    let (stem, set_aside, removal) = if let Some(s) = name.strip_suffix(".db.replaced") {
                        (s, true, false)
                    } else if let Some(s) = name.strip_suffix(".db.replaced-wal") {
                        (s, true, false)
                    } else if let Some(s) = name.strip_suffix(".db.deleting") {
                        (s, false, true)
                    } else if let Some(s) = name.strip_suffix(".db") {
                        (s, false, false)
                    } else {
                        continue;
                    };
                    let db = class.join(format!("{stem}.db"));
                    if let Some(copy) = out.get_mut(&db) {
                        copy.set_aside |= set_aside;
                        copy.removal_pending |= removal;
                        continue;
                    }
                    let app_name = format!(
                        "{}/{}",
                        tenant.file_name().unwrap_or_default().to_string_lossy(),
                        app.file_name().unwrap_or_default().to_string_lossy()
                    );
                    let class_name = class.file_name().unwrap_or_default().to_string_lossy().into_owned();
                    // A shortened name is read from inside the file (any of them holds a database's pages).
                    let Some(key) = crate::state_store::actor_of_file(&app_name, &class_name, stem, &file) else {
                        continue;
                    };
                    out.insert(
                        db,
                        LocalCopy {
                            key,
                            set_aside,
                            removal_pending: removal,
                        },
                    );
                }
            }
        }
    }
    out.into_values().collect()
}

impl ActorStorage for ClusterStorage {
    fn open(&self, key: &ActorKey, mode: OpenMode) -> Result<Opened, StorageError> {
        // The delete was counted when its reset was acknowledged.
        finish_unfinished_removal(self.files.as_ref(), key)?;
        if !self.cluster.is_live(&self.node) {
            return Err(StorageError::CutOff {
                node: self.node.clone(),
            });
        }
        // No node brings a deleted app back: nothing is acquired under a tombstone.
        match crate::app_delete::read_tombstone(self.bucket.as_ref(), &key.app) {
            Ok(None) => {}
            Ok(Some(t)) => {
                return Err(StorageError::AppDeleted {
                    app: key.app.clone(),
                    at_ms: t.at_ms,
                    by: t.by,
                });
            }
            Err(source) => {
                return Err(StorageError::TombstoneUnreadable {
                    app: key.app.clone(),
                    source,
                });
            }
        }
        let replica = match self.take(key, &mode) {
            Ok(Some(r)) => r,
            Ok(None) => return Ok(Opened::Absent),
            Err(StorageError::HolderUnreachable { node, .. }) if node != self.node && self.cluster.is_live(&node) => {
                return Ok(Opened::Elsewhere(node));
            }
            Err(e) => return Err(e),
        };
        let db_path = self.files.db_path(key);
        self.files.prepare(key).map_err(|source| StorageError::Files {
            what: format!("creating the directory of {key}"),
            source,
        })?;
        let db = ActorDb::open(&db_path).map_err(|e| StorageError::not_opened(key, e))?;
        db.track_pages().map_err(|e| StorageError::not_opened(key, e.into()))?;
        let holding = Replicated {
            replica,
            cluster: self.cluster.clone(),
            node: self.node.clone(),
            files: self.files.clone(),
            metrics: self.metrics.clone(),
            key: key.clone(),
            db_path,
            reset: None,
            retention_ms: self.retention.window_ms(&key.app),
            uploads: 0,
        };
        Ok(Opened::Here(Box::new(OpenActor::new(
            key.clone(),
            db,
            Box::new(holding),
        ))))
    }

    /// A history whose head is not a reset.
    fn exists(&self, key: &ActorKey) -> Result<bool, StorageError> {
        let prefix = crate::keys::history_prefix(key);
        let listing = self.bucket.list(&prefix).map_err(|e| StorageError::Bucket {
            what: format!("listing the history of {key}"),
            source: e.into(),
        })?;
        let head = listing
            .iter()
            .filter_map(|m| parse_history_key(&prefix, &m.key))
            .filter(|o| o.kind != Kind::Snapshot)
            .max_by_key(|o| o.pos);
        Ok(head.is_some_and(|o| o.kind != Kind::Reset))
    }

    fn deletion_status(&self, key: &ActorKey) -> DeletionStatus {
        crate::replica::deletion_status(self.bucket.as_ref(), key)
    }

    fn serving(&self) -> bool {
        self.cluster.is_live(&self.node)
    }

    fn cut_off_this_node(&self) -> bool {
        self.cluster.cut_off(&self.node);
        true
    }

    fn set_retention(&self, app: &str, window: std::time::Duration) {
        self.retention.set(app, window);
    }

    fn local_files(&self) -> &dyn StateStore {
        self.files.as_ref()
    }
}

/// A cluster node's hold on an actor: its replica and local cache.
struct Replicated {
    replica: Replica,
    cluster: Arc<Cluster>,
    node: String,
    files: Arc<dyn StateStore>,
    metrics: Arc<Metrics>,
    key: ActorKey,
    db_path: PathBuf,
    /// The acknowledged reset of a delete in this event.
    reset: Option<Pos>,
    /// The app's retention window (ADR 064).
    retention_ms: u64,
    /// Uploads since the last collection.
    uploads: u64,
}

/// How many uploads go between two collections of an actor's history.
const COLLECT_EVERY_UPLOADS: u64 = 256;

impl Replicated {
    /// Uploads what the event's commits changed: the pages, on the head
    /// (ADR 064); the whole image where what changed is not known or no
    /// head stands to put pages on; nothing when nothing was committed.
    fn upload(&mut self, db: &ActorDb) -> Result<(), StorageError> {
        let cluster = self.cluster.clone();
        let live = |n: &str| cluster.is_live(n);
        // The database's length after the upload, known from what went up.
        let uploaded = match (db.changed_pages()?, self.replica.head()) {
            (PageChange::Unchanged, Some(_)) => return Ok(()),
            (PageChange::Pages(set), Some(_)) => {
                let size = u64::from(set.db_pages()) * u64::from(set.page_size());
                self.replica.upload_pages(&set, &live).map(|_| size)
            }
            // A new actor's first state, or pages not known: the whole image.
            (_, None) | (PageChange::Unknown, Some(_)) => {
                let image = db.image()?;
                self.replica
                    .upload_if_changed(&image, &live)
                    .map(|_| image.len() as u64)
            }
        };
        match uploaded {
            Ok(size) => {
                note_head(&self.db_path, self.replica.head());
                self.after_upload(db, size);
                Ok(())
            }
            Err(source) => {
                forget_head(&self.db_path);
                Err(StorageError::NotAcknowledged { source })
            }
        }
    }

    /// What follows an acknowledged upload, none of it part of the
    /// acknowledgement: the WAL checkpointed once long, a snapshot where
    /// one is due, and now and then a collection. A failure here is logged
    /// and tried again later.
    fn after_upload(&mut self, db: &ActorDb, size: u64) {
        let cluster = self.cluster.clone();
        let live = |n: &str| cluster.is_live(n);
        if let Err(e) = db.checkpoint_if_long() {
            tracing::warn!(actor = %self.key, "checkpointing after an upload: {e}");
        }
        let mut collect = false;
        if self.replica.snapshot_due(size) {
            match db.image().map(|img| self.replica.snapshot(&img, &live)) {
                Ok(Ok(_)) => collect = true,
                Ok(Err(e)) => tracing::warn!(actor = %self.key, "writing a snapshot: {e}"),
                Err(e) => tracing::warn!(actor = %self.key, "reading the image for a snapshot: {e}"),
            }
        }
        self.uploads += 1;
        if collect || self.uploads >= COLLECT_EVERY_UPLOADS {
            self.uploads = 0;
            if let Err(e) = self.replica.collect(self.retention_ms, &live) {
                self.metrics.inc(HISTORY_COLLECT_FAILURES_TOTAL, "");
                tracing::warn!(actor = %self.key, "collecting the history: {e}");
            }
        }
    }
}

impl Holding for Replicated {
    fn reopened(&mut self, db: &ActorDb) -> Result<(), crate::sql_types::SqlError> {
        db.track_pages()
    }

    fn durable_write(&mut self, db: &ActorDb) -> Result<(), StorageError> {
        self.upload(db)
    }

    fn end_event(&mut self, db: &ActorDb) -> Result<(), StorageError> {
        self.upload(db)
    }

    fn reset(&mut self, marks: &[(&str, &str)], _record: &str) -> Result<(), StorageError> {
        let empty = ActorDb::empty_image(marks)?;
        let cluster = self.cluster.clone();
        match self.replica.delete(&empty, &|n| cluster.is_live(n)) {
            Ok(pos) => {
                self.reset = Some(pos);
                note_head(&self.db_path, None);
                Ok(())
            }
            Err(source) => Err(StorageError::NotAcknowledged { source }),
        }
    }

    fn finish_delete(&mut self, record: &str) -> Result<(), StorageError> {
        let cluster = self.cluster.clone();
        if let Some(pos) = self.reset.take() {
            let empty = ActorDb::empty_image(&[]).unwrap_or_default();
            match self.replica.collect_after_delete(pos, &empty, &|n| cluster.is_live(n)) {
                Ok(0) => {}
                // Old objects stay in the bucket; no restore uses them (the sweep reports them).
                Ok(_) | Err(_) => self.metrics.inc(HISTORY_COLLECT_FAILURES_TOTAL, ""),
            }
        }
        self.release();
        note_head(&self.db_path, None);
        self.files
            .remove(&self.key, record)
            .map_err(|source| StorageError::RemovalUnfinished {
                key: self.key.clone(),
                source,
            })
    }

    fn current_bookmark(&mut self, db: &ActorDb) -> Result<Option<String>, StorageError> {
        self.upload(db)?;
        Ok(self.replica.head().map(|p| p.to_string()))
    }

    fn bookmark_for_time(&mut self, at_ms: u64) -> Result<Option<String>, StorageError> {
        let history = self.replica.history().map_err(|source| StorageError::Bucket {
            what: format!("listing the history of {}", self.key),
            source,
        })?;
        Ok(crate::history_chain::restorable_at_time(&history, at_ms).map(|p| p.to_string()))
    }

    fn keeps_history(&self) -> bool {
        true
    }

    fn restore(
        &mut self,
        to: crate::replica::Target,
    ) -> Result<(crate::job::Restored, Option<u64>), crate::error::RuntimeError> {
        let cluster = self.cluster.clone();
        let undo = self.replica.head().map(|p| p.to_string()).unwrap_or_default();
        let (from, at, image) = self
            .replica
            .restore_to(to, &|n| cluster.is_live(n))
            .map_err(|e| super::restore_error(&self.key, e))?;
        super::write_restored(&self.db_path, &image).map_err(|e| {
            crate::error::RuntimeError::host_from(
                format!(
                    "{} was restored in the bucket, but its local copy could not be written ({e}); its next event \
                     restores it from the bucket",
                    self.key
                ),
                e,
            )
        })?;
        note_head(&self.db_path, Some(at));
        // The restored state's own alarm (its database says), for the index.
        let alarm = super::restored_alarm(&self.db_path);
        Ok((
            crate::job::Restored {
                from: from.to_string(),
                at: at.to_string(),
                undo,
            },
            alarm,
        ))
    }

    fn release(&mut self) {
        if self.cluster.is_live(&self.node)
            && let Err(e) = self.replica.release()
        {
            tracing::warn!(actor = %self.key, "releasing the hold: {e}");
        }
    }

    fn give_up(&mut self) {
        self.replica.forget();
        forget_head(&self.db_path);
    }
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

/// Records that the local database equals the bucket's `head` (none: it is not known to).
fn note_head(db: &Path, head: Option<Pos>) {
    match head {
        Some(h) => {
            let _ = std::fs::write(head_file(db), h.to_string());
        }
        None => forget_head(db),
    }
}

/// The local files are no longer known to be the head: the next take sets them aside.
fn forget_head(db: &Path) {
    let _ = std::fs::remove_file(head_file(db));
}

/// Removes the copy [`set_aside`] left (best effort: the next start removes what is left).
fn remove_set_aside(db: &Path) {
    let _ = std::fs::remove_file(sidecar(db, ".replaced"));
    let _ = std::fs::remove_file(sidecar(db, ".replaced-wal"));
}

/// Removes a local database that is not the bucket's head: its `.db.head`
/// first (a crash after it leaves a copy no take uses as the head), then the
/// WAL and shm, then the database.
fn remove_stale(db: &Path) -> std::io::Result<()> {
    let gone = |r: std::io::Result<()>| match r {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    };
    let (wal, shm) = crate::state_store::sidecars(db);
    gone(std::fs::remove_file(head_file(db)))?;
    gone(std::fs::remove_file(wal))?;
    gone(std::fs::remove_file(shm))?;
    gone(std::fs::remove_file(db))
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
    forget_head(db);
    Ok(())
}
