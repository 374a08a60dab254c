//! One actor's worker: takes jobs from its mailbox one at a time and gives
//! each to the actor's cell ([`ActorCell::run_job`]). After a second with
//! nothing to do it gives back its thread and waits in the mailbox, parked,
//! until a job resumes it on a thread or the idle sweep hibernates the actor
//! at the idle timeout (ADR 044), having closed its database after ten
//! seconds (ADR 045); with an idle timeout under five seconds it
//! keeps its thread and hibernates the actor itself. On a single node, a
//! worker that ran a quick read while its actor's requests overlap parks at
//! once, and the next request runs on the thread that received it, without
//! a hand-off (ADR 048, ADR 059).

use crate::actor_cell::ActorCell;
use crate::job::{Job, WorkerJob};
use crate::node::Host;
use crate::scheduler::{Mailbox, ParkedRun, ParkedWorker, Resumed, WorkerEnd};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// Worker `id`'s loop: runs until the mailbox stays empty for the idle
/// timeout, or parks once it has waited [`RELEASE_AFTER`] (ADR 044).
pub(crate) fn run(host: &Arc<Host>, slot: &Arc<Mailbox>, rx: mpsc::Receiver<Job>, id: u64) -> WorkerEnd {
    let cell = ActorCell::new(Arc::clone(host), Arc::clone(slot));
    serve(Run {
        host: Arc::clone(host),
        slot: Arc::clone(slot),
        rx,
        cell,
        id,
        first: None,
    })
}

/// The worker's loop on a thread of its own. `ran_quick_read` says whether
/// the job it last ran was a request that wrote nothing and was quick, at a
/// time when the next request may run where it is received
/// (`RuntimeConfig::reads_here`): then, on a single node, a resident
/// actor's worker parks at once when nothing waits, so that the next
/// request runs on the thread that received it (ADR 048, ADR 059). After
/// a write or a slower read it looks for the next job first, as before.
fn serve(mut run: Run) -> WorkerEnd {
    let reads_here = run.host.config().reads_here;
    let mut ran_quick_read = false;
    loop {
        // While actors wait for a resident slot, an idle worker leaves at once.
        let idle = if run.host.scheduler().anyone_waiting() {
            Duration::ZERO
        } else {
            run.host.config().idle_timeout
        };
        let when_idle = run.when_idle(idle);
        let park_now = ran_quick_read
            && run.host.runs_requests_here()
            && run.requests_run_here_now()
            && when_idle == WhenIdle::Park;
        let waited = match run.first.take() {
            Some(job) => Ok(job),
            None => spin_then_wait(&run.rx, idle, when_idle, park_now),
        };
        let job = match waited {
            Ok(job) => job,
            Err(Waited::Idle) => {
                // A request after a quick read runs on the receiving thread.
                let runs_here = ran_quick_read && run.requests_run_here_now();
                match run.park(runs_here) {
                    Ok(()) => return WorkerEnd::Parked,
                    Err(came) => {
                        let (back, job) = *came;
                        run = back;
                        job
                    }
                }
            }
            Err(Waited::Timeout) => match run.slot.leave_unless_queued(&run.rx, || run.cell.hibernate()) {
                Some(job) => job,
                None => return WorkerEnd::Left,
            },
            Err(Waited::Disconnected) => {
                run.cell.hibernate();
                return WorkerEnd::Left;
            }
        };
        let job = match job.into_worker_job() {
            Err(job) => job,
            Ok(WorkerJob::Hibernate { done }) => {
                // Hibernated whatever comes next: a job that came meanwhile
                // opens the actor again, and goes through this loop (a
                // worker job among them is the worker's, not the cell's).
                let next = run
                    .slot
                    .close_then_leave_unless_queued(&run.rx, || run.cell.hibernate());
                let _ = done.send(());
                match next {
                    Some(next) => {
                        ran_quick_read = false;
                        run.first = Some(next);
                        continue;
                    }
                    None => return WorkerEnd::Left,
                }
            }
            Ok(WorkerJob::Barrier { done }) => {
                // Only a wait for what was queued: it changes nothing of the
                // above. A test host waits on one after each event and then
                // sends the next: where the worker would park now, it parks
                // first, so that the next request finds it parked, as a
                // client's would after any pause, and a test sees where
                // requests run without racing the park (ADR 048).
                if park_now {
                    let runs_here = run.requests_run_here_now();
                    match run.park(runs_here) {
                        Ok(()) => {
                            let _ = done.send(());
                            return WorkerEnd::Parked;
                        }
                        Err(came) => {
                            let (back, job) = *came;
                            run = back;
                            run.first = Some(job);
                        }
                    }
                }
                let _ = done.send(());
                continue;
            }
        };
        let lent_read = job.kind.is_lent_read();
        // Whether a request read only, and how long it took, matters only
        // when a quick read lets the next request run where it is received:
        // on a single node, by default while the actor's requests overlap
        // (ADR 059).
        let measured = reads_here
            .quick()
            .filter(|_| job.kind.is_request() && run.host.runs_requests_here() && run.requests_run_here_now())
            .map(|quick| (Instant::now(), run.cell.db_version(), quick));
        run.cell.run_job(job);
        ran_quick_read = measured.is_some_and(|(started, version, quick)| {
            version.is_some() && run.cell.db_version() == version && started.elapsed() <= quick
        });
        if lent_read && !run.cell.is_resident() {
            // A read of a hibernated actor left it hibernated: its worker
            // does not stay on to be listed as resident until the idle timeout.
            match run.slot.leave_unless_queued(&run.rx, || {}) {
                Some(next) => {
                    ran_quick_read = false;
                    run.first = Some(next);
                    continue;
                }
                None => return WorkerEnd::Left,
            }
        }
    }
}

/// A worker's run: what it goes on with on a thread, and what its mailbox
/// keeps of it while it is parked (ADR 044).
struct Run {
    host: Arc<Host>,
    slot: Arc<Mailbox>,
    rx: mpsc::Receiver<Job>,
    cell: ActorCell,
    id: u64,
    /// A job taken from the receiver that the run goes on with first: one
    /// that came while it ran on a caller's thread and that it does not
    /// run there.
    first: Option<Job>,
}

impl Run {
    /// Whether a request may run on the thread that receives it now, by the
    /// node's rule (`RuntimeConfig::reads_here`): by default while this
    /// actor's requests overlap (ADR 048, ADR 059).
    fn requests_run_here_now(&self) -> bool {
        self.host.config().reads_here.now(|| self.slot.overlap.recent())
    }

    /// What the worker does once it has waited [`RELEASE_AFTER`] with an
    /// idle timeout of `idle` (ADR 044).
    fn when_idle(&self, idle: Duration) -> WhenIdle {
        if !self.cell.is_resident() {
            // A worker whose actor is not open here (absent, held
            // elsewhere, given up, failed to open) has nothing to keep: it
            // ends now rather than hold a thread and a resident place for
            // the idle timeout, and the next job starts another.
            WhenIdle::Leave
        } else if idle >= PARK_FROM_IDLE_TIMEOUT {
            // Only with a long idle timeout does the idle sweep hibernate
            // a parked actor in time.
            WhenIdle::Park
        } else {
            WhenIdle::WaitOn
        }
    }

    /// Parks the run in its mailbox unless a job came
    /// ([`Mailbox::park_unless_queued`]); `runs_here`: the next request
    /// may run on the thread that receives it.
    ///
    /// # Errors
    /// A job came: the run comes back with it.
    fn park(self, runs_here: bool) -> Result<(), Box<(Self, Job)>> {
        let slot = Arc::clone(&self.slot);
        slot.park_unless_queued(self, |run| run.rx.try_recv().ok(), |run| run.into_parked(runs_here))
    }

    fn into_parked(self, runs_here: bool) -> ParkedWorker {
        ParkedWorker::new(self.id, runs_here, Box::new(self))
    }
}

impl ParkedRun for Run {
    fn resume(self: Box<Self>) -> WorkerEnd {
        serve(*self)
    }

    fn resume_here(self: Box<Self>) -> Resumed {
        let mut run = *self;
        let began = Instant::now();
        loop {
            let next = match run.first.take() {
                Some(job) => Ok(job),
                None => run.rx.try_recv(),
            };
            let job = match next {
                Ok(job) => job,
                Err(mpsc::TryRecvError::Empty) => {
                    if !run.cell.is_resident() {
                        // Nothing to keep (the request found no actor, or its
                        // files did not open): its thread decides when it ends.
                        return Resumed::ToThread(run.into_parked(false));
                    }
                    // Once requests stop overlapping, the next goes to the
                    // worker's thread, which then looks for the one after.
                    let here = run.requests_run_here_now();
                    match run.park(here) {
                        Ok(()) => return Resumed::Parked,
                        Err(came) => {
                            let (back, job) = *came;
                            run = back;
                            job
                        }
                    }
                }
                // Its thread's run sees the mailbox gone and ends.
                Err(mpsc::TryRecvError::Disconnected) => return Resumed::ToThread(run.into_parked(false)),
            };
            let job = match job.into_worker_job() {
                Err(job) => job,
                Ok(WorkerJob::Barrier { done }) => {
                    // A wait for what was queued: all of it has run.
                    let _ = done.send(());
                    continue;
                }
                // A hibernation runs on the worker's own thread.
                Ok(hibernate) => Job::new(hibernate, Vec::new()),
            };
            // Only requests run here, and only for a while: the caller's
            // thread serves other connections too.
            if !job.kind.is_request() || began.elapsed() >= HERE_FOR {
                run.first = Some(job);
                return Resumed::ToThread(run.into_parked(false));
            }
            let started = Instant::now();
            let version = run.cell.db_version();
            run.cell.run_job(job);
            run.host.metrics().inc(crate::metrics::REQUESTS_RUN_HERE_TOTAL, "");
            let quick = run.host.config().reads_here.quick().unwrap_or(Duration::ZERO);
            if started.elapsed() > quick || version.is_none() || run.cell.db_version() != version {
                // A slow request held the caller's thread; a write commits,
                // and a commit can checkpoint and sync for milliseconds. The
                // next requests go to the worker's own thread, which goes
                // there now, until one is a quick read again.
                return Resumed::ToThread(run.into_parked(false));
            }
        }
    }

    fn rest(&mut self) -> bool {
        self.cell.rest()
    }

    fn into_jobs(self: Box<Self>) -> (Option<Job>, mpsc::Receiver<Job>) {
        let Run { rx, first, cell, .. } = *self;
        drop(cell);
        (first, rx)
    }
}

/// What a worker does once it has waited [`RELEASE_AFTER`] for a job.
#[derive(Clone, Copy, PartialEq, Eq)]
enum WhenIdle {
    /// Its actor is not open here: it leaves.
    Leave,
    /// Its actor is resident and the idle timeout is long: it parks.
    Park,
    /// Its actor is resident and the idle timeout short: it keeps its
    /// thread and waits on, then hibernates the actor itself.
    WaitOn,
}

/// Why [`spin_then_wait`] came back without a job.
enum Waited {
    /// The idle timeout passed: the actor hibernates.
    Timeout,
    /// [`RELEASE_AFTER`] passed, the actor is resident and the idle timeout
    /// is long enough for the idle sweep to keep it: the worker may park.
    Idle,
    /// The mailbox's sender is gone.
    Disconnected,
}

impl From<mpsc::RecvTimeoutError> for Waited {
    fn from(e: mpsc::RecvTimeoutError) -> Self {
        match e {
            mpsc::RecvTimeoutError::Timeout => Waited::Timeout,
            mpsc::RecvTimeoutError::Disconnected => Waited::Disconnected,
        }
    }
}

/// Waits for the next job. A busy actor's next event often comes within
/// microseconds (one client, request after request); parking the thread and
/// waking it again costs more than that, so look briefly before parking.
/// After [`RELEASE_AFTER`] of waiting, the worker does what `when_idle`
/// says (ADR 044).
/// With `park_now` (a quick read just ran, on a single node, and the actor
/// is resident with a long idle timeout), the worker parks as soon as
/// nothing waits: the next request runs on the thread that received it
/// (ADR 048).
fn spin_then_wait(
    rx: &mpsc::Receiver<Job>,
    idle: Duration,
    when_idle: WhenIdle,
    park_now: bool,
) -> Result<Job, Waited> {
    if park_now {
        return match rx.try_recv() {
            Ok(job) => Ok(job),
            Err(mpsc::TryRecvError::Empty) => Err(Waited::Idle),
            Err(mpsc::TryRecvError::Disconnected) => Err(Waited::Disconnected),
        };
    }
    let spin_until = std::time::Instant::now() + SPIN;
    while std::time::Instant::now() < spin_until {
        match rx.try_recv() {
            Ok(job) => return Ok(job),
            Err(mpsc::TryRecvError::Disconnected) => return Err(Waited::Disconnected),
            Err(mpsc::TryRecvError::Empty) => std::thread::yield_now(),
        }
    }
    if idle <= RELEASE_AFTER {
        return rx.recv_timeout(idle).map_err(Waited::from);
    }
    match rx.recv_timeout(RELEASE_AFTER) {
        Err(mpsc::RecvTimeoutError::Timeout) => match when_idle {
            WhenIdle::Leave => Err(Waited::Timeout),
            WhenIdle::Park => Err(Waited::Idle),
            WhenIdle::WaitOn => rx.recv_timeout(idle - RELEASE_AFTER).map_err(Waited::from),
        },
        got => got.map_err(Waited::from),
    }
}

/// The shortest idle timeout at which an idle resident's worker parks: the
/// idle sweep that hibernates parked actors looks once a second, so it keeps
/// a timeout of this length to within a fifth (ADR 044).
pub(crate) const PARK_FROM_IDLE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a resident actor waits for an event before its worker parks
/// (ADR 044): long enough that a steady client's actor keeps its thread,
/// short against the idle timeout.
pub(crate) const RELEASE_AFTER: Duration = Duration::from_secs(1);

/// How long a worker looks for its next job before it parks.
const SPIN: Duration = Duration::from_micros(100);

/// How long a run on a caller's thread goes on taking requests that came
/// meanwhile before it hands the rest to the worker's own thread.
const HERE_FOR: Duration = Duration::from_micros(200);
