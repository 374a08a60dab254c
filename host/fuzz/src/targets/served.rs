//! The dev server's router over a fresh runtime with the testee, driven
//! in-process: what the routing and admin JSON targets send requests to.

use tower::ServiceExt as _;

/// A runtime (virtual clock, temporary data directory) with the testee app,
/// the router over it, and a tokio runtime to drive requests; shut down when dropped.
pub(crate) struct ServedRouter {
    _dir: tempfile::TempDir,
    pub(crate) rt: wasmkeep_host::Runtime,
    router: axum::Router,
    tokio: tokio::runtime::Runtime,
}

impl ServedRouter {
    /// # Errors
    /// The testee is missing or does not load.
    pub(crate) fn new() -> anyhow::Result<Self> {
        let (dir, rt, router) = Self::host()?;
        let tokio = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        Ok(Self {
            _dir: dir,
            rt,
            router,
            tokio,
        })
    }

    fn host() -> anyhow::Result<(tempfile::TempDir, wasmkeep_host::Runtime, axum::Router)> {
        let dir = tempfile::tempdir()?;
        let rt = crate::testee_runtime(dir.path(), std::time::Duration::from_secs(5))?;
        let router = wasmkeep_shim::server::router(rt.clone(), crate::APP.into());
        Ok((dir, rt, router))
    }

    /// A fresh host (the virtual clock only moves forward; a new one starts over).
    ///
    /// # Errors
    /// The new host does not start.
    pub(crate) fn renew(&mut self) -> Result<(), String> {
        let (dir, rt, router) = Self::host().map_err(|e| format!("starting a new host: {e:#}"))?;
        self.rt.shutdown();
        self._dir = dir;
        self.rt = rt;
        self.router = router;
        Ok(())
    }

    /// Sends `req` through the router; the status and at most `limit` bytes of the body.
    pub(crate) fn send(&self, req: axum::http::Request<axum::body::Body>, limit: usize) -> (u16, String) {
        let router = self.router.clone();
        self.tokio.block_on(async move {
            let r = router.oneshot(req).await.expect("the router is infallible");
            let status = r.status().as_u16();
            let body = axum::body::to_bytes(r.into_body(), limit).await.unwrap_or_default();
            (status, String::from_utf8_lossy(&body).into_owned())
        })
    }
}

impl Drop for ServedRouter {
    fn drop(&mut self) {
        self.rt.shutdown();
    }
}
