//! Calls between actors: to one held by this node (its mailbox), by a node of
//! this process, or by another node process (`RemoteCalls`, ADR 034).

use super::*;

impl Host {
    /// Installs how calls reach actors held by other node processes; the
    /// first one installed stays (chosen once, at start-up).
    pub(crate) fn set_remote_calls(&self, remote: Arc<dyn crate::remote_calls::RemoteCalls>) -> bool {
        self.remote_calls.set(remote).is_ok()
    }

    pub(crate) fn call_blocking(
        self: &Arc<Self>,
        target: &ActorKey,
        caller: Option<ActorKey>,
        payload: Arc<Vec<u8>>,
        chain: Vec<ActorKey>,
        limit: Duration,
        route: CallRoute,
    ) -> Result<Vec<u8>, CallFailure> {
        let started = std::time::Instant::now();
        // Kept only where it may be carried to another node process: the
        // payload is shared, the caller and the chain (a few keys) copied.
        let remote = self.remote_calls.get().filter(|_| route == CallRoute::FromHere);
        let kept = remote.map(|_| RemoteCall {
            target: target.clone(),
            caller: caller.clone(),
            payload: payload.clone(),
            chain: chain.clone(),
            limit,
        });
        let answer = self.call_here(target, caller, payload, chain, limit);
        match (answer, remote, kept) {
            (
                Err(CallFailure::Failed {
                    kind: FailureKind::HolderUnreachable,
                    message,
                }),
                Some(remote),
                Some(mut call),
            ) => match self.remote_holder(target) {
                Some((_, Some(address))) => {
                    call.limit = limit.saturating_sub(started.elapsed());
                    remote.call(&address, call)
                }
                _ => Err(CallFailure::failed(FailureKind::HolderUnreachable, message)),
            },
            (answer, _, _) => answer,
        }
    }

    /// Queues the call on this node and waits for its answer.
    fn call_here(
        self: &Arc<Self>,
        target: &ActorKey,
        caller: Option<ActorKey>,
        payload: Arc<Vec<u8>>,
        chain: Vec<ActorKey>,
        limit: Duration,
    ) -> Result<Vec<u8>, CallFailure> {
        self.class(target).map_err(|e| CallFailure::Refused {
            kind: e.kind(),
            message: e.to_string(),
        })?;
        if chain.contains(target) {
            let path: Vec<String> = chain
                .iter()
                .chain(std::iter::once(target))
                .map(ToString::to_string)
                .collect();
            return Err(CallFailure::Refused {
                kind: FailureKind::CallCycle,
                message: format!(
                    "call cycle {}: the target is waiting on this call and would wait forever",
                    path.join(" → ")
                ),
            });
        }
        let (tx, rx) = mpsc::channel();
        let job = Job::new(
            GuestEvent::Call {
                caller,
                payload,
                reply: tx,
            },
            chain,
        );
        let ticket = job.ticket.clone();
        self.enqueue(target, job);
        // Never wait longer than the caller's event may run: two actors calling
        // each other at once would otherwise wait for each other forever. Look
        // for a shutdown meanwhile: a call still queued is answered at once.
        let until = std::time::Instant::now() + limit;
        loop {
            let step = until
                .saturating_duration_since(std::time::Instant::now())
                .min(Duration::from_millis(20));
            match rx.recv_timeout(step) {
                Ok(answer) => return answer,
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(CallFailure::failed(
                        FailureKind::Host,
                        "the callee's event ended without an answer",
                    ));
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if self.halted(&target.app) && job::take_ticket(&ticket, job::ABANDONED) {
                return Err(CallFailure::failed(FailureKind::ShuttingDown, job::SHUTTING_DOWN));
            }
            if std::time::Instant::now() >= until {
                return Err(CallFailure::failed(
                    FailureKind::CallTimedOut,
                    format!("{target} did not answer within {limit:?} (busy, or waiting on a call back to this chain)"),
                ));
            }
        }
    }
}
