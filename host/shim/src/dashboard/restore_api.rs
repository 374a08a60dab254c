//! `POST /_shim/actors/<class>/<name>/restore` (ADR 064): the dashboard's
//! "restore to here", and the admin API's restore of a cluster's actor to a
//! bookmark (`{"to": "<gen>-<seq>"}`) or a time (`{"to": <ms>}`). Answers
//! `{"from", "at", "undo"}`: restoring to `undo` undoes it.
//!
//! Asked of a node process that does not hold the actor while another one
//! does, the restore is carried to the holder once, as an actor's request is
//! (ADR 028): the runtime names the holder and its address in a typed error,
//! and the holder's answer is this answer.

use super::actor_api::NodeQuery;
use super::state::DashCtx;
use crate::reply::{bad_request, kind, ok};
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse as _, Response};
use serde_json::{Value, json};
use wasmkeep_host::history::Pos;
use wasmkeep_host::replica::Target;

/// Reads `to`: a bookmark as text, or a time in ms.
fn target(body: &Value) -> Option<Target> {
    match body.get("to")? {
        Value::String(s) => s.parse::<Pos>().ok().map(Target::Bookmark),
        Value::Number(n) => n.as_u64().map(Target::Time),
        _ => None,
    }
}

pub(crate) async fn restore(
    State(ctx): State<DashCtx>,
    Query(at): Query<NodeQuery>,
    Path((class, name)): Path<(String, String)>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let ctx = ctx.on(at.node.as_deref());
    let path = format!("/_shim/actors/{class}/{name}/restore");
    let key = ctx.key(class, name);
    let Some(to) = target(&body) else {
        return bad_request(
            "the body is {\"to\": \"<bookmark>\"} (a position the actor's history lists) or {\"to\": <ms since the epoch>}",
        );
    };
    let (rt, k) = (ctx.rt.clone(), key.clone());
    match tokio::task::spawn_blocking(move || rt.admin().restore_actor(&k, to)).await {
        Ok(Ok(r)) => ok(json!(r)),
        Ok(Err(wasmkeep_host::RuntimeError::HolderUnreachable(held)))
            if !headers.contains_key(crate::forward::FORWARDED_HEADER) && held.address.is_some() =>
        {
            let address = held.address.unwrap_or_default();
            to_holder(&ctx, &address, &path, &body).await
        }
        Ok(Err(e)) => kind(e.kind(), e.to_string()),
        Err(e) => kind(
            wasmkeep_host::FailureKind::Host,
            format!("the restore did not finish: {e}"),
        ),
    }
}

/// Carries the restore to the node process at `address` that holds the
/// actor, marked as forwarded (one hop at most), and answers what it answered.
async fn to_holder(ctx: &DashCtx, address: &str, path: &str, body: &Value) -> Response {
    let request = wasmkeep_host::HttpRequest {
        method: "POST".into(),
        path: path.to_owned(),
        headers: vec![("content-type".into(), "application/json".into())],
        body: body.to_string().into_bytes(),
    };
    let from = ctx.rt.node_id().unwrap_or_default().to_owned();
    match crate::forward::Forwarder::default()
        .forward(address, path, &request, &from, crate::server::MAX_BODY)
        .await
    {
        Ok(answer) => {
            let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::BAD_GATEWAY);
            let mut r = (status, answer.body).into_response();
            for (k, v) in &answer.headers {
                if let (Ok(k), Ok(v)) = (
                    axum::http::HeaderName::from_bytes(k.as_bytes()),
                    axum::http::HeaderValue::from_str(v),
                ) && k != axum::http::header::CONTENT_LENGTH
                {
                    r.headers_mut().insert(k, v);
                }
            }
            r
        }
        Err(e) => kind(
            wasmkeep_host::FailureKind::HolderUnreachable,
            format!("the actor's holder at {address} did not take the restore ({e}); retry"),
        ),
    }
}
