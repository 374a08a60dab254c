//! Calls between node processes (ADR 034). When an actor calls another that
//! a node of another process holds, the runtime hands the call to
//! [`HttpRemoteCalls`], which posts it to the holder's `/_cluster/call`; the
//! holder runs it with [`wasmkeep_host::Runtime::call_arrived`] (never
//! carrying it on) and answers with the callee's answer or failure, kind
//! kept. The route is no actor's and no admin's: a node process shows the
//! cluster's token, kept in the bucket (`cluster/secret`) or given to every
//! node (`serve --cluster-token`), since a call names its caller and a client
//! must not pass for an actor. A token is rotated without stopping the
//! cluster: a node given `--cluster-token-previous` as well takes both, and
//! shows the previous one to a peer that refused its current one (ADR 074).

use crate::forward::FORWARDED_HEADER;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse as _, Response};
use http_body_util::{BodyExt as _, Full, Limited};
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

/// The tokens a node process takes on its call route: the current one,
/// which it also shows to its peers, and during a rotation the previous one.
#[derive(Clone)]
pub struct ClusterTokens {
    current: Arc<str>,
    previous: Option<Arc<str>>,
}

impl ClusterTokens {
    /// `current`, and `previous` also taken (and shown to a peer that refuses `current`).
    pub fn new(current: &str, previous: Option<&str>) -> Self {
        Self {
            current: current.into(),
            previous: previous.filter(|p| *p != current).map(Into::into),
        }
    }

    /// Whether a peer that shows `given` is one of the cluster's node processes.
    pub fn accepts(&self, given: &[u8]) -> bool {
        // Both compared whatever the first gives: the time says nothing of which matched.
        let current = same_token(given, self.current.as_bytes());
        let previous = self.previous.as_ref().is_some_and(|p| same_token(given, p.as_bytes()));
        current | previous
    }

    /// The tokens to show a peer, in turn while it refuses them.
    fn to_show(&self) -> impl Iterator<Item = &str> {
        std::iter::once(&*self.current).chain(self.previous.as_deref())
    }
}

/// Carries calls to other node processes over HTTP (over TLS when this
/// process has it: crate::peer_tls), from the runtime's worker threads
/// (which block on the dev server's tokio runtime).
pub struct HttpRemoteCalls {
    handle: tokio::runtime::Handle,
    client: crate::peer_tls::PeerClient,
    tokens: ClusterTokens,
    /// This node, named in the hop's header for the holder's log.
    from: String,
}

impl HttpRemoteCalls {
    /// Calls carried through `handle`'s reactor, showing `tokens`, from node `from`.
    pub fn new(handle: tokio::runtime::Handle, tokens: ClusterTokens, from: &str) -> Self {
        Self {
            handle,
            client: crate::peer_tls::client(),
            tokens,
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
        crate::peer_tls::check_address(holder)?;
        let body = Bytes::from(serde_json::to_vec(&carried).map_err(|e| e.to_string())?);
        let mut refused = None;
        // The current token, then (during a rotation, to a peer not yet given
        // the new one) the previous: a refused call was not run.
        for token in self.tokens.to_show() {
            let req = hyper::Request::builder()
                .method("POST")
                .uri(format!("{}{CALL_PATH}", holder.trim_end_matches('/')))
                .header("content-type", "application/json")
                .header(TOKEN_HEADER, token)
                .header(FORWARDED_HEADER, &self.from)
                .body(Full::new(body.clone()))
                .map_err(|e| e.to_string())?;
            let answer = self
                .client
                .request(req)
                .await
                .map_err(|e| crate::peer_tls::explain(holder, &e))?;
            let status = answer.status();
            let body = Limited::new(answer.into_body(), MAX_CARRIED)
                .collect()
                .await
                .map_err(|e| e.to_string())?
                .to_bytes();
            if status == StatusCode::FORBIDDEN {
                refused = Some(String::from_utf8_lossy(&body).into_owned());
                continue;
            }
            if status != StatusCode::OK {
                return Err(format!("{status}: {}", String::from_utf8_lossy(&body)));
            }
            return serde_json::from_slice(&body).map_err(|e| format!("an answer that is not a call's: {e}"));
        }
        Err(format!(
            "it refused this node's cluster token{} ({}): give every node the same --cluster-token, and during a \
             rotation the old one as --cluster-token-previous",
            if self.tokens.previous.is_some() { "s" } else { "" },
            refused.unwrap_or_default()
        ))
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
    tokens: ClusterTokens,
}

/// The route that takes calls carried from other node processes of the
/// cluster whose tokens are `tokens`.
pub fn routes(rt: Runtime, tokens: ClusterTokens) -> axum::Router {
    axum::Router::new()
        .route(CALL_PATH, axum::routing::post(call_arrived))
        .with_state(Arrivals { rt, tokens })
}

/// Whether `given` is `token`, in time that does not depend on where they differ.
fn same_token(given: &[u8], token: &[u8]) -> bool {
    given.len() == token.len() && given.iter().zip(token).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

async fn call_arrived(State(arrivals): State<Arrivals>, headers: HeaderMap, body: Bytes) -> Response {
    let given = headers.get(TOKEN_HEADER).map(|v| v.as_bytes()).unwrap_or_default();
    if !arrivals.tokens.accepts(given) {
        return (
            StatusCode::FORBIDDEN,
            "this route takes calls from the cluster's node processes only, which show the cluster's token \
             (--cluster-token, or the bucket's cluster/secret without it)",
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

    #[test]
    fn a_rotation_takes_the_new_and_the_previous_token_and_shows_the_new_first() {
        let both = ClusterTokens::new("new", Some("old"));
        assert!(both.accepts(b"new") && both.accepts(b"old") && !both.accepts(b"other"));
        assert_eq!(both.to_show().collect::<Vec<_>>(), ["new", "old"]);
        let new_only = ClusterTokens::new("new", None);
        assert!(new_only.accepts(b"new") && !new_only.accepts(b"old"));
        assert_eq!(ClusterTokens::new("t", Some("t")).to_show().count(), 1);
    }
}
