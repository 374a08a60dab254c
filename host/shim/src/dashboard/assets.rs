//! The page itself: HTML, CSS and JavaScript modules embedded in the binary
//! (nothing to build, nothing to install). Without `--admin-token` the page
//! is served on the admin API's terms (loopback clients, loopback host
//! names); with one it is served to anyone, since it holds no data: every
//! call it makes carries the token the user types in.

use crate::admin_access::{AdminAccess, check};
use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;
use std::net::SocketAddr;
use std::sync::Arc;

const INDEX: &str = include_str!("assets/index.html");
const STYLE: &str = include_str!("assets/style.css");
const APP: &str = include_str!("assets/app.js");
const ACTORS: &str = include_str!("assets/actors.js");
const ACTOR: &str = include_str!("assets/actor.js");
const API: &str = include_str!("assets/api.js");
const CHARTS: &str = include_str!("assets/charts.js");

fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    // The page runs only its own scripts and talks only to this server, and
    // no other site may frame it (a click on a framed button is an action).
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        ),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

/// Whether the browser is opening the page as a top-level document (a link
/// followed, an address typed): a link from another site may open it, since
/// the page itself holds no data and its calls are its own origin's.
fn top_level_navigation(headers: &HeaderMap) -> bool {
    let is = |name: &str, value: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.eq_ignore_ascii_case(value))
    };
    is("sec-fetch-mode", "navigate") && is("sec-fetch-dest", "document")
}

async fn guard(State(access): State<Arc<AdminAccess>>, req: Request, next: Next) -> Response {
    if access.token.is_none() {
        let peer = req.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0);
        let mut headers = req.headers().clone();
        if top_level_navigation(&headers) {
            headers.remove("sec-fetch-site");
        }
        if let Err((status, message)) = check(&access, req.method(), &headers, peer) {
            return (status, axum::Json(json!({ "error": message }))).into_response();
        }
    }
    next.run(req).await
}

/// The page's routes under `/_shim/ui`.
pub(crate) fn routes<S: Clone + Send + Sync + 'static>(access: AdminAccess) -> Router<S> {
    Router::new()
        .route("/_shim/ui", get(|| async { asset(INDEX, "text/html; charset=utf-8") }))
        .route("/_shim/ui/", get(|| async { asset(INDEX, "text/html; charset=utf-8") }))
        .route(
            "/_shim/ui/style.css",
            get(|| async { asset(STYLE, "text/css; charset=utf-8") }),
        )
        .route(
            "/_shim/ui/app.js",
            get(|| async { asset(APP, "text/javascript; charset=utf-8") }),
        )
        .route(
            "/_shim/ui/actors.js",
            get(|| async { asset(ACTORS, "text/javascript; charset=utf-8") }),
        )
        .route(
            "/_shim/ui/actor.js",
            get(|| async { asset(ACTOR, "text/javascript; charset=utf-8") }),
        )
        .route(
            "/_shim/ui/api.js",
            get(|| async { asset(API, "text/javascript; charset=utf-8") }),
        )
        .route(
            "/_shim/ui/charts.js",
            get(|| async { asset(CHARTS, "text/javascript; charset=utf-8") }),
        )
        .route("/_shim/ui/{*rest}", get(|| async { StatusCode::NOT_FOUND }))
        .route_layer(axum::middleware::from_fn_with_state(Arc::new(access), guard))
}
