//! Forwarding a request to the node process that holds its actor
//! (docs/adr/028-node-processes.md). The runtime answers `holder-unreachable`
//! with the holder as a typed route ([`HttpResponse::held_elsewhere`]); the dev server sends the
//! same request there once, marked with [`FORWARDED_HEADER`], and answers
//! with what the holder answered. A request that arrives marked is never
//! forwarded again: one hop at most, so two nodes that each believe the
//! other holds an actor answer 503 (retry) instead of passing it around.

use crate::{HttpRequest, HttpResponse};
use axum::body::Bytes;
use http_body_util::{BodyExt as _, Full, Limited};
use std::time::Duration;

/// Marks a forwarded request, naming the node that forwarded it.
pub const FORWARDED_HEADER: &str = "wasmkeep-forwarded-by";

/// How long a forwarded request may take, end to end.
const FORWARD_TIMEOUT: Duration = Duration::from_secs(30);

/// Headers of the hop, not of the request or the answer.
const HOP_HEADERS: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "host",
    "content-length",
];

/// An HTTP client to other node processes (pooled connections), over TLS
/// when this process has it installed (crate::peer_tls).
#[derive(Clone)]
pub struct Forwarder {
    client: crate::peer_tls::PeerClient,
}

impl Default for Forwarder {
    fn default() -> Self {
        Self {
            client: crate::peer_tls::client(),
        }
    }
}

/// Whether a request came forwarded from another node.
pub fn was_forwarded(headers: &[(String, String)]) -> bool {
    headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(FORWARDED_HEADER))
}

/// Where `answer` says the actor's holder answers, if it is worth
/// forwarding to: a typed route the runtime sets, never a header.
pub fn holder_of(answer: &HttpResponse) -> Option<&str> {
    answer.held_elsewhere.as_ref().and_then(|h| h.address.as_deref())
}

impl Forwarder {
    /// Sends `req`, which came as `path_and_query` (`/<class>/<name>/…`,
    /// as the client wrote it), to the node at `address`, marked as forwarded
    /// by `from`; its answer, or why there is none.
    ///
    /// # Errors
    /// The holder could not be reached, or its answer not read.
    pub async fn forward(
        &self,
        address: &str,
        path_and_query: &str,
        req: &HttpRequest,
        from: &str,
        max_body: usize,
    ) -> Result<HttpResponse, String> {
        crate::peer_tls::check_address(address)?;
        let uri = format!("{}{path_and_query}", address.trim_end_matches('/'));
        let mut builder = hyper::Request::builder().method(req.method.as_str()).uri(&uri);
        for (k, v) in &req.headers {
            if !HOP_HEADERS.iter().any(|h| k.eq_ignore_ascii_case(h)) {
                builder = builder.header(k, v);
            }
        }
        let request = builder
            .header(FORWARDED_HEADER, from)
            .body(Full::new(Bytes::from(req.body.clone())))
            .map_err(|e| format!("the request to {uri} could not be built: {e}"))?;
        let sent = tokio::time::timeout(FORWARD_TIMEOUT, async {
            let answer = self
                .client
                .request(request)
                .await
                .map_err(|e| crate::peer_tls::explain(address, &e))?;
            let (parts, body) = answer.into_parts();
            let body = Limited::new(body, max_body)
                .collect()
                .await
                .map_err(|e| format!("reading the answer: {e}"))?
                .to_bytes();
            Ok::<_, String>((parts, body))
        })
        .await
        .map_err(|_| format!("{uri} did not answer within {} s", FORWARD_TIMEOUT.as_secs()))?;
        let (parts, body) = sent.map_err(|e| format!("{uri}: {e}"))?;
        let headers = parts
            .headers
            .iter()
            .filter(|(k, _)| !HOP_HEADERS.iter().any(|h| k.as_str().eq_ignore_ascii_case(h)))
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        Ok(HttpResponse {
            status: parts.status.as_u16(),
            headers,
            body: body.to_vec(),
            failure: None,
            held_elsewhere: None,
        })
    }
}

/// The WebSocket URL of `path_and_query` on the node process at `address`
/// (`http://…` gives `ws://…`, `https://…` gives `wss://…`).
pub fn socket_url(address: &str, path_and_query: &str) -> String {
    let address = address.trim_end_matches('/');
    let address = match address.split_once("://") {
        Some(("https", rest)) => format!("wss://{rest}"),
        Some(("http", rest)) => format!("ws://{rest}"),
        _ => address.to_owned(),
    };
    format!("{address}{path_and_query}")
}

/// A WebSocket opened on the node process that holds its actor, before the
/// client's own is accepted.
pub enum Upstream {
    /// Over plain TCP.
    Plain(Box<tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>>),
    /// Over the peers' mutual TLS (crate::peer_tls).
    Tls(Box<tokio_tungstenite::WebSocketStream<tokio_rustls::client::TlsStream<tokio::net::TcpStream>>>),
}

impl Upstream {
    /// Carries every message both ways between `client` and the holder,
    /// until either end closes.
    pub async fn carry(self, client: axum::extract::ws::WebSocket) {
        match self {
            Upstream::Plain(s) => pump(client, *s).await,
            Upstream::Tls(s) => pump(client, *s).await,
        }
    }
}

/// Opens the WebSocket at `url` (`ws://host:port/<class>/<name><path>`, or
/// `wss://…` over TLS) on the node process that holds its actor, marked as
/// forwarded by `from`. Once it is open, the holder has queued the socket's
/// open event.
///
/// # Errors
/// The holder could not be reached, refused the socket, or did not answer
/// within the forwarding timeout.
pub async fn connect_socket(url: &str, from: &str) -> Result<Upstream, String> {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
    crate::peer_tls::check_address(url)?;
    let mut request = url.into_client_request().map_err(|e| e.to_string())?;
    let from = hyper::header::HeaderValue::from_str(from).map_err(|e| e.to_string())?;
    request.headers_mut().insert(FORWARDED_HEADER, from);
    let connect = async {
        match crate::peer_tls::installed() {
            None => tokio_tungstenite::connect_async(request)
                .await
                .map(|(socket, _)| Upstream::Plain(Box::new(socket)))
                .map_err(|e| e.to_string()),
            Some(tls) => {
                let name = crate::peer_tls::server_name(url)?;
                let host = request
                    .uri()
                    .host()
                    .unwrap_or_default()
                    .trim_matches(['[', ']'])
                    .to_owned();
                let port = request.uri().port_u16().unwrap_or(443);
                let tcp = tokio::net::TcpStream::connect((host.as_str(), port))
                    .await
                    .map_err(|e| format!("connecting: {e}"))?;
                let _ = tcp.set_nodelay(true);
                let stream = tls
                    .connector()
                    .connect(name, tcp)
                    .await
                    .map_err(|e| crate::peer_tls::explain(url, &e))?;
                let (socket, _) = tokio_tungstenite::client_async(request, stream)
                    .await
                    .map_err(|e| e.to_string())?;
                Ok(Upstream::Tls(Box::new(socket)))
            }
        }
    };
    match tokio::time::timeout(FORWARD_TIMEOUT, connect).await {
        Ok(r) => r,
        Err(_) => Err(format!("no answer within {} s", FORWARD_TIMEOUT.as_secs())),
    }
}

/// Every message both ways between `client` and `upstream`, until either end closes.
async fn pump<S>(client: axum::extract::ws::WebSocket, upstream: tokio_tungstenite::WebSocketStream<S>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    use axum::extract::ws::{CloseFrame, Message};
    use futures_util::{SinkExt as _, StreamExt as _};
    let (mut up_tx, mut up_rx) = upstream.split();
    let (mut cl_tx, mut cl_rx) = client.split();
    let to_holder = async {
        while let Some(Ok(m)) = cl_rx.next().await {
            let closing = matches!(m, Message::Close(_));
            if up_tx.send(to_upstream(m)).await.is_err() || closing {
                break;
            }
        }
        let _ = up_tx.close().await;
    };
    let to_client = async {
        while let Some(Ok(m)) = up_rx.next().await {
            let Some(m) = from_upstream(m) else { continue };
            let closing = matches!(m, Message::Close(_));
            if cl_tx.send(m).await.is_err() || closing {
                break;
            }
        }
        let _ = cl_tx.close().await;
    };
    tokio::join!(to_holder, to_client);

    fn to_upstream(m: Message) -> tokio_tungstenite::tungstenite::Message {
        use tokio_tungstenite::tungstenite::Message as T;
        use tokio_tungstenite::tungstenite::protocol::CloseFrame as TFrame;
        match m {
            Message::Text(t) => T::text(t.as_str().to_owned()),
            Message::Binary(b) => T::binary(b),
            Message::Ping(b) => T::Ping(b),
            Message::Pong(b) => T::Pong(b),
            Message::Close(f) => T::Close(f.map(|f| TFrame {
                code: f.code.into(),
                reason: f.reason.as_str().to_owned().into(),
            })),
        }
    }

    fn from_upstream(m: tokio_tungstenite::tungstenite::Message) -> Option<Message> {
        use tokio_tungstenite::tungstenite::Message as T;
        Some(match m {
            T::Text(t) => Message::Text(t.as_str().to_owned().into()),
            T::Binary(b) => Message::Binary(b),
            T::Ping(b) => Message::Ping(b),
            T::Pong(b) => Message::Pong(b),
            T::Close(f) => Message::Close(f.map(|f| CloseFrame {
                code: f.code.into(),
                reason: f.reason.as_str().to_owned().into(),
            })),
            T::Frame(_) => return None,
        })
    }
}
