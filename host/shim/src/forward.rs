//! Forwarding a request to the node process that holds its actor
//! (docs/adr/028-node-processes.md). The runtime answers `holder-unreachable`
//! with the holder's address in [`HOLDER_HEADER`]; the dev server sends the
//! same request there once, marked with [`FORWARDED_HEADER`], and answers
//! with what the holder answered. A request that arrives marked is never
//! forwarded again: one hop at most, so two nodes that each believe the
//! other holds an actor answer 503 (retry) instead of passing it around.

use crate::{HOLDER_HEADER, HttpRequest, HttpResponse};
use axum::body::Bytes;
use http_body_util::{BodyExt as _, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
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

/// An HTTP client to other node processes (pooled connections).
#[derive(Clone)]
pub struct Forwarder {
    client: Client<HttpConnector, Full<Bytes>>,
}

impl Default for Forwarder {
    fn default() -> Self {
        Self {
            client: Client::builder(TokioExecutor::new()).build_http(),
        }
    }
}

/// Whether a request came forwarded from another node.
pub fn was_forwarded(headers: &[(String, String)]) -> bool {
    headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(FORWARDED_HEADER))
}

/// Where `answer` says the actor's holder answers, if it is worth forwarding to.
pub fn holder_of(answer: &HttpResponse) -> Option<&str> {
    answer
        .headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(HOLDER_HEADER))
        .map(|(_, v)| v.as_str())
}

impl Forwarder {
    /// Sends `req` for the actor at `actor_path` (`/<class>/<name>`) to the
    /// node at `address`, marked as forwarded by `from`; its answer, or why
    /// there is none.
    ///
    /// # Errors
    /// The holder could not be reached, or its answer not read.
    pub async fn forward(
        &self,
        address: &str,
        actor_path: &str,
        req: &HttpRequest,
        from: &str,
        max_body: usize,
    ) -> Result<HttpResponse, String> {
        let uri = format!("{}{actor_path}{}", address.trim_end_matches('/'), req.path);
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
            let answer = self.client.request(request).await.map_err(|e| e.to_string())?;
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
        })
    }
}
