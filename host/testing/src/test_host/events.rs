//! Events into a [`TestHost`]: requests, calls and sockets (with what the
//! actor sent each socket kept for the test), each through the chaos
//! schedule when one runs.

use super::chaos_applied::LOST_ANSWER;
use super::*;
use wasmkeep_host::FailureKind;

/// What a request was answered, and, for an answer of 500 or more, what
/// explains it (the harness prints it; `None` under chaos, which keeps it
/// for the seed's failure, or with `WASMKEEP_HARNESS_QUIET` set).
#[derive(Debug, Clone)]
pub struct TestAnswer {
    /// The answer.
    pub response: HttpResponse,
    /// The request and what the actor logged, for an answer of 500 or more.
    pub explanation: Option<String>,
}

impl TestHost {
    /// Sends a request event and waits for the answer and the event's end.
    /// `node` (a cluster's, from 1) is where it is sent: that node serves it
    /// or forwards it to the actor's holder. None: node 1, or under chaos
    /// the node the schedule draws.
    ///
    /// # Errors
    /// No such node; unknown app or class; the class's access refuses it.
    pub fn request(&self, key: &ActorKey, req: HttpRequest, node: Option<usize>) -> Result<TestAnswer, TestHostError> {
        if let Some(n) = node {
            self.node(n)?;
        }
        let (method, path) = (req.method.clone(), req.path.clone());
        let to = self.before_event(key, node, true)?;
        let answer = self.node(to.node)?.request_blocking(key, req);
        // The event's end (its removal; in a cluster the upload, on whichever
        // node ran it) comes after the answer: a test's next step sees it.
        self.settle(key)?;
        self.after_event(&to)?;
        let answer = answer?;
        let response = to.answer(answer);
        let explanation = self.explain_answer(key, &method, &path, node, response.status);
        Ok(TestAnswer { response, explanation })
    }

    /// Runs `on-call` as the host (caller none) and waits for its answer.
    ///
    /// # Errors
    /// Unknown app or class; the call's own failure is the inner result.
    pub fn call(&self, key: &ActorKey, payload: Vec<u8>) -> Result<Result<Vec<u8>, CallFailure>, TestHostError> {
        let to = self.before_event(key, None, false)?;
        let answer = self.node(to.node)?.call(key, payload)?;
        self.settle(key)?;
        Ok(if to.answer_lost {
            Err(CallFailure::Failed {
                kind: FailureKind::Event,
                message: LOST_ANSWER.into(),
            })
        } else {
            answer
        })
    }

    /// Opens a WebSocket to an actor (its `on-socket-open` runs); the socket's id.
    ///
    /// # Errors
    /// Unknown app or class; the class's access refuses it.
    pub fn open_socket(&self, key: &ActorKey, path: &str) -> Result<u64, TestHostError> {
        // Sockets are opened on node 1 (their ids are node 1's).
        self.before_event(key, Some(1), false)?;
        let handle = self.runtime()?.open_socket(key, path)?;
        let id = handle.id;
        lock(&self.sockets).insert(id, handle);
        Ok(id)
    }

    /// A client message to the actor (its `on-socket-message` runs).
    ///
    /// # Errors
    /// The socket is not open.
    pub fn socket_send(&self, id: u64, msg: SocketMessage) -> Result<(), TestHostError> {
        Ok(self.runtime()?.socket_message(id, msg)?)
    }

    /// The client closes the socket (the actor's `on-socket-close` runs).
    ///
    /// # Errors
    /// The host is closed.
    pub fn socket_close(&self, id: u64, code: u16, reason: &str) -> Result<(), TestHostError> {
        self.runtime()?.socket_closed(id, code, reason);
        Ok(())
    }

    /// What the actor sent the socket's client since the last look, in order.
    ///
    /// # Errors
    /// This host did not open the socket.
    pub fn socket_take(&self, id: u64) -> Result<Vec<Outbound>, TestHostError> {
        let mut out = Vec::new();
        while let Some(o) = self.socket_next(id)? {
            out.push(o);
        }
        Ok(out)
    }

    /// The next thing the actor sent the socket's client, if anything is waiting.
    ///
    /// # Errors
    /// This host did not open the socket.
    pub fn socket_next(&self, id: u64) -> Result<Option<Outbound>, TestHostError> {
        let mut sockets = lock(&self.sockets);
        let handle = sockets.get_mut(&id).ok_or(TestHostError::NoSuchSocket(id))?;
        Ok(handle.outbound.try_recv().ok())
    }

    /// Waits until the actor's queued events have run.
    ///
    /// # Errors
    /// The host is closed.
    pub fn settle(&self, key: &ActorKey) -> Result<(), TestHostError> {
        // In a cluster the event may have run on another node (forwarded to
        // the holder), whose end uploads the writes after the answer went
        // out: every node's mailbox is waited on.
        for n in 1..=self.node_count() {
            self.node(n)?.settle(key);
        }
        Ok(())
    }
}
