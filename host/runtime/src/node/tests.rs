//! A worker that finds no thread (the system at its limit on threads or
//! memory): its jobs are answered 503, and its resident place is given back.

use super::*;
use crate::http_types::{HttpRequest, HttpResponse};
use std::sync::atomic::Ordering;
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
    let req = EventKind::Request {
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
    host.worker_threads.refuse_new.store(true, Ordering::Relaxed);
    let refused = answer(request(&host, &key("a"))).expect("an answer, not a dropped job");
    assert_eq!(refused.status, 503);
    assert_eq!(refused.failure, Some(FailureKind::Overloaded));
    assert!(!host.has_queue(&key("a")), "the mailbox has no worker");

    // The one resident place is free again: another actor's worker starts
    // at once (its app is not loaded here, which is its answer).
    host.worker_threads.refuse_new.store(false, Ordering::Relaxed);
    let next = answer(request(&host, &key("b"))).expect("an answer");
    assert_eq!(next.failure, Some(FailureKind::NotLoaded));
    // And the actor refused before starts too, now that threads start.
    let again = answer(request(&host, &key("a"))).expect("an answer");
    assert_eq!(again.failure, Some(FailureKind::NotLoaded));
}
