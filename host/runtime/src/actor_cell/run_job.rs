//! The one entry of a job into the cell: a guest event runs guest code
//! ([`ActorCell::run_guest_event`]), a host job runs the cell's own work
//! (`host_jobs`); the worker's own jobs are the worker's.

use super::ActorCell;
use crate::address::ActorKey;
use crate::event_error::{EventError, fail_job};
use crate::job::{ABANDONED, GuestEvent, Job, JobKind, RUNNING, Ticket, take_ticket};

/// Whether a job that stops with the app may start.
enum Start {
    /// It runs now.
    Run,
    /// The host or the app is stopping: it is answered without running.
    Halted,
    /// Its waiter answered it and gave up on it: nothing to do.
    GivenUp,
}

impl ActorCell {
    /// Runs one job from the mailbox. The shares it holds (of its socket's
    /// inbound budget, of its mailbox's bound) are given back once it has
    /// run or was skipped.
    pub(crate) fn run_job(&mut self, job: Job) {
        let Job {
            kind,
            chain,
            generation,
            ticket,
            inbound_share,
            queued_share,
        } = job;
        let _shares = (inbound_share, queued_share);
        match kind {
            JobKind::Guest(event) => match self.start(&ticket) {
                Start::Run => self.run_guest(event, chain, generation),
                Start::Halted => fail_job(JobKind::Guest(event), &EventError::ShuttingDown),
                Start::GivenUp => {}
            },
            JobKind::Host(job) if job.stops_with_the_app() => match self.start(&ticket) {
                Start::Run => self.run_host_job(job, chain),
                Start::Halted => fail_job(JobKind::Host(job), &EventError::ShuttingDown),
                Start::GivenUp => {}
            },
            JobKind::Host(job) => self.run_host_job(job, chain),
            // Run by the worker; one that reaches the cell waits for nothing more.
            JobKind::Worker(job) => job.answer(),
        }
    }

    /// Takes the ticket of a job that stops with the app: no new guest code
    /// once the host (ordered shutdown) or the app is stopping. A job that
    /// starts lets go of a stale instance first.
    fn start(&mut self, ticket: &Ticket) -> Start {
        if self.host.halted(&self.mailbox.key.app) {
            // Its waiter may have answered already.
            return if take_ticket(ticket, ABANDONED) {
                Start::Halted
            } else {
                Start::GivenUp
            };
        }
        if !take_ticket(ticket, RUNNING) {
            return Start::GivenUp;
        }
        self.let_go_if_stale();
        Start::Run
    }

    /// A guest event, unless it no longer has anything to run for.
    fn run_guest(&mut self, event: GuestEvent, chain: Vec<ActorKey>, generation: u64) {
        let event = match event {
            // Socket events of an actor deleted since they were queued, or for a socket
            // that is gone, run no guest code: they would create a new actor.
            GuestEvent::SocketOpen { id, .. } | GuestEvent::SocketMessage { id, .. }
                if generation != self.mailbox.generation() || !self.host.socket_belongs_to(&self.mailbox.key, id) =>
            {
                return;
            }
            GuestEvent::SocketClose { .. } if generation != self.mailbox.generation() => return,
            GuestEvent::Request {
                req,
                respond,
                require_existing: true,
            } => {
                // The one existence check of a request from outside to an
                // `existing` class. Open here, so it exists: no listing (in a
                // cluster, a bucket call per request).
                let exists = if self.is_resident() {
                    Ok(true)
                } else {
                    self.host.storage().exists(&self.mailbox.key)
                };
                match exists {
                    Ok(true) => GuestEvent::Request {
                        req,
                        respond,
                        require_existing: true,
                    },
                    // A failed listing never reads as "absent": it answers by its cause.
                    absent_or_unknown => {
                        let why = match absent_or_unknown {
                            Err(e) => EventError::Storage(e),
                            Ok(_) => EventError::NoSuchActor(self.mailbox.key.clone()),
                        };
                        let _ = respond.send(why.answer());
                        return;
                    }
                }
            }
            GuestEvent::Alarm { ran } => return self.run_alarm(ran, chain),
            other => other,
        };
        self.run_guest_event(event, chain);
    }
}
