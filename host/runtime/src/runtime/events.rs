//! Events into a runtime: requests, calls and WebSocket traffic, and
//! waiting for an actor's queued events.

use super::*;
use crate::remote_calls::{CallRoute, RemoteCall, RemoteCalls};

impl Runtime {
    /// Delivers a request event from outside the app, as the dev server does.
    ///
    /// # Errors
    /// Unknown app or class; the class's access refuses it.
    pub fn request(&self, key: &ActorKey, req: HttpRequest) -> Result<PendingResponse, RuntimeError> {
        let require_existing = self.check_outside_access(key)? == Access::Existing;
        let (tx, rx) = oneshot::channel();
        let job = Job::new(
            GuestEvent::Request {
                req,
                respond: tx,
                require_existing,
            },
            Vec::new(),
        );
        let ticket = job.ticket.clone();
        self.host.enqueue(key, job);
        Ok(PendingResponse {
            rx,
            ticket: GiveUpIfDropped(ticket),
            host: self.host.clone(),
            app: key.app.clone(),
        })
    }

    /// Sends a request and waits for the answer.
    ///
    /// # Errors
    /// As [`Runtime::request`].
    pub fn request_blocking(&self, key: &ActorKey, req: HttpRequest) -> Result<HttpResponse, RuntimeError> {
        Ok(self.request(key, req)?.wait())
    }

    /// Runs `on-call` on an actor as the host (caller none) and waits for its answer.
    ///
    /// # Errors
    /// Unknown app or class. The call's own failure is the inner result.
    pub fn call(&self, key: &ActorKey, payload: Vec<u8>) -> Result<Result<Vec<u8>, CallFailure>, RuntimeError> {
        self.host.class(key)?;
        Ok(self.host.call_blocking(
            key,
            None,
            std::sync::Arc::new(payload),
            Vec::new(),
            self.host.config().event_timeout,
            CallRoute::FromHere,
        ))
    }

    /// Runs a call carried here from another node process (ADR 034): from
    /// `caller`, with the actors waiting on it in `chain`, for at most
    /// `limit`. It runs on this node or fails; it is never carried on.
    ///
    /// # Errors
    /// Unknown app or class. The call's own failure is the inner result
    /// (`holder-unreachable` when this node does not hold the actor either).
    pub fn call_arrived(&self, call: RemoteCall) -> Result<Result<Vec<u8>, CallFailure>, RuntimeError> {
        self.host.class(&call.target)?;
        let limit = call.limit.min(self.host.config().event_timeout);
        Ok(self.host.call_blocking(
            &call.target,
            call.caller,
            call.payload,
            call.chain,
            limit,
            CallRoute::Arrived,
        ))
    }

    /// Installs how this node's calls reach actors held by other node
    /// processes (ADR 034). Chosen once, at start-up: false when one was
    /// installed already (it stays).
    pub fn set_remote_calls(&self, remote: std::sync::Arc<dyn RemoteCalls>) -> bool {
        self.host.set_remote_calls(remote)
    }

    /// The live node process that holds `key`, when a node of another
    /// process holds it: a WebSocket for it is opened there
    /// (docs/adr/028-node-processes.md). `None` on a single node, for a node
    /// of this process, or when nobody else holds it.
    pub fn remote_holder(&self, key: &ActorKey) -> Option<crate::error::HeldElsewhere> {
        self.host
            .remote_holder(key)
            .map(|(node, address)| crate::error::HeldElsewhere {
                key: key.clone(),
                node,
                address,
            })
    }

    /// Opens a WebSocket to an actor; `on-socket-open` is queued.
    ///
    /// # Errors
    /// Unknown app or class; the class's access refuses it.
    pub fn open_socket(&self, key: &ActorKey, path: &str) -> Result<SocketHandle, RuntimeError> {
        if self.check_outside_access(key)? == Access::Existing {
            match self.host.exists(key) {
                Ok(true) => {}
                Ok(false) => return Err(RuntimeError::NoSuchActor(key.clone())),
                // A bucket that failed does not say the actor is absent: its
                // failure is the answer (503, by its kind), never a 404.
                Err(e) => return Err(RuntimeError::Storage(Box::new(e))),
            }
        }
        let (id, rx) = self.host.sockets().open(key);
        self.host.enqueue(
            key,
            Job::new(
                GuestEvent::SocketOpen {
                    id,
                    path: path.to_owned(),
                },
                Vec::new(),
            ),
        );
        Ok(SocketHandle { id, outbound: rx })
    }

    /// A message from a socket's client; `on-socket-message` is queued.
    ///
    /// # Errors
    /// The socket is not open.
    pub fn socket_message(&self, id: u64, msg: SocketMessage) -> Result<(), RuntimeError> {
        let key = self.host.sockets().actor_of(id).ok_or(RuntimeError::NoSuchSocket(id))?;
        self.host
            .enqueue(&key, Job::new(GuestEvent::SocketMessage { id, msg }, Vec::new()));
        Ok(())
    }

    /// A message from a socket's client, queued once the socket's inbound
    /// budget (1 MiB of messages waiting for the actor) has room: a
    /// connection that awaits this before reading the next message lets TCP
    /// slow a client that sends faster than its actor handles.
    ///
    /// # Errors
    /// The socket is not open (or closed while this waited).
    pub async fn socket_message_paced(&self, id: u64, msg: SocketMessage) -> Result<(), RuntimeError> {
        let (key, budget) = self
            .host
            .sockets()
            .actor_and_budget(id)
            .ok_or(RuntimeError::NoSuchSocket(id))?;
        let share = crate::sockets::message_size(&msg).min(crate::sockets::INBOUND_BUDGET);
        let share = budget
            .acquire_many_owned(u32::try_from(share).unwrap_or(u32::MAX))
            .await
            .map_err(|_| RuntimeError::NoSuchSocket(id))?;
        if !self.host.socket_belongs_to(&key, id) {
            return Err(RuntimeError::NoSuchSocket(id));
        }
        let mut job = Job::new(GuestEvent::SocketMessage { id, msg }, Vec::new());
        job.inbound_share = Some(share);
        self.host.enqueue(&key, job);
        Ok(())
    }

    /// The client closed the socket; `on-socket-close` is queued unless the
    /// actor or the host closed it first.
    pub fn socket_closed(&self, id: u64, code: u16, reason: &str) {
        let entry = self.host.sockets().remove(id);
        if let Some(e) = entry {
            self.host.enqueue(
                &e.key,
                Job::new(
                    GuestEvent::SocketClose {
                        id,
                        code,
                        reason: reason.to_owned(),
                    },
                    Vec::new(),
                ),
            );
        }
    }

    /// Waits until every event queued so far, for every actor with a worker
    /// here, has run (each actor's in turn, in the order of their keys): the
    /// ends of events a test did not send itself, such as those of the
    /// actors its actor called, are over before its next step (ADR 080).
    pub fn settle_all(&self) {
        let mut keys: Vec<ActorKey> = self.host.scheduler().keys();
        keys.sort();
        for key in keys {
            self.settle(&key);
        }
    }

    /// Waits until every event queued so far for `key` has run.
    pub fn settle(&self, key: &ActorKey) {
        // Nothing is queued where no worker runs: a barrier there would make
        // a mailbox, take a resident place (maybe evicting another actor) and
        // start a worker only to wait on it. A test host settles every node
        // after every event, most of which never held the actor.
        if !self.host.scheduler().has_queue(key) {
            return;
        }
        let (tx, rx) = oneshot::channel();
        self.host
            .enqueue(key, Job::new(WorkerJob::Barrier { done: tx }, Vec::new()));
        let _ = rx.blocking_recv();
    }
}
