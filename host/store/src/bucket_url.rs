//! A bucket from a URL (`--bucket`, `bucket check`; ADR 027): `s3://`,
//! `az://` (and the Azure forms object_store reads), `gs://` and `memory://`
//! go to object_store, with credentials and endpoints from the usual
//! environment variables (`AWS_*`, `AZURE_*`, `GOOGLE_*`); `file://DIR` is our
//! own local-directory backend, because object_store's local store cannot
//! update-if-ETag.

use crate::bucket::{LocalDirBucket, ObjectStore};
use crate::clock::Clock;
use crate::object_store_bucket::{ObjectStoreBucket, ObjectStoreBucketError, Versioning};
use object_store::ObjectStoreScheme;
use std::sync::Arc;

/// The URL forms a bucket may take, for messages.
pub const BUCKET_URL_FORMS: &str =
    "s3://BUCKET[/PREFIX], az://CONTAINER[/PREFIX], gs://BUCKET[/PREFIX], memory:// or file:///DIR";

/// Why a bucket URL could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum BucketUrlError {
    /// Not a URL at all.
    #[error("{url:?} is not a bucket URL ({source}); use {BUCKET_URL_FORMS}")]
    NotAUrl {
        /// What was given.
        url: String,
        /// Why it did not parse.
        source: url::ParseError,
    },
    /// A scheme that names no bucket we can use.
    #[error("{url:?}: unknown bucket scheme {scheme:?}; use {BUCKET_URL_FORMS}")]
    UnknownScheme {
        /// What was given.
        url: String,
        /// Its scheme.
        scheme: String,
    },
    /// A `file://` URL that is not a local absolute directory.
    #[error("{url:?} names no local directory; use file:///ABSOLUTE/DIR")]
    NotALocalDir {
        /// What was given.
        url: String,
    },
    /// object_store refused the configuration (a missing bucket name, a bad
    /// option in the environment).
    #[error("{url:?}: {source}")]
    Store {
        /// What was given.
        url: String,
        /// The store's reason.
        source: object_store::Error,
    },
    /// The backend's runtime did not start.
    #[error(transparent)]
    Backend(#[from] ObjectStoreBucketError),
}

/// Opens the bucket `url` names. `clock` stamps a local directory's objects;
/// the other stores keep their own time.
///
/// # Errors
/// The URL does not parse, its scheme is not one of [`BUCKET_URL_FORMS`], a
/// `file://` URL names no local directory, or the store's configuration (URL
/// and environment) is refused.
pub fn open_bucket(url: &str, clock: Arc<dyn Clock>) -> Result<Arc<dyn ObjectStore>, BucketUrlError> {
    let parsed = url::Url::parse(url).map_err(|source| BucketUrlError::NotAUrl {
        url: url.to_owned(),
        source,
    })?;
    let unknown = || BucketUrlError::UnknownScheme {
        url: url.to_owned(),
        scheme: parsed.scheme().to_owned(),
    };
    if parsed.scheme() == "file" {
        let dir = match parsed.host_str() {
            None | Some("" | "localhost") => parsed.to_file_path().ok(),
            Some(_) => None,
        };
        let dir = dir.ok_or_else(|| BucketUrlError::NotALocalDir { url: url.to_owned() })?;
        return Ok(Arc::new(LocalDirBucket::new(dir, clock)));
    }
    let (scheme, prefix) = ObjectStoreScheme::parse(&parsed).map_err(|_| unknown())?;
    let store_err = |source| BucketUrlError::Store {
        url: url.to_owned(),
        source,
    };
    let url_text = parsed.to_string();
    let (store, versioning): (Arc<dyn object_store::ObjectStore>, _) = match scheme {
        ObjectStoreScheme::Memory => (Arc::new(object_store::memory::InMemory::new()), Versioning::ETag),
        ObjectStoreScheme::AmazonS3 => (
            Arc::new(
                object_store::aws::AmazonS3Builder::from_env()
                    .with_url(url_text)
                    .build()
                    .map_err(store_err)?,
            ),
            Versioning::ETag,
        ),
        ObjectStoreScheme::MicrosoftAzure => (
            Arc::new(
                object_store::azure::MicrosoftAzureBuilder::from_env()
                    .with_url(url_text)
                    .build()
                    .map_err(store_err)?,
            ),
            Versioning::ETag,
        ),
        ObjectStoreScheme::GoogleCloudStorage => (
            Arc::new(
                object_store::gcp::GoogleCloudStorageBuilder::from_env()
                    .with_url(url_text)
                    .build()
                    .map_err(store_err)?,
            ),
            // GCS's ETag is the body's MD5; its generation changes on every write.
            Versioning::Generation,
        ),
        // Plain HTTP has no conditional writes; local files are ours (above).
        _ => return Err(unknown()),
    };
    let prefix = object_store::path::Path::parse(prefix).map_err(|e| store_err(e.into()))?;
    let store: Arc<dyn object_store::ObjectStore> = if prefix.as_ref().is_empty() {
        store
    } else {
        Arc::new(object_store::prefix::PrefixStore::new(store, prefix))
    };
    Ok(Arc::new(ObjectStoreBucket::new(store, versioning)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bucket::{PutCondition, contract};
    use crate::clock::{SystemClock, VirtualClock};

    fn clock() -> Arc<dyn Clock> {
        Arc::new(VirtualClock::default())
    }

    /// Six processes race on one `file://` bucket (each this test binary,
    /// run again as a writer): one create wins, no update is lost.
    #[test]
    fn racing_processes_on_a_file_url_lose_no_update_and_have_one_winner() {
        const NAME: &str = "bucket_url::tests::racing_processes_on_a_file_url_lose_no_update_and_have_one_winner";
        const URL_ENV: &str = "WASMKEEP_RACE_URL";
        if let (Ok(writer), Ok(url), Ok(start)) = (
            std::env::var(contract::RACE_WRITER_ENV),
            std::env::var(URL_ENV),
            std::env::var(contract::RACE_START_ENV),
        ) {
            let b = open_bucket(&url, Arc::new(SystemClock)).expect("the writer opens the bucket");
            contract::race_as_child(b.as_ref(), &writer, std::path::Path::new(&start));
            return;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("file://{}", dir.path().join("bucket").display());
        let start = dir.path().join("start");
        let b = open_bucket(&url, Arc::new(SystemClock)).expect("open");
        let exe = std::env::current_exe().expect("this test binary");
        contract::check_racing_processes(b.as_ref(), 6, &start, |i| {
            std::process::Command::new(&exe)
                .args([NAME, "--exact", "--nocapture", "--test-threads=1", "-q"])
                .env(contract::RACE_WRITER_ENV, i.to_string())
                .env(URL_ENV, &url)
                .env(contract::RACE_START_ENV, &start)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("a writer process")
        });
    }

    #[test]
    fn an_unknown_scheme_is_refused_by_kind() {
        for url in ["ftp://host/x", "http://127.0.0.1:1/b", "nonsense://x"] {
            assert!(
                matches!(open_bucket(url, clock()), Err(BucketUrlError::UnknownScheme { .. })),
                "{url}"
            );
        }
        assert!(matches!(
            open_bucket("no scheme", clock()),
            Err(BucketUrlError::NotAUrl { .. })
        ));
        assert!(matches!(
            open_bucket("file://elsewhere/dir", clock()),
            Err(BucketUrlError::NotALocalDir { .. })
        ));
    }

    #[test]
    fn a_file_url_is_our_local_directory_and_meets_the_contract() {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = url::Url::from_directory_path(dir.path()).expect("url").to_string();
        let b = open_bucket(&url, clock()).expect("open");
        contract::check(b.as_ref());
        assert!(
            dir.path().join("state/t/a/y/z").is_file(),
            "the objects are files under DIR"
        );
    }

    #[test]
    fn memory_url_meets_the_contract_and_its_races_have_one_winner() {
        let b = open_bucket("memory://", clock()).expect("open");
        contract::check_with(b.as_ref(), &contract::Expect::server_clock());
        contract::check_racing_creates(open_bucket("memory://", clock()).expect("open"));
    }

    #[test]
    fn an_s3_url_without_a_server_opens_and_fails_only_when_used() {
        // Building the client does not reach the network.
        let b = open_bucket("s3://some-bucket/some/prefix", clock()).expect("open");
        drop(b);
        assert!(matches!(
            open_bucket("s3://", clock()),
            Err(BucketUrlError::Store { .. } | BucketUrlError::UnknownScheme { .. })
        ));
    }

    /// The contract against a real S3 server (moto in the test command):
    /// `WASMKEEP_TEST_S3` is a bucket URL (`s3://NAME`), the endpoint and
    /// credentials come from the usual AWS_* variables (`eval "$(bash
    /// scripts/s3-server.sh start)"` sets them all).
    #[test]
    fn s3_server_meets_the_contract_when_one_is_named() {
        with_test_server("WASMKEEP_TEST_S3", |b| {
            contract::check_with(b.as_ref(), &contract::Expect::server_clock());
            let report = crate::bucket_probe::probe(b.as_ref());
            assert!(report.passed(), "bucket check over the server:\n{report}");
            contract::check_racing_creates(b);
        });
    }

    /// Likewise over Azurite: `WASMKEEP_TEST_AZURE` is a container URL.
    #[test]
    fn azure_server_meets_the_contract_when_one_is_named() {
        with_test_server("WASMKEEP_TEST_AZURE", |b| {
            contract::check_with(b.as_ref(), &contract::Expect::server_clock());
            let report = crate::bucket_probe::probe(b.as_ref());
            assert!(report.passed(), "bucket check over the server:\n{report}");
            contract::check_racing_creates(b);
        });
    }

    /// Opens the bucket `var` names under a prefix of this run's own (a
    /// server outlives one run, and the contract starts from an empty
    /// bucket), or says that it is skipped.
    fn with_test_server(var: &str, f: impl Fn(Arc<dyn ObjectStore>)) {
        let Ok(url) = std::env::var(var) else {
            eprintln!("{var} is not set: skipped (scripts/s3-server.sh starts a server)");
            return;
        };
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let url = format!("{}/run-{}-{nanos}", url.trim_end_matches('/'), std::process::id());
        let b = open_bucket(&url, Arc::new(SystemClock)).expect("the test server's bucket opens");
        // A first write says whether the server is there at all.
        b.put("probe", b"x", &PutCondition::None)
            .expect("the test server answers a write");
        b.delete("probe").expect("delete");
        f(b);
    }

    /// Latency of single requests over the servers the variables name
    /// (ignored: a figure, not a check). `cargo test -p wasmkeep-store
    /// server_latency -- --ignored --nocapture` with the servers' exports.
    #[test]
    #[ignore = "prints figures; run by hand"]
    fn server_latency() {
        for var in ["WASMKEEP_TEST_S3", "WASMKEEP_TEST_AZURE"] {
            with_test_server(var, |b| {
                let body = vec![7u8; 4096];
                let mut etag = b.put("lat/k", &body, &PutCondition::IfAbsent).expect("create");
                let time = |f: &mut dyn FnMut()| {
                    let mut ms: Vec<f64> = (0..200)
                        .map(|_| {
                            let t = std::time::Instant::now();
                            f();
                            t.elapsed().as_secs_f64() * 1000.0
                        })
                        .collect();
                    ms.sort_by(f64::total_cmp);
                    (ms[100], ms[190])
                };
                let mut n = 0u32;
                let put = time(&mut || {
                    n += 1;
                    let mut body = body.clone();
                    body[..4].copy_from_slice(&n.to_le_bytes());
                    etag = b
                        .put("lat/k", &body, &PutCondition::IfMatch(etag.clone()))
                        .expect("update");
                });
                let get = time(&mut || {
                    b.get("lat/k").expect("get");
                });
                let list = time(&mut || {
                    b.list("lat/").expect("list");
                });
                eprintln!(
                    "{var}: 4 KiB update-if-ETag median {:.2} ms (p95 {:.2}), get {:.2} ms ({:.2}), \
                     list of one {:.2} ms ({:.2})",
                    put.0, put.1, get.0, get.1, list.0, list.1
                );
            });
        }
    }
}
