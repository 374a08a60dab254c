//! The scheduler on its own, with a worker loop that runs no actor: it
//! notes each job it gets, and leaves when its mailbox stays empty (through
//! `leave_unless_queued`, as the worker does) or, unlike the worker, at once
//! when it is asked to hibernate, dropping what waits behind. What these hold is the scheduler's part of ADR 012 and
//! ADR 044: a job starts a worker, a full mailbox gives an event back, the
//! resident cap makes a mailbox wait for the place an evicted worker frees,
//! and past the cap's queue a job is answered `overloaded`. A second fake
//! worker parks after each job (ADR 044): the next job resumes its run on a
//! thread, and the idle sweep rests it once (ADR 045) and then hibernates it.
//! A worker no thread takes has its jobs answered (ADR 052).
//! A mailbox's state moves only by its transitions, and a worker leaves only
//! when nothing came for it.

use super::{Scheduler, StartWorker, WorkerEnd};
use crate::address::ActorKey;
use crate::http_types::HttpRequest;
use crate::job::{GuestEvent, Job, JobKind, WorkerJob};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

fn key(name: &str) -> ActorKey {
    ActorKey::new("t/app", "c", name)
}

/// An alarm job, and what its waiter hears: `Ok(false)` when the scheduler
/// answered it without running it (the fake worker keeps what it takes
/// unanswered).
fn alarm() -> (Job, oneshot::Receiver<bool>) {
    let (ran, heard) = oneshot::channel();
    (Job::new(GuestEvent::Alarm { ran }, Vec::new()), heard)
}

/// A worker loop that notes `<name> <job>` for each job it takes. It leaves
/// when it is asked to hibernate, unless `stubborn` is set, or after
/// `idle` with nothing to do.
fn noting_worker(seen: mpsc::Sender<String>, idle: Duration, stubborn: Arc<AtomicBool>) -> StartWorker {
    let seen = Mutex::new(seen);
    Box::new(move |mailbox, jobs, _id| {
        // What it took, kept as a running event keeps its place in the
        // mailbox's bound, until the worker leaves.
        let mut kept = Vec::new();
        loop {
            let Ok(job) = jobs.recv_timeout(idle) else {
                match mailbox.leave_unless_queued(&jobs, || {}) {
                    Some(job) => {
                        kept.push(job);
                        continue;
                    }
                    None => return WorkerEnd::Left,
                }
            };
            if matches!(job.kind, JobKind::Worker(WorkerJob::Hibernate { .. })) && !stubborn.load(Ordering::SeqCst) {
                mailbox.lock().worker_left();
                if let JobKind::Worker(hibernate) = job.kind {
                    hibernate.answer();
                }
                return WorkerEnd::Left;
            }
            let label = match &job.kind {
                JobKind::Guest(event) => event.label(),
                _ => "other",
            };
            kept.push(job);
            let _ = crate::unpoisoned::lock(&seen).send(format!("{} {label}", mailbox.key.name));
        }
    })
}

fn scheduler(
    max_resident: usize,
    idle: Duration,
    stubborn: &Arc<AtomicBool>,
) -> (Arc<Scheduler>, mpsc::Receiver<String>) {
    let (tx, seen) = mpsc::channel();
    let start = noting_worker(tx, idle, Arc::clone(stubborn));
    (Arc::new(Scheduler::new(max_resident, start, Arc::default())), seen)
}

fn until(what: &str, f: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !f() {
        assert!(Instant::now() < deadline, "{what} within 10 s");
        std::thread::sleep(Duration::from_millis(5));
    }
}

const SOON: Duration = Duration::from_secs(10);

#[test]
fn a_job_starts_a_worker_and_one_after_it_left_starts_another() {
    let (s, seen) = scheduler(4, Duration::from_millis(20), &Arc::default());
    let (job, _) = alarm();
    assert!(s.enqueue(&key("a"), job, false).is_ok());
    assert_eq!(seen.recv_timeout(SOON).as_deref(), Ok("a alarm"));
    until("the idle worker leaves", || !s.has_queue(&key("a")));
    let (job, _) = alarm();
    assert!(s.enqueue(&key("a"), job, false).is_ok());
    assert_eq!(
        seen.recv_timeout(SOON).as_deref(),
        Ok("a alarm"),
        "a new worker runs it"
    );
}

#[test]
fn a_full_mailbox_gives_an_outside_event_back_unanswered() {
    let (s, seen) = scheduler(4, Duration::from_secs(60), &Arc::default());
    let request = |bytes: usize| {
        let (respond, _) = oneshot::channel();
        let req = HttpRequest {
            method: "POST".into(),
            path: "/".into(),
            headers: Vec::new(),
            body: vec![0; bytes],
        };
        Job::new(
            GuestEvent::Request {
                req,
                respond,
                require_existing: false,
            },
            Vec::new(),
        )
    };
    // One runs (its worker keeps it), so the next is held to the bound.
    assert!(s.enqueue(&key("a"), request(1), false).is_ok());
    assert_eq!(seen.recv_timeout(SOON).as_deref(), Ok("a request"));
    let job = request(super::queue_bound::MAILBOX_BYTES);
    let refused = s.enqueue(&key("a"), job, false).expect_err("refused");
    assert!(refused.0.kind.is_request(), "the request itself comes back");
}

#[test]
fn at_the_resident_cap_a_mailbox_waits_for_the_place_its_evicted_worker_frees() {
    let (s, seen) = scheduler(1, Duration::from_secs(60), &Arc::default());
    let (job, _) = alarm();
    assert!(s.enqueue(&key("a"), job, false).is_ok());
    assert_eq!(seen.recv_timeout(SOON).as_deref(), Ok("a alarm"));
    // a's worker stays (its idle time is long): b waits, and a is asked to hibernate.
    let (job, _) = alarm();
    assert!(s.enqueue(&key("b"), job, false).is_ok());
    assert_eq!(seen.recv_timeout(SOON).as_deref(), Ok("b alarm"), "b runs once a left");
    assert!(!s.has_queue(&key("a")), "a's worker left");
}

#[test]
fn past_the_cap_s_queue_a_job_is_answered_without_running() {
    let stubborn = Arc::new(AtomicBool::new(true));
    let (s, seen) = scheduler(1, Duration::from_secs(60), &stubborn);
    let (job, _) = alarm();
    assert!(s.enqueue(&key("a"), job, false).is_ok());
    assert_eq!(seen.recv_timeout(SOON).as_deref(), Ok("a alarm"));
    // a keeps its place (it ignores the hibernation), b waits, and the
    // queue of waiting mailboxes is as long as the cap: c is refused.
    let (job, _) = alarm();
    assert!(s.enqueue(&key("b"), job, false).is_ok());
    let (job, heard) = alarm();
    assert!(s.enqueue(&key("c"), job, false).is_ok());
    assert_eq!(heard.blocking_recv(), Ok(false), "c's alarm is answered as not run");
    assert!(!s.has_queue(&key("c")), "c has no worker");
    stubborn.store(false, Ordering::SeqCst);
}

/// A worker that parks after each job it notes (ADR 044), as a resident
/// actor's worker does after its second of waiting; a hibernation ends it.
struct ParkingRun {
    mailbox: Arc<super::Mailbox>,
    jobs: mpsc::Receiver<Job>,
    id: u64,
    seen: mpsc::Sender<String>,
    rests: Arc<std::sync::atomic::AtomicUsize>,
}

impl ParkingRun {
    fn serve(self) -> WorkerEnd {
        let Ok(job) = self.jobs.recv_timeout(SOON) else {
            let _ = self.mailbox.leave_unless_queued(&self.jobs, || {});
            return WorkerEnd::Left;
        };
        if let JobKind::Worker(WorkerJob::Hibernate { done }) = job.kind {
            self.mailbox.lock().worker_left();
            let _ = done.send(());
            return WorkerEnd::Left;
        }
        let _ = self.seen.send(format!("{} parks", self.mailbox.key.name));
        let mailbox = Arc::clone(&self.mailbox);
        match mailbox.park_unless_queued(self, |run| run.jobs.try_recv().ok(), ParkingRun::into_parked) {
            Ok(()) => WorkerEnd::Parked,
            Err(came) => {
                let (run, _job) = *came;
                let _ = run.seen.send(format!("{} found a job instead", run.mailbox.key.name));
                WorkerEnd::Left
            }
        }
    }

    fn into_parked(self) -> super::ParkedWorker {
        super::ParkedWorker::new(self.id, false, Box::new(self))
    }
}

impl super::ParkedRun for ParkingRun {
    fn resume(self: Box<Self>) -> WorkerEnd {
        self.serve()
    }

    fn resume_here(self: Box<Self>) -> super::Resumed {
        unreachable!("the tests never let a request run where it is received")
    }

    fn rest(&mut self) -> bool {
        self.rests.fetch_add(1, Ordering::SeqCst);
        true
    }

    fn into_jobs(self: Box<Self>) -> (Option<Job>, mpsc::Receiver<Job>) {
        (None, self.jobs)
    }
}

fn parking_scheduler() -> (
    Arc<Scheduler>,
    mpsc::Receiver<String>,
    Arc<std::sync::atomic::AtomicUsize>,
) {
    let (tx, seen) = mpsc::channel();
    let rests = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (tx, counted) = (Mutex::new(tx), Arc::clone(&rests));
    let start: StartWorker = Box::new(move |mailbox, jobs, id| {
        let seen = crate::unpoisoned::lock(&tx).clone();
        ParkingRun {
            mailbox: Arc::clone(mailbox),
            jobs,
            id,
            seen,
            rests: Arc::clone(&counted),
        }
        .serve()
    });
    (Arc::new(Scheduler::new(4, start, Arc::default())), seen, rests)
}

#[test]
fn a_parked_worker_is_resumed_on_a_thread_by_its_next_job() {
    let (s, seen, _) = parking_scheduler();
    let (job, _) = alarm();
    assert!(s.enqueue(&key("a"), job, false).is_ok());
    assert_eq!(seen.recv_timeout(SOON).as_deref(), Ok("a parks"));
    until("the worker parks", || s.mailbox(&key("a")).lock().parked().is_some());
    assert!(s.has_queue(&key("a")), "a parked worker keeps its mailbox's queue");
    let (job, _) = alarm();
    assert!(s.enqueue(&key("a"), job, false).is_ok());
    assert_eq!(
        seen.recv_timeout(SOON).as_deref(),
        Ok("a parks"),
        "the same run goes on with it"
    );
}

#[test]
fn the_idle_sweep_rests_a_parked_worker_once_then_hibernates_it() {
    let (s, seen, rests) = parking_scheduler();
    let (job, _) = alarm();
    assert!(s.enqueue(&key("a"), job, false).is_ok());
    assert_eq!(seen.recv_timeout(SOON).as_deref(), Ok("a parks"));
    let mailbox = s.mailbox(&key("a"));
    until("the worker parks", || mailbox.lock().parked().is_some());
    let hour = Duration::from_secs(3_600);
    assert_eq!(s.sweep_idle(Duration::ZERO, hour), 1, "rested");
    assert_eq!(s.sweep_idle(Duration::ZERO, hour), 0, "not twice");
    assert_eq!(rests.load(Ordering::SeqCst), 1);
    assert_eq!(
        s.sweep_idle(Duration::ZERO, Duration::ZERO),
        0,
        "a hibernation closes nothing here"
    );
    until("the resumed worker hibernates and leaves", || !s.has_queue(&key("a")));
}

#[test]
fn a_worker_no_thread_takes_has_its_jobs_answered_and_leaves_no_queue() {
    let (s, seen) = scheduler(4, Duration::from_secs(60), &Arc::default());
    s.refuse_new_threads(true);
    let (job, heard) = alarm();
    assert!(s.enqueue(&key("a"), job, false).is_ok());
    assert_eq!(heard.blocking_recv(), Ok(false), "the alarm is answered as not run");
    assert!(!s.has_queue(&key("a")), "no worker holds the mailbox");
    s.refuse_new_threads(false);
    let (job, _) = alarm();
    assert!(s.enqueue(&key("a"), job, false).is_ok());
    assert_eq!(
        seen.recv_timeout(SOON).as_deref(),
        Ok("a alarm"),
        "the next job starts a worker"
    );
}

#[test]
fn a_mailbox_s_status_moves_only_by_its_transitions() {
    use super::ActorStatus::{Deleted, Hibernated, Resident};
    let mailbox = super::Mailbox::new(key("a"));
    let mut state = mailbox.lock();
    assert_eq!(
        state.as_listed(),
        (Hibernated, None),
        "a new mailbox: only files, if any"
    );
    let (tx, _rx) = mpsc::channel();
    state.worker_given(tx.clone());
    assert_eq!(
        state.as_listed(),
        (Resident, None),
        "a mailbox with a worker lists as resident"
    );
    state.held_by("n2".into());
    assert_eq!(
        state.as_listed(),
        (Resident, Some("n2".into())),
        "its worker found it on n2"
    );
    state.opened();
    assert_eq!(state.as_listed(), (Resident, None), "opened here, held nowhere else");
    state.worker_left();
    assert_eq!(
        (state.status(), state.has_worker()),
        (Hibernated, false),
        "a resident one hibernates"
    );
    state.worker_given(tx);
    state.opened();
    state.deleted();
    state.worker_left();
    assert_eq!(
        state.status(),
        Deleted,
        "a deleted one stays deleted when its worker leaves"
    );
}

#[test]
fn a_worker_leaves_only_when_nothing_came_for_it() {
    let mailbox = super::Mailbox::new(key("a"));
    let (tx, rx) = mpsc::channel();
    mailbox.lock().worker_given(tx.clone());
    let (job, _) = alarm();
    assert!(tx.send(job).is_ok());
    let mut left = false;
    assert!(
        mailbox.leave_unless_queued(&rx, || left = true).is_some(),
        "the job that came"
    );
    assert!(!left && mailbox.lock().has_worker(), "the worker stays for it");
    assert!(mailbox.leave_unless_queued(&rx, || left = true).is_none());
    assert!(left && !mailbox.lock().has_worker(), "then it leaves");
}

#[test]
fn a_worker_parks_only_when_nothing_came_for_it() {
    let mailbox = Arc::new(super::Mailbox::new(key("a")));
    let (tx, rx) = mpsc::channel();
    mailbox.lock().worker_given(tx.clone());
    let (seen, _) = mpsc::channel();
    let run = ParkingRun {
        mailbox: Arc::clone(&mailbox),
        jobs: rx,
        id: 1,
        seen,
        rests: Arc::default(),
    };
    let (job, _) = alarm();
    assert!(tx.send(job).is_ok());
    let Err(came) = mailbox.park_unless_queued(run, |run| run.jobs.try_recv().ok(), ParkingRun::into_parked) else {
        panic!("a worker with a job waiting does not park");
    };
    let (run, _job) = *came;
    assert!(mailbox.lock().parked().is_none(), "nothing parked while a job came");
    assert!(
        mailbox
            .park_unless_queued(run, |run| run.jobs.try_recv().ok(), ParkingRun::into_parked)
            .is_ok()
    );
    assert!(mailbox.lock().parked().is_some(), "then it parks");
}
