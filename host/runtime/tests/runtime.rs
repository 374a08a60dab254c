//! The runtime as a library: statuses, hibernation, access, inspection, caching.

mod common;

use std::time::Duration;
use wasmkeep_host::CacheOutcome;
use wasmkeep_host::{Access, ActorKey, ActorStatus, ClassSpec, HttpRequest, Runtime, RuntimeConfig, RuntimeError};

fn runtime(idle: Duration) -> (tempfile::TempDir, Runtime) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = RuntimeConfig::for_tests(dir.path());
    config.cache_dir = common::cache_dir();
    config.idle_timeout = idle;
    let rt = Runtime::new(config).expect("runtime");
    rt.add_app(
        "t/app",
        &[
            ClassSpec {
                name: "counter".into(),
                component: common::component("counter-rust"),
                access: Access::Open,
            },
            ClassSpec {
                name: "known".into(),
                component: common::component("counter-rust"),
                access: Access::Existing,
            },
        ],
    )
    .expect("app");
    (dir, rt)
}

fn status_of(rt: &Runtime, key: &ActorKey) -> Option<ActorStatus> {
    rt.admin()
        .actors()
        .into_iter()
        .find(|a| a.key == *key)
        .map(|a| a.status)
}

#[test]
fn actors_go_resident_hibernated_deleted() {
    let (_d, rt) = runtime(Duration::from_secs(30));
    let k = ActorKey::new("t/app", "counter", "c");
    assert_eq!(status_of(&rt, &k), None, "an actor never used is not listed");
    rt.request_blocking(&k, HttpRequest::new("POST", "/", ""))
        .expect("post");
    assert_eq!(
        status_of(&rt, &k),
        Some(ActorStatus::Resident),
        "a used actor is resident"
    );
    rt.dev().hibernate_all();
    assert_eq!(
        status_of(&rt, &k),
        Some(ActorStatus::Hibernated),
        "hibernate_all hibernates it"
    );
    assert_eq!(
        rt.admin().resident_count(),
        0,
        "nothing is resident after hibernate_all"
    );
    let tables = rt.admin().tables(&k).expect("tables of a hibernated actor");
    assert_eq!(tables[0].0, "counter", "the actor's table is readable while hibernated");
    let r = rt
        .request_blocking(&k, HttpRequest::new("DELETE", "/", ""))
        .expect("delete");
    assert_eq!(r.text(), "deleted", "the counter deletes itself");
    // The answer leaves before the event ends; the delete is finished at its end.
    rt.settle(&k);
    assert_eq!(
        status_of(&rt, &k),
        Some(ActorStatus::Deleted),
        "a deleted actor is listed as deleted"
    );
    assert!(rt.admin().tables(&k).is_err(), "a deleted actor has no tables to read");
}

#[test]
fn idle_actors_hibernate_on_their_own() {
    let (_d, rt) = runtime(Duration::from_millis(50));
    let k = ActorKey::new("t/app", "counter", "c");
    rt.request_blocking(&k, HttpRequest::new("POST", "/", ""))
        .expect("post");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while rt.admin().resident_count() > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        rt.admin().resident_count(),
        0,
        "an actor idle past the timeout hibernates"
    );
    let r = rt.request_blocking(&k, HttpRequest::new("GET", "/", "")).expect("get");
    assert_eq!(r.text(), "1", "it wakes with its data on the next event");
}

#[test]
fn access_existing_refuses_new_actors_from_outside() {
    let (_d, rt) = runtime(Duration::from_secs(30));
    let k = ActorKey::new("t/app", "known", "x");
    // The request is taken; its worker asks whether the actor exists, once,
    // and answers 404 with the kind (issue 56: not also on the caller's thread).
    let refused = rt
        .request_blocking(&k, HttpRequest::new("GET", "/", ""))
        .expect("the request is taken");
    assert_eq!(
        (refused.status, refused.failure),
        (404, Some(wasmkeep_host::FailureKind::NoSuchActor)),
        "an existing-only class refuses a new actor from outside: {}",
        refused.text()
    );
    assert!(!rt.admin().exists(&k), "and the refusal created nothing");
    rt.call(&k, b"ignored".to_vec())
        .expect("calls reach existing-only classes")
        .ok();
    assert!(rt.admin().exists(&k), "a call created the actor");
    let r = rt
        .request_blocking(&k, HttpRequest::new("GET", "/", ""))
        .expect("now it exists");
    assert_eq!(r.status, 200, "requests reach it once it exists");
    match rt.request(&ActorKey::new("t/app", "nope", "x"), HttpRequest::new("GET", "/", "")) {
        Err(e @ RuntimeError::NoSuchClass { .. }) => {
            assert!(e.to_string().contains("counter"), "names known classes: {e}")
        }
        other => panic!("expected NoSuchClass, got {other:?}"),
    }
}

#[test]
fn components_load_from_the_cache_the_second_time() {
    let (_d, rt) = runtime(Duration::from_secs(30));
    let outcome = rt.load_component(&common::component("counter-rust")).expect("load");
    assert_eq!(
        outcome,
        CacheOutcome::Hit,
        "a component loaded before comes from the compiled cache"
    );
}

#[test]
fn a_corrupted_compiled_component_is_detected_and_rebuilt_never_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = RuntimeConfig::for_tests(dir.path().join("data"));
    config.cache_dir = dir.path().join("cache");
    let rt = Runtime::new(config).expect("runtime");
    let counter = common::component("counter-rust");
    assert_eq!(rt.load_component(&counter).expect("load"), CacheOutcome::Compiled);
    let cwasm = std::fs::read_dir(dir.path().join("cache"))
        .expect("the cache directory")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "cwasm"))
        .expect("a compiled component");
    // Flip bytes in the middle (the code), keeping the header and the size.
    let mut bytes = std::fs::read(&cwasm).expect("read");
    let mid = bytes.len() / 2;
    for b in &mut bytes[mid..mid + 64] {
        *b ^= 0xff;
    }
    std::fs::write(&cwasm, &bytes).expect("corrupt it");
    assert_eq!(
        rt.load_component(&counter).expect("load"),
        CacheOutcome::Compiled,
        "a cache file that is not what the cache wrote is compiled again, never used"
    );
    assert_eq!(
        rt.load_component(&counter).expect("load"),
        CacheOutcome::Hit,
        "and stored again"
    );
    rt.add_app(
        "t/app",
        &[ClassSpec {
            name: "counter".into(),
            component: counter,
            access: Access::Open,
        }],
    )
    .expect("app");
    let r = rt
        .request_blocking(
            &ActorKey::new("t/app", "counter", "a"),
            HttpRequest::new("POST", "/", ""),
        )
        .expect("request");
    assert_eq!(r.status, 200, "{}", r.text());
}

#[test]
fn admin_reads_of_an_absent_actor_fail_as_no_such_actor() {
    let (_d, rt) = runtime(Duration::from_secs(60));
    let k = ActorKey::new("t/app", "counter", "never-made");
    let tables = rt.admin().tables(&k).expect_err("an absent actor has no tables");
    assert_eq!(tables.kind(), wasmkeep_host::FailureKind::NoSuchActor);
    assert!(!rt.admin().exists(&k), "and reading made none");
}

#[test]
fn a_bad_app_or_class_name_is_a_bad_argument_not_a_host_failure() {
    let (_d, rt) = runtime(Duration::from_secs(60));
    let spec = |name: &str| ClassSpec {
        name: name.into(),
        component: common::component("counter-rust"),
        access: Access::Open,
    };
    let bad_app = rt
        .add_app("no spaces allowed", &[spec("counter")])
        .expect_err("a bad app name");
    assert_eq!(bad_app.kind(), wasmkeep_host::FailureKind::BadArgument);
    let bad_class = rt
        .add_app("t/other", &[spec("no/slash")])
        .expect_err("a bad class name");
    assert_eq!(bad_class.kind(), wasmkeep_host::FailureKind::BadArgument);
}

#[test]
fn a_host_that_cannot_start_keeps_the_cause() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"not a directory").expect("write");
    let mut config = RuntimeConfig::for_tests(file.join("data"));
    config.cache_dir = common::cache_dir();
    let Err(e) = Runtime::new(config) else {
        panic!("a data directory under a file cannot be made");
    };
    assert_eq!(e.kind(), wasmkeep_host::FailureKind::Host);
    let cause = std::error::Error::source(&e).expect("the cause is kept");
    assert!(
        cause.downcast_ref::<std::io::Error>().is_some(),
        "the system's error: {cause:?}"
    );
}
