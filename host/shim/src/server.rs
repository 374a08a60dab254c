//! The dev server: HTTP and WebSockets to actors, `/metrics`, and the admin API under `/_shim/`.

use crate::AdminDeleted;
use crate::Runtime;
use crate::RuntimeError;
use crate::SqlValue;
use crate::address::ActorKey;
pub use crate::admin_access::AdminAccess;
use crate::faults::FaultKind;
use crate::{HttpRequest, Outbound, SocketMessage};
use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{FromRequestParts, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, delete, get, post};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};

/// The largest request body an actor is sent.
pub const MAX_BODY: usize = 16 << 20;

/// How much a WebSocket's connection reads at a time (ADR 046). tungstenite's
/// default, 128 KiB, is zero-filled at the first read and kept while the
/// socket is open: 1.25 GiB for 10,000 idle sockets. A chat message fits in
/// this many bytes; a larger one grows the buffer to the frame's size.
const SOCKET_READ_BUFFER: usize = 8 << 10;

#[derive(Clone)]
struct Ctx {
    rt: Runtime,
    app: String,
    /// Reaches the node processes that hold actors this node does not.
    forwarder: crate::forward::Forwarder,
}

/// The router for one app served by `rt`, its admin API for loopback only.
pub fn router(rt: Runtime, app: String) -> Router {
    router_with(rt, app, AdminAccess::default())
}

/// The router for one app served by `rt`, its admin API open as `access` says.
/// Serve it with connection info (`into_make_service_with_connect_info::<SocketAddr>`)
/// so that the admin API can tell loopback clients from others.
pub fn router_with(rt: Runtime, app: String, access: AdminAccess) -> Router {
    router_for_node(rt, app, access, Vec::new())
}

/// As [`router_with`], for one node of a local cluster whose nodes (`cluster`,
/// this one among them) are served from this process: the dashboard then
/// lists the actors of every node and which node holds each.
pub fn router_for_node(rt: Runtime, app: String, access: AdminAccess, cluster: Vec<Runtime>) -> Router {
    let access_for_page = access.clone();
    let ctx = Ctx {
        rt: rt.clone(),
        app: app.clone(),
        forwarder: crate::forward::Forwarder::default(),
    };
    let admin = Router::new()
        .merge(crate::dashboard::api_routes(rt, app, cluster))
        .route("/_shim/actors", get(actors))
        .route("/_shim/actors/{class}/{name}/tables", get(tables))
        .route("/_shim/actors/{class}/{name}", delete(delete_actor))
        .route("/_shim/actors/{class}/{name}/settle", post(settle))
        .route("/_shim/clock", get(clock))
        .route("/_shim/clock/advance", post(advance))
        .route("/_shim/faults", get(faults_get).post(faults_set).delete(faults_clear))
        .route("/_shim/alarms/run", post(run_alarms))
        .route("/_shim/hibernate", post(hibernate))
        .route("/_shim/logs", get(logs))
        .route("/_shim/cluster", get(cluster_info))
        .route("/_shim/cluster/cut-off", post(cut_off))
        .route("/_shim/{*rest}", any(admin_unknown))
        .route_layer(axum::middleware::from_fn_with_state(
            std::sync::Arc::new(access),
            crate::admin_access::guard,
        ));
    Router::new()
        .route("/metrics", get(metrics))
        .merge(admin)
        .merge(crate::dashboard::page_routes(access_for_page))
        .route("/{class}/{name}", any(actor_route))
        .route("/{class}/{name}/", any(actor_route))
        .route("/{class}/{name}/{*rest}", any(actor_route))
        .fallback(no_route)
        .with_state(ctx)
}

fn json_error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, axum::Json(json!({ "error": message.into() }))).into_response()
}

/// An API error as JSON, `{"error": <what happened>, "kind": <its kind>}`,
/// with the status its kind answers with.
fn shim_error(e: &RuntimeError) -> Response {
    crate::reply::runtime_error(e)
}

async fn no_route() -> Response {
    json_error(
        StatusCode::NOT_FOUND,
        "no route: actors are at /<class>/<name>/<path>, metrics at /metrics, the admin API under /_shim/",
    )
}

async fn admin_unknown() -> Response {
    json_error(
        StatusCode::NOT_FOUND,
        "unknown admin call; see the README: the dashboard /_shim/ui, /_shim/actors, \
         /_shim/actors/<class>/<name>/tables, /_shim/actors/<class>/<name>/history, \
         /_shim/actors/<class>/<name>/restore, /_shim/clock, /_shim/clock/advance, /_shim/faults, /_shim/alarms/run, \
         /_shim/hibernate, /_shim/logs, /_shim/cluster, /_shim/cluster/cut-off",
    )
}

async fn metrics(State(ctx): State<Ctx>) -> Response {
    let mut r = ctx.rt.admin().metrics().render().into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    r
}

async fn actors(State(ctx): State<Ctx>) -> Response {
    axum::Json(json!({ "actors": ctx.rt.admin().actors() })).into_response()
}

fn value_json(v: &SqlValue) -> Value {
    match v {
        SqlValue::Null => Value::Null,
        SqlValue::Integer(i) => json!(i),
        SqlValue::Real(f) => json!(f),
        SqlValue::Text(s) => json!(s),
        SqlValue::Blob(b) => json!({ "blob": hex::encode(b) }),
    }
}

async fn tables(
    State(ctx): State<Ctx>,
    axum::extract::Path((class, name)): axum::extract::Path<(String, String)>,
) -> Response {
    let key = ActorKey::new(ctx.app.clone(), class, name);
    let rt = ctx.rt.clone();
    match tokio::task::spawn_blocking(move || rt.admin().tables(&key)).await {
        Ok(Ok(tables)) => {
            let mut obj = serde_json::Map::new();
            for (t, r) in tables {
                let rows: Vec<Value> = r
                    .rows
                    .iter()
                    .map(|row| Value::Array(row.iter().map(value_json).collect()))
                    .collect();
                obj.insert(t, json!({ "columns": r.columns, "rows": rows }));
            }
            axum::Json(json!({ "tables": obj })).into_response()
        }
        // By its kind: no such actor 404, too large 413, too slow or the
        // storage failing 503.
        Ok(Err(e)) => shim_error(&e),
        Err(e) => json_error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

/// `DELETE /_shim/actors/<class>/<name>`: an operator delete on this node
/// (no guest code; a damaged database is removed too).
async fn delete_actor(
    State(ctx): State<Ctx>,
    axum::extract::Path((class, name)): axum::extract::Path<(String, String)>,
) -> Response {
    let key = ActorKey::new(ctx.app.clone(), class, name);
    let rt = ctx.rt.clone();
    let k = key.clone();
    match tokio::task::spawn_blocking(move || rt.admin().delete_actor(&k)).await {
        Ok(Ok(AdminDeleted::Deleted)) => axum::Json(json!({ "deleted": key.to_string() })).into_response(),
        Ok(Ok(AdminDeleted::RemovedUnopenable)) => axum::Json(json!({
            "deleted": key.to_string(),
            "note": "its database could not be opened: its files were removed",
        }))
        .into_response(),
        Ok(Ok(AdminDeleted::Absent)) => {
            crate::reply::kind(crate::FailureKind::NoSuchActor, format!("no such actor: {key}"))
        }
        // An actor another node holds is deleted with `wasmkeep-shim actor
        // delete`, which goes through the bucket: 409, asking for that.
        Ok(Err(e)) if e.kind() == crate::FailureKind::HolderUnreachable => {
            crate::reply::failure(StatusCode::CONFLICT, e.kind(), e.to_string())
        }
        // Anything else by its kind: a storage failure is a 5xx.
        Ok(Err(e)) => shim_error(&e),
        Err(e) => json_error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

/// Waits until this node has run everything queued for the actor, the end of
/// an event whose answer went out before its upload included: a client of
/// node processes (the conformance runner) asks this instead of sleeping.
async fn settle(
    State(ctx): State<Ctx>,
    axum::extract::Path((class, name)): axum::extract::Path<(String, String)>,
) -> Response {
    let key = ActorKey::new(ctx.app.clone(), class, name);
    let rt = ctx.rt.clone();
    let k = key.clone();
    match tokio::task::spawn_blocking(move || rt.settle(&k)).await {
        Ok(()) => axum::Json(json!({ "settled": key.to_string() })).into_response(),
        Err(e) => json_error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

async fn clock(State(ctx): State<Ctx>) -> Response {
    axum::Json(json!({ "now": ctx.rt.dev().now_ms(), "virtual": ctx.rt.config().virtual_clock })).into_response()
}

async fn read_json(req: Request) -> Result<Value, Response> {
    let body = to_bytes(req.into_body(), 1 << 20)
        .await
        .map_err(|e| json_error(StatusCode::BAD_REQUEST, format!("cannot read the body: {e}")))?;
    if body.is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_slice(&body).map_err(|e| json_error(StatusCode::BAD_REQUEST, format!("the body is not JSON: {e}")))
}

async fn advance(State(ctx): State<Ctx>, req: Request) -> Response {
    let body = match read_json(req).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let Some(ms) = body.get("ms").and_then(Value::as_u64) else {
        return json_error(
            StatusCode::BAD_REQUEST,
            "expected {\"ms\": <milliseconds to move the clock forward>}",
        );
    };
    match ctx.rt.dev().advance_clock(ms) {
        Ok(now) => axum::Json(json!({ "now": now })).into_response(),
        Err(e) => shim_error(&e),
    }
}

fn faults_json(rt: &Runtime) -> Value {
    let mut obj = serde_json::Map::new();
    for k in FaultKind::ALL {
        obj.insert(k.name().to_owned(), json!(rt.dev().faults().remaining(k)));
    }
    Value::Object(obj)
}

async fn faults_get(State(ctx): State<Ctx>) -> Response {
    axum::Json(json!({ "faults": faults_json(&ctx.rt) })).into_response()
}

async fn faults_set(State(ctx): State<Ctx>, req: Request) -> Response {
    let body = match read_json(req).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let names: Vec<&str> = FaultKind::ALL.iter().map(|k| k.name()).collect();
    let Some(kind) = body.get("kind").and_then(Value::as_str).and_then(FaultKind::from_name) else {
        return json_error(
            StatusCode::BAD_REQUEST,
            format!("expected {{\"kind\": one of {names:?}, \"count\": n}}"),
        );
    };
    let count = body.get("count").and_then(Value::as_u64).unwrap_or(1);
    ctx.rt
        .dev()
        .faults()
        .arm(kind, u32::try_from(count).unwrap_or(u32::MAX));
    axum::Json(json!({ "faults": faults_json(&ctx.rt) })).into_response()
}

async fn faults_clear(State(ctx): State<Ctx>) -> Response {
    ctx.rt.dev().faults().clear();
    axum::Json(json!({ "faults": faults_json(&ctx.rt) })).into_response()
}

async fn run_alarms(State(ctx): State<Ctx>) -> Response {
    let rt = ctx.rt.clone();
    match tokio::task::spawn_blocking(move || rt.dev().run_due_alarms()).await {
        Ok(n) => axum::Json(json!({ "ran": n })).into_response(),
        Err(e) => json_error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

async fn hibernate(State(ctx): State<Ctx>) -> Response {
    let rt = ctx.rt.clone();
    match tokio::task::spawn_blocking(move || rt.dev().hibernate_all()).await {
        Ok(()) => axum::Json(json!({ "resident": ctx.rt.admin().resident_count() })).into_response(),
        Err(e) => json_error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

async fn cluster_info(State(ctx): State<Ctx>) -> Response {
    match ctx.rt.node_id() {
        Some(node) => {
            axum::Json(json!({ "mode": "cluster", "node": node, "live": ctx.rt.passes().live_nodes() })).into_response()
        }
        None => axum::Json(json!({ "mode": "single" })).into_response(),
    }
}

async fn cut_off(State(ctx): State<Ctx>) -> Response {
    match ctx.rt.dev().cut_off() {
        Ok(()) => axum::Json(json!({ "cut_off": ctx.rt.node_id() })).into_response(),
        Err(e) => shim_error(&e),
    }
}

async fn logs(State(ctx): State<Ctx>) -> Response {
    axum::Json(json!({ "logs": ctx.rt.admin().logs() })).into_response()
}

async fn actor_route(State(ctx): State<Ctx>, req: Request) -> Response {
    let route = match crate::route::actor_route(req.uri().path(), req.uri().query()) {
        Ok(route) => route,
        Err(crate::route::RouteError::NoRoute) => return no_route().await,
        Err(e) => return json_error(e.status(), e.message()),
    };
    let rest = route.rest;
    let key = ActorKey::new(ctx.app.clone(), route.class, route.name);
    // As the client wrote it: a forwarded request or socket goes to the same place.
    let path_and_query = req
        .uri()
        .path_and_query()
        .map_or_else(|| req.uri().path().to_owned(), |p| p.as_str().to_owned());
    let is_upgrade = req
        .headers()
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    if is_upgrade {
        let forwarded = req.headers().contains_key(crate::forward::FORWARDED_HEADER);
        let (mut parts, _) = req.into_parts();
        // Held by another node process: the socket is carried to it, once.
        let remote = match (ctx.rt.node_id(), forwarded) {
            (Some(_), false) => {
                let (rt, k) = (ctx.rt.clone(), key.clone());
                tokio::task::spawn_blocking(move || rt.remote_holder(&k))
                    .await
                    .ok()
                    .flatten()
            }
            _ => None,
        };
        if let Some(held) = remote
            && let Some(address) = held.address.clone()
        {
            let ws = match WebSocketUpgrade::from_request_parts(&mut parts, &()).await {
                Ok(ws) => ws,
                Err(e) => return e.into_response(),
            };
            // The holder's socket is opened before the client's upgrade is
            // answered: the holder has then queued the socket's open, so what
            // the client sends next comes after it, as on one node.
            let url = crate::forward::socket_url(&address, &path_and_query);
            let from = ctx.rt.node_id().unwrap_or_default().to_owned();
            return match crate::forward::connect_socket(&url, &from).await {
                Ok(upstream) => ws
                    .max_message_size(MAX_BODY)
                    .max_frame_size(MAX_BODY)
                    .read_buffer_size(SOCKET_READ_BUFFER)
                    .on_upgrade(move |socket| upstream.carry(socket)),
                Err(e) => {
                    tracing::warn!(actor = %key, "forwarding a WebSocket to {url}: {e}");
                    shim_error(&RuntimeError::HolderUnreachable(Box::new(held)))
                }
            };
        }
        return match WebSocketUpgrade::from_request_parts(&mut parts, &()).await {
            Ok(ws) => match ctx.rt.open_socket(&key, &rest) {
                Ok(handle) => {
                    let rt = ctx.rt.clone();
                    // A message may be as large as a request body; a larger
                    // one ends the connection.
                    ws.max_message_size(MAX_BODY)
                        .max_frame_size(MAX_BODY)
                        .read_buffer_size(SOCKET_READ_BUFFER)
                        .on_upgrade(move |socket| pump_socket(rt, handle, socket))
                }
                Err(e) => shim_error(&e),
            },
            Err(e) => e.into_response(),
        };
    }
    let method = req.method().as_str().to_owned();
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = match to_bytes(req.into_body(), MAX_BODY).await {
        Ok(b) => b.to_vec(),
        Err(e) if is_length_limit(&e) => {
            return json_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the body is over the limit of {MAX_BODY} bytes: send less"),
            );
        }
        // The client stopped sending, or sent a malformed body: its fault, not the size.
        Err(e) => {
            return json_error(
                StatusCode::BAD_REQUEST,
                format!("the body could not be read ({e}): send the whole body the headers announce"),
            );
        }
    };
    let request = HttpRequest {
        method,
        path: rest,
        headers,
        body,
    };
    // A node keeps a copy to forward, unless the request was forwarded to it already.
    let forwardable =
        (ctx.rt.node_id().is_some() && !crate::forward::was_forwarded(&request.headers)).then(|| request.clone());
    let pending = match ctx.rt.request(&key, request) {
        Ok(p) => p,
        Err(e) => return shim_error(&e),
    };
    let mut answer = pending.recv().await;
    if answer.failure == Some(crate::FailureKind::HolderUnreachable)
        && let Some(request) = &forwardable
        && let Some(holder) = crate::forward::holder_of(&answer)
    {
        let from = ctx.rt.node_id().unwrap_or_default();
        match ctx
            .forwarder
            .forward(holder, &path_and_query, request, from, MAX_BODY)
            .await
        {
            Ok(forwarded) => answer = forwarded,
            Err(e) => tracing::warn!(actor = %key, "forwarding to {holder}: {e}"),
        }
    }
    guest_response(answer.status, &answer.headers, answer.body)
}

/// Headers that frame the message or the connection: the host sets them from
/// the body it sends, never the guest (a short `content-length` from a guest
/// would let it append a forged second response on a kept-alive connection).
const HOST_ONLY_HEADERS: &[&str] = &[
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "upgrade",
    "te",
    "trailer",
    "proxy-connection",
];

/// An actor's answer as HTTP: a status of 200–599 (a 1xx, 101 among them,
/// is the host's to send), its headers but those that frame the message.
fn guest_response(status: u16, headers: &[(String, String)], body: Vec<u8>) -> Response {
    if !(200..=599).contains(&status) {
        return json_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!(
                "the actor answered status {status}: an actor answers 200 to 599 (informational answers and \
                 upgrades are the host's; a WebSocket is opened by the client's upgrade request)"
            ),
        );
    }
    let mut builder = Response::builder().status(status);
    for (k, v) in headers {
        if HOST_ONLY_HEADERS.iter().any(|h| k.eq_ignore_ascii_case(h)) {
            continue;
        }
        builder = builder.header(k, v);
    }
    builder.body(Body::from(body)).unwrap_or_else(|e| {
        json_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the actor's response is not valid HTTP: {e}"),
        )
    })
}

/// Carries one socket both ways. Reading runs in its own task and waits for
/// room in the socket's inbound budget before it reads the next message, so
/// a client sending faster than its actor handles is slowed by TCP, while
/// what the actor sends keeps flowing out.
async fn pump_socket(rt: Runtime, mut handle: crate::SocketHandle, socket: WebSocket) {
    let id = handle.id;
    let (mut tx, mut rx) = socket.split();
    let reader_rt = rt.clone();
    // Ends with the client's close (code, reason), or `None` when the socket
    // is gone from the host's side (its close is on the way out).
    let mut reader = tokio::spawn(async move {
        loop {
            let msg = match rx.next().await {
                Some(Ok(Message::Text(t))) => SocketMessage::Text(t.to_string()),
                Some(Ok(Message::Binary(b))) => SocketMessage::Binary(b.to_vec()),
                Some(Ok(Message::Close(frame))) => {
                    return Some(frame.map_or((1005, String::new()), |f| (f.code, f.reason.to_string())));
                }
                Some(Ok(_)) => continue,
                Some(Err(_)) | None => return Some((1006, "connection lost".to_owned())),
            };
            if reader_rt.socket_message_paced(id, msg).await.is_err() {
                return None;
            }
        }
    });
    let mut reading = true;
    loop {
        tokio::select! {
            out = handle.outbound.recv() => match out {
                Some(Outbound::Message(SocketMessage::Text(t))) => {
                    if tx.send(Message::Text(t.into())).await.is_err() { break; }
                }
                Some(Outbound::Message(SocketMessage::Binary(b))) => {
                    if tx.send(Message::Binary(b.into())).await.is_err() { break; }
                }
                Some(Outbound::Close { code, reason }) => {
                    let _ = tx.send(Message::Close(Some(CloseFrame { code, reason: reason.into() }))).await;
                    reader.abort();
                    return;
                }
                None => {
                    reader.abort();
                    return;
                }
            },
            ended = &mut reader, if reading => {
                reading = false;
                if let Ok(Some((code, reason))) = ended {
                    rt.socket_closed(id, code, &reason);
                    return;
                }
            }
        }
    }
    reader.abort();
    rt.socket_closed(id, 1006, "connection lost");
}

/// Whether reading a body failed because it was over the limit.
fn is_length_limit(e: &axum::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if c.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        cause = c.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guest_never_frames_the_message_nor_answers_1xx() {
        let headers = vec![
            ("Content-Length".to_owned(), "1".to_owned()),
            ("transfer-encoding".to_owned(), "chunked".to_owned()),
            ("Connection".to_owned(), "upgrade".to_owned()),
            ("x-kept".to_owned(), "yes".to_owned()),
        ];
        let r = guest_response(200, &headers, b"hello".to_vec());
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(r.headers().get("x-kept").map(|v| v.as_bytes()), Some(&b"yes"[..]));
        for h in ["content-length", "transfer-encoding", "connection"] {
            assert!(r.headers().get(h).is_none(), "{h} is the host's to set");
        }
        assert_eq!(
            guest_response(101, &[], Vec::new()).status(),
            StatusCode::INTERNAL_SERVER_ERROR
        );
        assert_eq!(
            guest_response(100, &[], Vec::new()).status(),
            StatusCode::INTERNAL_SERVER_ERROR
        );
        assert_eq!(guest_response(599, &[], Vec::new()).status().as_u16(), 599);
    }
}
