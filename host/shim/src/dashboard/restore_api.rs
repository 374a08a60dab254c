//! `POST /_shim/actors/<class>/<name>/restore` (ADR 064): the dashboard's
//! "restore to here", and the admin API's restore of a cluster's actor to a
//! bookmark (`{"to": "<gen>-<seq>"}`) or a time (`{"to": <ms>}`). Answers
//! `{"from", "at", "undo"}`: restoring to `undo` undoes it.

use super::actor_api::NodeQuery;
use super::reply::{bad_request, kind, ok};
use super::state::DashCtx;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::response::Response;
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
    Json(body): Json<Value>,
) -> Response {
    let ctx = ctx.on(at.node.as_deref());
    let key = ctx.key(class, name);
    let Some(to) = target(&body) else {
        return bad_request(
            "the body is {\"to\": \"<bookmark>\"} (a position the actor's history lists) or {\"to\": <ms since the epoch>}",
        );
    };
    let (rt, k) = (ctx.rt.clone(), key.clone());
    match tokio::task::spawn_blocking(move || rt.admin().restore_actor(&k, to)).await {
        Ok(Ok(r)) => ok(json!(r)),
        Ok(Err(e)) => kind(e.kind(), e.to_string()),
        Err(e) => kind(
            wasmkeep_host::FailureKind::Host,
            format!("the restore did not finish: {e}"),
        ),
    }
}
