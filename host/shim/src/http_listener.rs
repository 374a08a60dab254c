//! Serves a router on a listener until told to stop, with what `axum::serve`
//! has no setting for: a client gets a bounded time to send a
//! request's headers (a client that opens connections and sends nothing, or
//! sends headers a byte at a time, would otherwise hold them forever). Each
//! connection knows its peer (`ConnectInfo`) for the admin API's access rule.
//! hyper-util's connection builder and graceful shutdown do the work.

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tower::ServiceExt as _;

/// Accepts connections until `stop` changes, then lets the open ones finish
/// (the caller bounds how long). A client has `header_read_timeout` to send a
/// request's headers once it connected or after its previous request.
pub(crate) async fn serve_until(
    listener: TcpListener,
    app: Router,
    header_read_timeout: Duration,
    mut stop: watch::Receiver<bool>,
) {
    let graceful = GracefulShutdown::new();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors, or the peer gave up: keep serving the others.
                    tracing::warn!("accepting a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = stop.changed() => break,
        };
        let _ = stream.set_nodelay(true);
        // The peer goes into each request's extensions; the router itself is
        // shared (a clone is a reference count), not layered anew per connection.
        let app = app.clone();
        let service = TowerToHyperService::new(tower::service_fn(move |mut req: axum::extract::Request<Incoming>| {
            req.extensions_mut().insert(ConnectInfo(peer));
            app.clone().oneshot(req)
        }));
        let mut builder = Builder::new(TokioExecutor::new());
        builder
            .http1()
            .timer(TokioTimer::new())
            .header_read_timeout(header_read_timeout);
        let connection = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), service)
            .into_owned();
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("connection from {peer}: {e}");
            }
        });
    }
    graceful.shutdown().await;
}
