//! Serves a router on a listener until told to stop, with what `axum::serve`
//! has no setting for: a client gets a bounded time to send a
//! request's headers (a client that opens connections and sends nothing, or
//! sends headers a byte at a time, would otherwise hold them forever). Each
//! connection knows its peer (`ConnectInfo`) for the admin API's access rule.
//! hyper-util's connection builder and graceful shutdown do the work. A node
//! process's peer listener takes TLS first (ADR 074): a peer that shows no
//! certificate the cluster CA signed is refused in the handshake, which has
//! the same bounded time as the headers.

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
/// request's headers once it connected or after its previous request, and
/// with `tls` as long again to finish the handshake first.
pub(crate) async fn serve_until(
    listener: TcpListener,
    app: Router,
    header_read_timeout: Duration,
    tls: Option<&'static wasmkeep_shim::peer_tls::PeerTls>,
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
        let Some(tls) = tls else {
            let connection = builder
                .serve_connection_with_upgrades(TokioIo::new(stream), service)
                .into_owned();
            let connection = graceful.watch(connection);
            tokio::spawn(async move {
                if let Err(e) = connection.await {
                    tracing::debug!("connection from {peer}: {e}");
                }
            });
            continue;
        };
        let watcher = graceful.watcher();
        let acceptor = tls.acceptor();
        tokio::spawn(async move {
            let stream = match tokio::time::timeout(header_read_timeout, acceptor.accept(stream)).await {
                Ok(Ok(s)) => s,
                Ok(Err(e)) => {
                    let ours_refused = e
                        .get_ref()
                        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
                        .is_some_and(|r| matches!(r, rustls::Error::AlertReceived(_)));
                    if ours_refused {
                        tracing::warn!(
                            "a peer at {peer} refused this node's certificate: {e} (its --tls-ca must be the CA \
                             that signed this node's, {})",
                            tls.ca().display()
                        );
                    } else {
                        tracing::warn!(
                            "refused a peer's connection from {peer}: {e} (a node process needs a certificate \
                             signed by the cluster CA, {})",
                            tls.ca().display()
                        );
                    }
                    return;
                }
                Err(_) => {
                    tracing::debug!("a TLS handshake from {peer} did not finish in {header_read_timeout:?}");
                    return;
                }
            };
            let connection = builder
                .serve_connection_with_upgrades(TokioIo::new(stream), service)
                .into_owned();
            if let Err(e) = watcher.watch(connection).await {
                tracing::debug!("connection from {peer}: {e}");
            }
        });
    }
    graceful.shutdown().await;
}
