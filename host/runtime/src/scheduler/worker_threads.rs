//! Threads for actors' workers, kept for a while after a worker ends so the
//! next wake does not start one (issue 25: starting a thread, with its
//! stack, signal stack, `rseq` and robust list, was a tenth of a Rust
//! actor's wake). A worker still has a thread to itself while it runs; only
//! an idle thread is shared, by the next worker to start.

use crate::unpoisoned::lock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

/// A worker's whole run, given to a thread. When no thread starts, the run
/// comes back unrun ([`NoThread`]), so that its owner can answer the jobs
/// it holds.
pub(crate) trait WorkerRun: Send + 'static {
    /// Runs it on the calling thread.
    fn run(self);
}

/// No thread waits and the system would not start one.
pub(crate) struct NoThread<R> {
    /// Why the system would not.
    pub(crate) error: std::io::Error,
    /// The run, not run.
    pub(crate) run: R,
}

/// The threads of one node's workers that are waiting for a worker to run.
pub(crate) struct WorkerThreads<R> {
    /// One entry per waiting thread: its id and where to send it a run.
    idle: Mutex<Vec<(u64, mpsc::SyncSender<R>)>>,
    next_id: AtomicU64,
    /// At most this many threads wait; one more ends at once.
    max_idle: usize,
    /// How long a thread waits for another run before it ends.
    linger: Duration,
    /// Set once the node shut down: a thread ends after its run instead of
    /// waiting for another.
    closed: AtomicBool,
    /// A test's stand-in for no thread waiting and the system refusing a
    /// new one (as it does at its limit on threads or memory), which no
    /// test can bring about.
    #[cfg(test)]
    pub(crate) refuse_new: std::sync::atomic::AtomicBool,
}

impl<R: WorkerRun> WorkerThreads<R> {
    /// Keeps up to `max_idle` threads for `linger` each.
    pub(crate) fn new(max_idle: usize, linger: Duration) -> Arc<Self> {
        Arc::new(Self {
            idle: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(0),
            max_idle,
            linger,
            closed: AtomicBool::new(false),
            #[cfg(test)]
            refuse_new: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Runs `run` on a waiting thread, or on a new one when none waits.
    ///
    /// # Errors
    /// No thread waits and the system would not start one: the run comes
    /// back, not run.
    pub(crate) fn run(self: &Arc<Self>, run: R) -> Result<(), NoThread<R>> {
        // As if no thread waited and the system would start none.
        #[cfg(test)]
        if self.refuse_new.load(Ordering::Relaxed) {
            let error = std::io::Error::from(std::io::ErrorKind::WouldBlock);
            return Err(NoThread { error, run });
        }
        let mut run = run;
        loop {
            let Some((_, waiting)) = lock(&self.idle).pop() else {
                break;
            };
            // A thread that ended meanwhile no longer receives: try the next.
            match waiting.send(run) {
                Ok(()) => return Ok(()),
                Err(mpsc::SendError(back)) => run = back,
            }
        }
        // The run waits here until the thread takes it: std drops a closure
        // whose thread did not start, and the run must outlive that.
        let handed = Arc::new(Mutex::new(Some(run)));
        let (me, theirs) = (self.clone(), handed.clone());
        let spawned = std::thread::Builder::new().name("actor worker".into()).spawn(move || {
            let first = lock(&theirs).take();
            if let Some(first) = first {
                me.serve(first);
            }
        });
        match spawned {
            Ok(_) => Ok(()),
            Err(error) => match lock(&handed).take() {
                Some(run) => Err(NoThread { error, run }),
                None => Ok(()),
            },
        }
    }

    /// Ends the waiting threads now, and each busy one after its run (the
    /// node shut down: ADR 060). A run handed out later still gets a
    /// thread, which ends after it.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        // A waiting thread whose sender is dropped ends at once. One that
        // finishes its run later takes the lock after this and sees `closed`.
        lock(&self.idle).clear();
    }

    /// A thread's life: its first run, then each run it is given while it
    /// waits, until none comes within the linger time.
    fn serve(self: Arc<Self>, first: R) {
        let mut run = first;
        loop {
            run.run();
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let (tx, rx) = mpsc::sync_channel(1);
            {
                let mut idle = lock(&self.idle);
                if idle.len() >= self.max_idle || self.closed.load(Ordering::Acquire) {
                    return;
                }
                idle.push((id, tx));
            }
            run = match rx.recv_timeout(self.linger) {
                Ok(next) => next,
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let mut idle = lock(&self.idle);
                    if let Some(at) = idle.iter().position(|(i, _)| *i == id) {
                        idle.remove(at);
                        return;
                    }
                    drop(idle);
                    // Taken off the list by a starter just now: its run is on the way.
                    match rx.recv() {
                        Ok(next) => next,
                        Err(_) => return,
                    }
                }
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of these tests: a closure.
    struct Closure(Box<dyn FnOnce() + Send>);

    impl WorkerRun for Closure {
        fn run(self) {
            (self.0)();
        }
    }

    fn closure(f: impl FnOnce() + Send + 'static) -> Closure {
        Closure(Box::new(f))
    }

    /// Waits until a thread is back on the idle list.
    fn until_one_waits(threads: &WorkerThreads<Closure>) {
        for _ in 0..500 {
            if !lock(&threads.idle).is_empty() {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn a_waiting_thread_takes_the_next_run() {
        let threads = WorkerThreads::new(4, Duration::from_secs(5));
        let (tx, rx) = mpsc::channel();
        let mut ids = std::collections::HashSet::new();
        for _ in 0..3 {
            let tx = tx.clone();
            threads
                .run(closure(move || tx.send(std::thread::current().id()).expect("send")))
                .unwrap_or_else(|_| panic!("no thread"));
            ids.insert(rx.recv().expect("ran"));
            until_one_waits(&threads);
        }
        assert_eq!(ids.len(), 1, "runs one after another reuse one thread");
    }

    #[test]
    fn every_run_runs_when_threads_linger_briefly() {
        // Threads end while runs are handed out: none may be lost.
        let threads = WorkerThreads::new(2, Duration::from_micros(50));
        let (tx, rx) = mpsc::channel();
        for i in 0..2_000 {
            let tx = tx.clone();
            if threads.run(closure(move || tx.send(i).expect("send"))).is_err() {
                panic!("no thread for run {i}");
            }
            if i % 7 == 0 {
                std::thread::sleep(Duration::from_micros(60));
            }
        }
        drop(tx);
        let mut got: Vec<i32> = rx.iter().collect();
        got.sort_unstable();
        assert_eq!(got, (0..2_000).collect::<Vec<_>>());
    }

    #[test]
    fn no_more_than_max_idle_threads_wait() {
        let threads = WorkerThreads::new(2, Duration::from_secs(5));
        let (tx, rx) = mpsc::channel();
        let gate = Arc::new(std::sync::Barrier::new(5));
        for _ in 0..5 {
            let (tx, gate) = (tx.clone(), gate.clone());
            threads
                .run(closure(move || {
                    gate.wait();
                    tx.send(()).expect("send");
                }))
                .unwrap_or_else(|_| panic!("no thread"));
        }
        for _ in 0..5 {
            rx.recv().expect("ran");
        }
        std::thread::sleep(Duration::from_millis(50));
        assert!(lock(&threads.idle).len() <= 2);
    }

    #[test]
    fn closed_threads_end_waiting_or_after_their_run_and_later_runs_still_run() {
        let threads = WorkerThreads::new(4, Duration::from_secs(60));
        let (tx, rx) = mpsc::channel();
        // One thread waits; one is in its run when the threads close.
        let waiting = tx.clone();
        threads
            .run(closure(move || waiting.send(None).expect("send")))
            .unwrap_or_else(|_| panic!("no thread"));
        rx.recv().expect("ran");
        until_one_waits(&threads);
        let (go, gate) = mpsc::channel::<()>();
        let busy = tx.clone();
        threads
            .run(closure(move || {
                gate.recv().expect("gate");
                busy.send(None).expect("send");
            }))
            .unwrap_or_else(|_| panic!("no thread"));
        threads.close();
        go.send(()).expect("go");
        rx.recv().expect("ran");
        // Both threads end long before the minute's linger: the threads'
        // list and each thread's own reference are all that is left.
        for _ in 0..500 {
            if Arc::strong_count(&threads) == 1 {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        assert_eq!(Arc::strong_count(&threads), 1, "no thread holds the list any more");
        assert!(lock(&threads.idle).is_empty());
        // A run handed out after the close still runs.
        let late = tx.clone();
        threads
            .run(closure(move || {
                late.send(Some(std::thread::current().id())).expect("send")
            }))
            .unwrap_or_else(|_| panic!("no thread"));
        assert!(rx.recv().expect("ran").is_some());
    }

    #[test]
    fn a_run_no_thread_takes_comes_back_unrun() {
        let threads = WorkerThreads::new(2, Duration::from_secs(5));
        threads.refuse_new.store(true, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel();
        let Err(no) = threads.run(closure(move || tx.send(()).expect("send"))) else {
            panic!("a thread started");
        };
        assert!(rx.try_recv().is_err(), "it did not run");
        // It is whole: it runs once a thread takes it.
        threads.refuse_new.store(false, Ordering::Relaxed);
        if threads.run(no.run).is_err() {
            panic!("no thread");
        }
        rx.recv_timeout(Duration::from_secs(5)).expect("ran");
    }
}
