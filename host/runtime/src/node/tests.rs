//! A worker that finds no thread (the system at its limit on threads or
//! memory): its jobs are answered 503, and its resident place is given back.
//! A worker is started for a hibernated actor, and resumed for a resident
//! one whose worker parked (ADR 044): both paths are tried. And a parked
//! actor whose database the idle sweep closed reopens it on a thread of
//! the node's (ADR 059).

use super::*;
use crate::http_types::{HttpRequest, HttpResponse};
use crate::test_common;
use tokio::sync::oneshot;

/// A node with room for `max_resident` actors and no app.
fn node(max_resident: usize) -> (tempfile::TempDir, Arc<Host>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = RuntimeConfig::for_tests(dir.path());
    config.max_resident = max_resident;
    let host = crate::node_builder::build_host(config, None).expect("node");
    (dir, host)
}

fn key(name: &str) -> ActorKey {
    ActorKey {
        app: "app".into(),
        class: "Counter".into(),
        name: name.into(),
    }
}

/// Sends a GET to `key`, and returns where its answer comes.
fn request(host: &Arc<Host>, key: &ActorKey) -> oneshot::Receiver<HttpResponse> {
    let (respond, answer) = oneshot::channel();
    let req = GuestEvent::Request {
        req: HttpRequest::default(),
        respond,
        require_existing: false,
    };
    host.enqueue(key, Job::new(req, Vec::new()));
    answer
}

/// The answer, waited for a while; `None` when the job was dropped
/// unanswered or none came.
fn answer(mut rx: oneshot::Receiver<HttpResponse>) -> Option<HttpResponse> {
    for _ in 0..2_000 {
        match rx.try_recv() {
            Ok(answer) => return Some(answer),
            Err(oneshot::error::TryRecvError::Closed) => return None,
            Err(oneshot::error::TryRecvError::Empty) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    None
}

#[test]
fn a_worker_that_finds_no_thread_answers_503_and_gives_its_place_back() {
    let (_dir, host) = node(1);
    host.scheduler().refuse_new_threads(true);
    let refused = answer(request(&host, &key("a"))).expect("an answer, not a dropped job");
    assert_eq!(refused.status, 503);
    assert_eq!(refused.failure, Some(FailureKind::Overloaded));
    assert!(!host.scheduler().has_queue(&key("a")), "the mailbox has no worker");

    // The one resident place is free again: another actor's worker starts
    // at once (its app is not loaded here, which is its answer).
    host.scheduler().refuse_new_threads(false);
    let next = answer(request(&host, &key("b"))).expect("an answer");
    assert_eq!(next.failure, Some(FailureKind::NotLoaded));
    // And the actor refused before starts too, now that threads start.
    let again = answer(request(&host, &key("a"))).expect("an answer");
    assert_eq!(again.failure, Some(FailureKind::NotLoaded));
}

#[test]
fn a_parked_worker_that_finds_no_thread_answers_503_and_its_actor_wakes_later_with_its_state() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = RuntimeConfig::for_tests(dir.path());
    config.cache_dir = test_common::cache_dir();
    // Long enough that an idle worker parks (ADR 044) rather than hibernates.
    config.idle_timeout = Duration::from_secs(30);
    let rt = crate::Runtime::new(config).expect("runtime");
    test_common::add_testee_app(&rt);
    let key = ActorKey::new("t/app", "testee", "parked");
    let (status, body) = test_common::count_request(&rt, &key);
    assert_eq!(status, 200, "{body}");

    let host = rt.host();
    let slot = host.scheduler().mailbox(&key);
    for _ in 0..1_000 {
        if slot.parked_runs_here().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(slot.parked_runs_here().is_some(), "the idle worker parks within 10 s");

    // Through the runtime's own waiter, as the dev server waits.
    host.scheduler().refuse_new_threads(true);
    let refused = rt
        .request_blocking(&key, HttpRequest::new("POST", "/", r#"{"ops": []}"#))
        .expect("request");
    assert_eq!(refused.status, 503);
    assert_eq!(refused.failure, Some(FailureKind::Overloaded));
    assert!(!host.scheduler().is_resident(&key), "its cell went with the run");

    // Threads start again: the actor wakes from its files, with the row of
    // its first request and none from the refused one.
    host.scheduler().refuse_new_threads(false);
    let (status, body) = test_common::count_request(&rt, &key);
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains(r#""rows":[[{"integer":"2"}]]"#),
        "two rows, not three: {body}"
    );
}

/// A parked worker whose next request would run on the receiving thread
/// (after a quick read, ADR 048), and whose database the idle sweep then
/// closed (ADR 045): the request that reopens it runs on a thread of the
/// node's, not on the receiving one (ADR 059).
#[test]
fn a_rested_actor_s_next_request_runs_on_a_thread_of_the_node_s() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = RuntimeConfig::for_tests(dir.path());
    config.cache_dir = test_common::cache_dir();
    config.reads_here = crate::ReadsHere::AfterEveryQuickRead {
        quick: Duration::from_millis(100),
    };
    let rt = crate::Runtime::new(config).expect("runtime");
    test_common::add_testee_app(&rt);
    let key = ActorKey::new("t/app", "testee", "rested");
    let read = || {
        let r = rt
            .request_blocking(
                &key,
                HttpRequest::new("POST", "/", r#"{"ops": [{"op": "query", "sql": "SELECT 1"}]}"#),
            )
            .expect("request");
        assert_eq!(r.status, 200, "{}", r.text());
        rt.settle(&key);
    };
    let run_here = || rt.admin().metrics().get(crate::metrics::REQUESTS_RUN_HERE_TOTAL, "");
    read();
    read();
    let before = run_here();
    read();
    assert_eq!(run_here() - before, 1, "a read after a quick read runs here");

    let host = rt.host();
    let slot = host.scheduler().mailbox(&key);
    assert!(
        slot.parked_runs_here() == Some(true),
        "parked, its next request to run here"
    );
    assert_eq!(
        host.scheduler().sweep_idle(Duration::ZERO, Duration::from_secs(3_600)),
        1,
        "the sweep closes its database"
    );
    let before = run_here();
    read();
    assert_eq!(
        run_here() - before,
        0,
        "the read that reopens it ran on a thread of the node's"
    );
}
