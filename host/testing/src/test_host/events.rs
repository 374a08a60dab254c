//! Events into a [`TestHost`]: requests, calls and sockets (with what the
//! actor sent each socket kept for the test), each through the chaos
//! schedule when one runs.

use super::chaos_applied::LOST_ANSWER;
use super::*;

impl TestHost {
    /// Sends a request to node `n`, which serves it or forwards it to the
    /// actor's holder; waits for the answer and the event's end.
    ///
    /// # Errors
    /// No such node; as [`TestHost::request`].
    pub fn request_on(
        &self,
        n: usize,
        key: &ActorKey,
        method: &str,
        path: &str,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    ) -> Result<HttpResponse, TestHostError> {
        self.node(n)?;
        let to = self.before_event(key, Some(n))?;
        let mut req = HttpRequest::new(method, path, body);
        req.headers = headers;
        let answer = self.node(to.node)?.request_blocking(key, req)?;
        self.settle(key)?;
        Ok(to.answer(answer))
    }

    /// Sends a request event and waits for the answer and the event's end.
    ///
    /// # Errors
    /// Unknown app or class; the class's access refuses it.
    pub fn request(
        &self,
        key: &ActorKey,
        method: &str,
        path: &str,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    ) -> Result<HttpResponse, TestHostError> {
        let to = self.before_event(key, None)?;
        let mut req = HttpRequest::new(method, path, body);
        req.headers = headers;
        let answer = self.node(to.node)?.request_blocking(key, req)?;
        // The event's end (its removal; in a cluster the upload, on whichever
        // node ran it) comes after the answer: a test's next step sees it.
        self.settle(key)?;
        Ok(to.answer(answer))
    }

    /// Runs `on-call` as the host (caller none) and waits for its answer.
    ///
    /// # Errors
    /// Unknown app or class; the call's own failure is the inner result.
    pub fn call(&self, key: &ActorKey, payload: Vec<u8>) -> Result<Result<Vec<u8>, CallFailure>, TestHostError> {
        let to = self.before_event(key, None)?;
        let answer = self.node(to.node)?.call(key, payload)?;
        self.settle(key)?;
        Ok(if to.answer_lost {
            Err(CallFailure::Failed(LOST_ANSWER.into()))
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
        self.before_event(key, Some(1))?;
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
