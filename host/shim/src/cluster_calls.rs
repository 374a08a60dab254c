//! Calls between node processes (ADR 034). When an actor calls another that
//! a node of another process holds, the runtime hands the call to
//! [`HttpRemoteCalls`], which posts it to the holder's `/_cluster/call`; the
//! holder runs it with [`wasmkeep_host::Runtime::call_arrived`] (never
//! carrying it on) and answers with the callee's answer or failure, kind
//! kept. The route is no actor's and no admin's: a node process shows the
//! cluster's token, kept in the bucket (`cluster/secret`), since a call names
//! its caller and a client must not pass for an actor.

use crate::forward::FORWARDED_HEADER;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse as _, Response};
use http_body_util::{BodyExt as _, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;
use wasmkeep_host::bucket::{BucketError, ObjectStore, PutCondition};
use wasmkeep_host::{ActorKey, CallFailure, FailureKind, RemoteCall, RemoteCalls, Runtime};

/// The route a node process takes calls carried from another on.
pub const CALL_PATH: &str = "/_cluster/call";

/// The header that carries the cluster's token.
pub const TOKEN_HEADER: &str = "wasmkeep-cluster-token";

/// The largest call or answer carried: a payload of the request body limit,
/// hex-encoded, and its envelope.
const MAX_CARRIED: usize = 2 * crate::server::MAX_BODY + (64 << 10);

/// Time a carried call may take past the caller's own limit: the hop itself.
const HOP_SLACK: Duration = Duration::from_secs(2);

/// A call as it goes over the wire.
#[derive(Serialize, Deserialize)]
struct CarriedCall {
    target: ActorKey,
    caller: Option<ActorKey>,
    chain: Vec<ActorKey>,
    limit_ms: u64,
    /// Hex: JSON has no bytes.
    payload: String,
}

/// A call's answer as it comes back.
#[derive(Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
enum CarriedAnswer {
    Ok { payload: String },
    Refused { kind: String, message: String },
    Rejected { message: String },
    Failed { kind: String, message: String },
}

impl From<Result<Vec<u8>, CallFailure>> for CarriedAnswer {
    fn from(answer: Result<Vec<u8>, CallFailure>) -> Self {
        match answer {
            Ok(payload) => CarriedAnswer::Ok {
                payload: hex::encode(payload),
            },
            Err(CallFailure::Refused { kind, message }) => CarriedAnswer::Refused {
                kind: kind.as_str().to_owned(),
                message,
            },
            Err(CallFailure::Rejected(message)) => CarriedAnswer::Rejected { message },
            Err(CallFailure::Failed { kind, message }) => CarriedAnswer::Failed {
                kind: kind.as_str().to_owned(),
                message,
            },
        }
    }
}

impl CarriedAnswer {
    fn into_answer(self, holder: &str) -> Result<Vec<u8>, CallFailure> {
        // A kind this build does not know (a newer holder) still fails, as `host`.
        let kind = |k: &str| k.parse().unwrap_or(FailureKind::Host);
        match self {
            CarriedAnswer::Ok { payload } => hex::decode(&payload).map_err(|e| {
                failed(
                    FailureKind::Host,
                    format!("the node process at {holder} answered a payload that is not hex: {e}"),
                )
            }),
            CarriedAnswer::Refused { kind: k, message } => Err(CallFailure::Refused {
                kind: kind(&k),
                message,
            }),
            CarriedAnswer::Rejected { message } => Err(CallFailure::Rejected(message)),
            CarriedAnswer::Failed { kind: k, message } => Err(failed(kind(&k), message)),
        }
    }
}

fn failed(kind: FailureKind, message: impl Into<String>) -> CallFailure {
    CallFailure::Failed {
        kind,
        message: message.into(),
    }
}

/// The cluster's token: read from the bucket, or made (32 random bytes) by
/// the first node process that finds none.
///
/// # Errors
/// The bucket failed, or the system had no random bytes.
pub fn cluster_secret(bucket: &dyn ObjectStore) -> anyhow::Result<String> {
    use anyhow::Context as _;
    let key = wasmkeep_host::keys::CLUSTER_SECRET;
    if let Some((body, _)) = bucket.get(key).with_context(|| format!("reading {key}"))? {
        return Ok(String::from_utf8_lossy(&body).trim().to_owned());
    }
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no random bytes for the cluster's token: {e}"))?;
    let made = hex::encode(bytes);
    match bucket.put(key, made.as_bytes(), &PutCondition::IfAbsent) {
        Ok(_) => Ok(made),
        // Another node process made it first: theirs.
        Err(BucketError::PreconditionFailed(_)) => {
            let (body, _) = bucket
                .get(key)
                .with_context(|| format!("reading {key}"))?
                .with_context(|| format!("{key} was made by another node process, then removed"))?;
            Ok(String::from_utf8_lossy(&body).trim().to_owned())
        }
        Err(e) => Err(e).with_context(|| format!("writing {key}")),
    }
}

/// Carries calls to other node processes over HTTP, from the runtime's
/// worker threads (which block on the dev server's tokio runtime).
pub struct HttpRemoteCalls {
    handle: tokio::runtime::Handle,
    client: Client<HttpConnector, Full<Bytes>>,
    token: Arc<str>,
    /// This node, named in the hop's header for the holder's log.
    from: String,
}

impl HttpRemoteCalls {
    /// Calls carried through `handle`'s reactor, showing `token`, from node `from`.
    pub fn new(handle: tokio::runtime::Handle, token: Arc<str>, from: &str) -> Self {
        Self {
            handle,
            client: Client::builder(TokioExecutor::new()).build_http(),
            token,
            from: from.to_owned(),
        }
    }

    async fn carry(&self, holder: &str, call: &RemoteCall) -> Result<CarriedAnswer, String> {
        let carried = CarriedCall {
            target: call.target.clone(),
            caller: call.caller.clone(),
            chain: call.chain.clone(),
            limit_ms: u64::try_from(call.limit.as_millis()).unwrap_or(u64::MAX),
            payload: hex::encode(call.payload.as_slice()),
        };
        let body = serde_json::to_vec(&carried).map_err(|e| e.to_string())?;
        let req = hyper::Request::builder()
            .method("POST")
            .uri(format!("{}{CALL_PATH}", holder.trim_end_matches('/')))
            .header("content-type", "application/json")
            .header(TOKEN_HEADER, &*self.token)
            .header(FORWARDED_HEADER, &self.from)
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        let answer = self.client.request(req).await.map_err(|e| e.to_string())?;
        let status = answer.status();
        let body = Limited::new(answer.into_body(), MAX_CARRIED)
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        if status != StatusCode::OK {
            return Err(format!("{status}: {}", String::from_utf8_lossy(&body)));
        }
        serde_json::from_slice(&body).map_err(|e| format!("an answer that is not a call's: {e}"))
    }
}

impl RemoteCalls for HttpRemoteCalls {
    fn call(&self, holder: &str, call: RemoteCall) -> Result<Vec<u8>, CallFailure> {
        let patience = call.limit + HOP_SLACK;
        let carried = self
            .handle
            .block_on(async { tokio::time::timeout(patience, self.carry(holder, &call)).await });
        match carried {
            Ok(Ok(answer)) => answer.into_answer(holder),
            Ok(Err(why)) => Err(failed(
                FailureKind::HolderUnreachable,
                format!(
                    "{} is held by the node process at {holder}, which did not take the call ({why}); retry once its hold lapses",
                    call.target
                ),
            )),
            Err(_) => Err(failed(
                FailureKind::CallTimedOut,
                format!(
                    "{} (held by the node process at {holder}) did not answer within {:?}",
                    call.target, call.limit
                ),
            )),
        }
    }
}

/// What the call route needs.
#[derive(Clone)]
struct Arrivals {
    rt: Runtime,
    token: Arc<str>,
}

/// The route that takes calls carried from other node processes of the
/// cluster whose token is `token`.
pub fn routes(rt: Runtime, token: Arc<str>) -> axum::Router {
    axum::Router::new()
        .route(CALL_PATH, axum::routing::post(call_arrived))
        .with_state(Arrivals { rt, token })
}

/// Whether `given` is `token`, in time that does not depend on where they differ.
fn same_token(given: &[u8], token: &[u8]) -> bool {
    given.len() == token.len() && given.iter().zip(token).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

async fn call_arrived(State(arrivals): State<Arrivals>, headers: HeaderMap, body: Bytes) -> Response {
    let given = headers.get(TOKEN_HEADER).map(|v| v.as_bytes()).unwrap_or_default();
    if !same_token(given, arrivals.token.as_bytes()) {
        return (
            StatusCode::FORBIDDEN,
            "this route takes calls from the cluster's node processes only (their token is in the bucket)",
        )
            .into_response();
    }
    let call: CarriedCall = match serde_json::from_slice(&body) {
        Ok(c) => c,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("not a carried call: {e}")).into_response(),
    };
    let Ok(payload) = hex::decode(&call.payload) else {
        return (StatusCode::BAD_REQUEST, "the call's payload is not hex").into_response();
    };
    let call = RemoteCall {
        target: call.target,
        caller: call.caller,
        payload: Arc::new(payload),
        chain: call.chain,
        limit: Duration::from_millis(call.limit_ms),
    };
    let rt = arrivals.rt.clone();
    let answer = match tokio::task::spawn_blocking(move || rt.call_arrived(call)).await {
        Ok(Ok(answer)) => CarriedAnswer::from(answer),
        Ok(Err(e)) => CarriedAnswer::Refused {
            kind: e.kind().as_str().to_owned(),
            message: e.to_string(),
        },
        Err(e) => CarriedAnswer::Failed {
            kind: FailureKind::Host.as_str().to_owned(),
            message: format!("the call's thread ended: {e}"),
        },
    };
    axum::Json(answer).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_keep_their_variant_and_kind_over_the_wire() {
        let answers = [
            Ok(b"\x00bytes".to_vec()),
            Err(CallFailure::Refused {
                kind: FailureKind::CallCycle,
                message: "cycle".into(),
            }),
            Err(CallFailure::Rejected("no".into())),
            Err(failed(FailureKind::Guest, "trap")),
        ];
        for a in answers {
            let wire = serde_json::to_string(&CarriedAnswer::from(a.clone())).expect("JSON");
            let back: CarriedAnswer = serde_json::from_str(&wire).expect("back");
            let back = back.into_answer("http://h");
            match (&a, &back) {
                (Ok(x), Ok(y)) => assert_eq!(x, y),
                (Err(x), Err(y)) => {
                    assert_eq!(x.variant(), y.variant(), "{wire}");
                    assert_eq!(x.failure(), y.failure(), "{wire}");
                }
                _ => panic!("{a:?} came back as {back:?}"),
            }
        }
    }

    #[test]
    fn only_the_same_token_passes() {
        assert!(same_token(b"abc", b"abc"));
        assert!(!same_token(b"abd", b"abc"));
        assert!(!same_token(b"ab", b"abc"));
        assert!(!same_token(b"", b"abc"));
    }
}
