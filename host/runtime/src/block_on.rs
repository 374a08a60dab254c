//! A minimal executor for the blocking halves of async APIs
//! ([`crate::runtime::PendingResponse::wait`]): polls a future on the calling
//! thread and parks it between wake-ups. Tokio's channels need no runtime to
//! be polled, so no runtime is started for a blocking wait.

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

struct Unpark(std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `f` to completion on this thread.
pub(crate) fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        // A spurious wake-up only polls once more.
        std::thread::park();
    }
}
