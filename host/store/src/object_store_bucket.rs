//! Our [`ObjectStore`] over the `object_store` crate: S3, Azure, GCS and its
//! in-memory store (ADR 027).
//!
//! Our trait is synchronous (its callers are actor threads and passes that
//! block), the crate is async. The backend owns a small tokio runtime (one
//! worker thread) and each call is *spawned* onto it and waited for on a
//! channel, never `block_on`: a caller that is itself on a tokio runtime (the
//! dev server's handlers) would panic in `block_on`, but may wait on a
//! channel while another runtime's thread does the work. Dropping the
//! backend shuts its runtime down in the background, which is allowed from
//! any context.

use crate::bucket::{BucketError, ETag, ObjectMeta, ObjectStore, PutCondition};
use futures_util::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};
use std::future::Future;
use std::sync::Arc;

/// What stands for an object's version in our [`ETag`], and what an
/// update-if-matches sends back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Versioning {
    /// The HTTP ETag (S3, Azure, memory): `If-Match` on update.
    ETag,
    /// The object's generation (GCS): `x-goog-if-generation-match` on update.
    /// Listings do not carry it, so a listing reads each object's head.
    Generation,
}

/// Why the backend could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ObjectStoreBucketError {
    /// The runtime that drives the async client could not start.
    #[error("cannot start the bucket's runtime: {0}")]
    Runtime(#[from] std::io::Error),
}

/// A bucket behind an `object_store` store.
pub struct ObjectStoreBucket {
    store: Arc<dyn object_store::ObjectStore>,
    versioning: Versioning,
    /// Drives the client; `Option` only so that `Drop` can take it.
    runtime: Option<tokio::runtime::Runtime>,
    /// What `Display` of the store says (for messages and `bucket check`).
    name: String,
}

impl std::fmt::Debug for ObjectStoreBucket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ObjectStoreBucket({})", self.name)
    }
}

impl ObjectStoreBucket {
    /// A bucket over `store`, whose versions are read as `versioning` says.
    ///
    /// # Errors
    /// The runtime that drives the client could not start (no threads).
    pub fn new(
        store: Arc<dyn object_store::ObjectStore>,
        versioning: Versioning,
    ) -> Result<Self, ObjectStoreBucketError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("wasmkeep-bucket")
            .enable_all()
            .build()?;
        Ok(Self {
            name: store.to_string(),
            store,
            versioning,
            runtime: Some(runtime),
        })
    }

    /// object_store's in-memory store behind the adapter.
    ///
    /// # Errors
    /// As [`ObjectStoreBucket::new`].
    pub fn in_memory() -> Result<Self, ObjectStoreBucketError> {
        Self::new(Arc::new(object_store::memory::InMemory::new()), Versioning::ETag)
    }

    /// Runs `fut` on the backend's runtime and waits for it (see the module's
    /// comment for why it is spawned, not `block_on`).
    fn run<T, F>(&self, fut: F) -> Result<T, BucketError>
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static,
    {
        let Some(rt) = &self.runtime else {
            return Err(BucketError::Unavailable("the bucket's runtime has stopped".into()));
        };
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        rt.spawn(async move {
            // The receiver only goes away if the caller did; nothing to tell.
            let _ = tx.send(fut.await);
        });
        rx.recv()
            .map_err(|_| BucketError::Unavailable("the bucket's runtime dropped a call".into()))
    }

    fn version_of(&self, e_tag: Option<String>, version: Option<String>) -> ETag {
        match self.versioning {
            Versioning::ETag => e_tag.map(quoted),
            Versioning::Generation => version,
        }
        .unwrap_or_default()
    }

    fn update_version(&self, etag: &str) -> UpdateVersion {
        match self.versioning {
            Versioning::ETag => UpdateVersion {
                e_tag: Some(etag.to_owned()),
                version: None,
            },
            Versioning::Generation => UpdateVersion {
                e_tag: None,
                version: Some(etag.to_owned()),
            },
        }
    }
}

impl Drop for ObjectStoreBucket {
    fn drop(&mut self) {
        // `Runtime`'s own drop blocks, which panics inside an async context.
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// An ETag in its header form, quoted. Azure (and Azurite) quote it in
/// headers but not in listings; one form makes a listed ETag equal to the
/// one a write returned, and is what `If-Match` takes.
fn quoted(e_tag: String) -> String {
    if e_tag.starts_with('"') || e_tag.starts_with("W/") {
        e_tag
    } else {
        format!("\"{e_tag}\"")
    }
}

fn path_of(key: &str) -> Result<Path, BucketError> {
    Path::parse(key).map_err(|e| BucketError::Unavailable(format!("invalid key {key:?}: {e}")))
}

/// Whether the request behind `e` never reached the server (its connection
/// failed): only then is a failed write known not to have landed.
fn never_sent(e: &object_store::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(h) = s.downcast_ref::<object_store::client::HttpError>() {
            return h.kind() == object_store::client::HttpErrorKind::Connect;
        }
        source = s.source();
    }
    false
}

/// A failed read, delete or listing: the bucket failed.
fn read_error(what: &str, key: &str, e: &object_store::Error) -> BucketError {
    BucketError::Unavailable(format!("{what} {key:?}: {e}"))
}

/// A failed write. The condition not holding is `PreconditionFailed` (a stale
/// or missing version, or an existing key on create: S3 answers 412, Azurite
/// 409, a missing key on update 404). A refusal the store states (no
/// permission, unsupported, a bad key) or a connection that never opened did
/// not land: `Unavailable`. Anything else (a timeout, a 5xx after the
/// client's retries, a reset connection) may have landed: `Ambiguous`.
fn write_error(key: &str, e: &object_store::Error) -> BucketError {
    use object_store::Error as E;
    match e {
        E::Precondition { .. } | E::AlreadyExists { .. } | E::NotFound { .. } => {
            BucketError::PreconditionFailed(key.to_owned())
        }
        E::PermissionDenied { .. }
        | E::Unauthenticated { .. }
        | E::NotSupported { .. }
        | E::NotImplemented { .. }
        | E::InvalidPath { .. } => BucketError::Unavailable(format!("writing {key:?}: {e}")),
        _ if never_sent(e) => BucketError::Unavailable(format!("writing {key:?}: {e}")),
        _ => BucketError::Ambiguous(format!("{key} ({e})")),
    }
}

impl ObjectStore for ObjectStoreBucket {
    fn get(&self, key: &str) -> Result<Option<(Vec<u8>, ETag)>, BucketError> {
        let path = path_of(key)?;
        let store = self.store.clone();
        let got = self.run(async move {
            let r = store.get(&path).await?;
            let meta = r.meta.clone();
            Ok::<_, object_store::Error>((r.bytes().await?, meta))
        })?;
        match got {
            Ok((bytes, meta)) => Ok(Some((bytes.to_vec(), self.version_of(meta.e_tag, meta.version)))),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(read_error("reading", key, &e)),
        }
    }

    fn put(&self, key: &str, body: &[u8], cond: &PutCondition) -> Result<ETag, BucketError> {
        let path = path_of(key)?;
        let mode = match cond {
            PutCondition::None => PutMode::Overwrite,
            PutCondition::IfAbsent => PutMode::Create,
            PutCondition::IfMatch(etag) => PutMode::Update(self.update_version(etag)),
        };
        let store = self.store.clone();
        let payload = PutPayload::from(body.to_vec());
        let opts = PutOptions::from(mode);
        let put_path = path.clone();
        match self.run(async move { store.put_opts(&put_path, payload, opts).await })? {
            Ok(r) => Ok(self.version_of(r.e_tag, r.version)),
            Err(e) => match write_error(key, &e) {
                // The client retries a conditional write after a 5xx or a lost
                // connection; if an earlier attempt landed, the retry fails its
                // condition against our own write. When the object now holds
                // exactly our bytes we cannot tell, so we say so.
                BucketError::PreconditionFailed(k) if cond != &PutCondition::None => match self.get(key) {
                    Ok(Some((current, _))) if current == body => Err(BucketError::Ambiguous(format!(
                        "{k} (the condition failed, and the object holds the bytes written: \
                             perhaps an earlier attempt of this write)"
                    ))),
                    _ => Err(BucketError::PreconditionFailed(k)),
                },
                other => Err(other),
            },
        }
    }

    fn delete(&self, key: &str) -> Result<(), BucketError> {
        let path = path_of(key)?;
        let store = self.store.clone();
        match self.run(async move { store.delete(&path).await })? {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(read_error("deleting", key, &e)),
        }
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, BucketError> {
        // Our prefixes are strings ("…/3-" lists one generation's objects);
        // object_store's are whole path segments. List under the deepest
        // directory the prefix names and keep the keys that start with it.
        let dir = prefix.rsplit_once('/').map_or("", |(d, _)| d);
        let dir = if dir.is_empty() { None } else { Some(path_of(dir)?) };
        let store = self.store.clone();
        let listed = self
            .run(async move { store.list(dir.as_ref()).try_collect::<Vec<_>>().await })?
            .map_err(|e| read_error("listing", prefix, &e))?;
        let mut out = Vec::new();
        for m in listed {
            let key = m.location.as_ref().to_owned();
            if !key.starts_with(prefix) {
                continue;
            }
            let etag = match (self.versioning, m.version) {
                (Versioning::Generation, None) => {
                    let store = self.store.clone();
                    let loc = m.location.clone();
                    let head = self
                        .run(async move { store.head(&loc).await })?
                        .map_err(|e| read_error("reading the head of", &key, &e))?;
                    self.version_of(head.e_tag, head.version)
                }
                (_, version) => self.version_of(m.e_tag, version),
            };
            out.push(ObjectMeta {
                key,
                etag,
                last_modified: u64::try_from(m.last_modified.timestamp_millis()).unwrap_or(0),
            });
        }
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bucket::contract;

    #[test]
    fn object_store_in_memory_meets_the_contract() {
        let b = ObjectStoreBucket::in_memory().expect("bucket");
        contract::check_with(&b, &contract::Expect::server_clock());
    }

    #[test]
    fn object_store_in_memory_has_one_winner_among_racing_creates() {
        contract::check_racing_creates(Arc::new(ObjectStoreBucket::in_memory().expect("bucket")));
    }

    #[test]
    fn a_prefix_that_is_not_a_whole_segment_lists_what_starts_with_it() {
        let b = ObjectStoreBucket::in_memory().expect("bucket");
        for k in ["h/3-0.seg", "h/3-1.seg", "h/30-0.seg", "h/4-0.seg", "i/3-0.seg"] {
            b.put(k, k.as_bytes(), &PutCondition::None).expect("put");
        }
        let keys: Vec<String> = b.list("h/3-").expect("list").into_iter().map(|m| m.key).collect();
        assert_eq!(keys, vec!["h/3-0.seg", "h/3-1.seg"]);
        assert_eq!(b.list("").expect("list").len(), 5, "the empty prefix lists everything");
    }

    #[test]
    fn a_failed_condition_over_our_own_bytes_is_ambiguous() {
        let b = ObjectStoreBucket::in_memory().expect("bucket");
        b.put("k", b"same", &PutCondition::IfAbsent).expect("create");
        assert!(
            matches!(
                b.put("k", b"same", &PutCondition::IfAbsent),
                Err(BucketError::Ambiguous(_))
            ),
            "the object holds what we wrote: perhaps our own earlier attempt"
        );
        assert!(matches!(
            b.put("k", b"other", &PutCondition::IfAbsent),
            Err(BucketError::PreconditionFailed(_))
        ));
    }

    #[test]
    fn an_unreachable_server_fails_reads_as_unavailable_and_writes_not_as_landed() {
        // A port nothing listens on (bound, then closed), with no retries.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let s3 = object_store::aws::AmazonS3Builder::new()
            .with_bucket_name("b")
            .with_endpoint(format!("http://127.0.0.1:{port}"))
            .with_allow_http(true)
            .with_access_key_id("test")
            .with_secret_access_key("test")
            .with_region("us-east-1")
            .with_retry(object_store::RetryConfig {
                max_retries: 0,
                ..Default::default()
            })
            .build()
            .expect("s3");
        let b = ObjectStoreBucket::new(Arc::new(s3), Versioning::ETag).expect("bucket");
        assert!(matches!(b.get("k"), Err(BucketError::Unavailable(_))));
        assert!(matches!(b.list("k/"), Err(BucketError::Unavailable(_))));
        assert!(
            matches!(
                b.put("k", b"x", &PutCondition::IfAbsent),
                Err(BucketError::Unavailable(_))
            ),
            "a connection that never opened sent nothing"
        );
    }

    /// An S3 client of a server on 127.0.0.1 that `serve` plays, with no
    /// retries and a short timeout.
    fn s3_against(serve: fn(std::net::TcpStream)) -> ObjectStoreBucket {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                std::thread::spawn(move || serve(conn));
            }
        });
        let s3 = object_store::aws::AmazonS3Builder::new()
            .with_bucket_name("b")
            .with_endpoint(format!("http://127.0.0.1:{port}"))
            .with_access_key_id("test")
            .with_secret_access_key("test")
            .with_region("us-east-1")
            .with_retry(object_store::RetryConfig {
                max_retries: 0,
                ..Default::default()
            })
            // Replaces every client option, so allow_http again.
            .with_client_options(
                object_store::ClientOptions::new()
                    .with_allow_http(true)
                    .with_timeout(std::time::Duration::from_millis(300)),
            )
            .build()
            .expect("s3");
        ObjectStoreBucket::new(Arc::new(s3), Versioning::ETag).expect("bucket")
    }

    /// Reads one request's headers (enough to answer it).
    fn read_head(conn: &mut std::net::TcpStream) {
        use std::io::Read;
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
            match conn.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
    }

    #[test]
    fn a_write_the_server_took_but_never_answered_is_ambiguous() {
        let b = s3_against(|mut conn| {
            read_head(&mut conn);
            std::thread::sleep(std::time::Duration::from_secs(5));
        });
        assert!(
            matches!(
                b.put("k", b"x", &PutCondition::IfAbsent),
                Err(BucketError::Ambiguous(_))
            ),
            "a timeout after the request went out: the write may have landed"
        );
        assert!(matches!(b.get("k"), Err(BucketError::Unavailable(_))));
    }

    #[test]
    fn a_server_error_fails_a_write_as_ambiguous_and_a_read_as_unavailable() {
        let b = s3_against(|mut conn| {
            use std::io::Write;
            read_head(&mut conn);
            let _ =
                conn.write_all(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        });
        assert!(matches!(
            b.put("k", b"x", &PutCondition::IfMatch("\"e\"".into())),
            Err(BucketError::Ambiguous(_))
        ));
        assert!(matches!(b.get("k"), Err(BucketError::Unavailable(_))));
        assert!(matches!(b.delete("k"), Err(BucketError::Unavailable(_))));
    }

    #[test]
    fn the_backend_can_be_used_and_dropped_inside_an_async_context() {
        let rt = tokio::runtime::Builder::new_current_thread().build().expect("rt");
        rt.block_on(async {
            let b = ObjectStoreBucket::in_memory().expect("bucket");
            b.put("k", b"x", &PutCondition::IfAbsent).expect("put");
            assert!(b.get("k").expect("get").is_some());
            drop(b);
        });
    }
}
