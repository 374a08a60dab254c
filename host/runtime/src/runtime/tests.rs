//! Waiting for an answer that never comes: the event's sender dropped
//! before the waiter first looked (a worker that failed, or a job dropped
//! on its way) is a 500, never a panic in the waiter.

use super::*;

/// A waiter on an answer whose sender is gone already.
fn dropped_answer(rt: &Runtime) -> PendingResponse {
    let (respond, rx) = oneshot::channel::<HttpResponse>();
    drop(respond);
    PendingResponse {
        rx,
        ticket: GiveUpIfDropped(job::Ticket::default()),
        host: rt.host.clone(),
        app: "t/app".into(),
    }
}

#[test]
fn an_answer_dropped_before_the_waiter_looks_is_a_500_when_waited_for() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = Runtime::new(RuntimeConfig::for_tests(dir.path())).expect("runtime");
    let answer = dropped_answer(&rt).wait();
    assert_eq!(answer.status, 500);
    assert_eq!(answer.failure, Some(FailureKind::Host));
}

#[test]
fn an_answer_dropped_before_the_waiter_looks_is_a_500_when_awaited() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = Runtime::new(RuntimeConfig::for_tests(dir.path())).expect("runtime");
    let tokio_rt = tokio::runtime::Builder::new_current_thread().build().expect("tokio");
    let answer = tokio_rt.block_on(dropped_answer(&rt).recv());
    assert_eq!(answer.status, 500);
    assert_eq!(answer.failure, Some(FailureKind::Host));
}
