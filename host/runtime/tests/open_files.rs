//! A node out of open files (ADR 055): each resident actor's open database
//! holds two descriptors (the file and its WAL), so a node whose residents
//! are many may reach the process's open-files limit before an idle one
//! has closed its database (ADR 045, after ten seconds). Opening one more
//! actor then closes the databases of actors whose workers parked, and
//! goes on; with none to close, the event is answered 503 `overloaded`.
//! One test, in its own binary: it lowers the process's open-files limit.

mod common;

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
use std::time::Duration;
use wasmkeep_host::{ActorKey, FailureKind, HttpRequest, Runtime, RuntimeConfig};

/// Descriptors this process has open now (the listing's own is closed).
fn open_descriptors() -> u64 {
    std::fs::read_dir("/proc/self/fd").expect("/proc/self/fd").count() as u64 - 1
}

fn set_soft_limit(n: u64) {
    let limit = getrlimit(Resource::Nofile);
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(n),
            maximum: limit.maximum,
        },
    )
    .expect("lowering the open-files limit");
}

/// Opens files until the process may open no more; they stay open until
/// the result is dropped.
fn take_every_free_descriptor() -> Vec<std::fs::File> {
    let mut taken = Vec::new();
    loop {
        match std::fs::File::open("/dev/null") {
            Ok(f) => taken.push(f),
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::MFILE.raw_os_error()) => return taken,
            Err(e) => panic!("opening /dev/null: {e}"),
        }
        assert!(taken.len() < 1000, "the lowered limit holds");
    }
}

fn key(i: usize) -> ActorKey {
    ActorKey::new("t/app", "testee", format!("k{i}"))
}

/// A node of the testee app whose actors stay resident through the test.
fn node(dir: &std::path::Path) -> Runtime {
    let mut config = RuntimeConfig::for_tests(dir);
    config.cache_dir = common::cache_dir();
    // Long enough that workers park (ADR 044) and that nothing rests or
    // hibernates by time during the test.
    config.idle_timeout = Duration::from_secs(600);
    config.max_resident = 1000;
    let rt = Runtime::new(config).expect("runtime");
    common::add_testee_app(&rt);
    rt
}

#[test]
fn a_node_out_of_open_files_closes_idle_databases_else_answers_overloaded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = node(dir.path());
    // One actor first, so that what the node opens once (the compiled
    // class, its threads' descriptors) is open before the count.
    let (status, body) = common::count_request(&rt, &key(0));
    assert_eq!(status, 200, "{body}");
    let saved = getrlimit(Resource::Nofile);

    // Room for about a dozen more open databases, and thirty actors touched
    // ten at a time, each ten after the last ten's workers parked; then
    // all thirty again, which opens the databases closed meanwhile.
    set_soft_limit(open_descriptors() + 24);
    for round in 1..=2 {
        for batch in 0..3 {
            for i in 1 + batch * 10..=10 + batch * 10 {
                let (status, body) = common::count_request(&rt, &key(i));
                // Each count adds one: the second shows the actor kept its state.
                assert_eq!(
                    (status, body.contains(&round.to_string())),
                    (200, true),
                    "actor {i}, round {round}: {body}"
                );
            }
            std::thread::sleep(Duration::from_millis(1500));
        }
    }

    setrlimit(Resource::Nofile, saved).expect("the open-files limit back");
    // Its idle sweep closes databases by time from now on, which would
    // free files under the next part's feet.
    rt.shutdown();

    // Another node, whose one resident actor has just run (so it is not
    // parked), with no room for even one more database: a new actor is
    // refused as an overload, to be tried again, not failed.
    let other_dir = tempfile::tempdir().expect("tempdir");
    let other = node(other_dir.path());
    assert_eq!(common::count_request(&other, &key(0)).0, 200);
    set_soft_limit(open_descriptors() + 8);
    let fillers = take_every_free_descriptor();
    let r = other
        .request_blocking(&key(1), HttpRequest::new("POST", "/", r#"{"ops":[]}"#))
        .expect("request");
    assert_eq!(
        (r.status, r.failure),
        (503, Some(FailureKind::Overloaded)),
        "{}",
        r.text()
    );
    drop(fillers);

    setrlimit(Resource::Nofile, saved).expect("the open-files limit back");
    let (status, body) = common::count_request(&other, &key(1));
    assert_eq!(status, 200, "once files are free: {body}");
}
