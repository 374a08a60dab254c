//! The dashboard at `/_shim/ui` (issue 26): a page in the browser over the
//! admin API, and the calls the API gained for it. The page does nothing the
//! API cannot; its assets are embedded in the binary. docs/adr/025-dashboard.md.

mod actor_api;
mod assets;
mod live;
mod metrics_history;
mod overview;
mod readonly_sql;
mod restore_api;
mod state;

use crate::admin_access::AdminAccess;
use axum::Router;
use axum::routing::{get, post};
use state::DashCtx;
use wasmkeep_host::Runtime;

/// The API the dashboard adds under `/_shim/` (behind the admin API's guard,
/// which the caller puts in front).
/// `cluster` names every node of `rt`'s cluster when they are served from
/// one process (empty otherwise).
pub(crate) fn api_routes<S: Clone + Send + Sync + 'static>(
    rt: Runtime,
    app: String,
    cluster: Vec<Runtime>,
) -> Router<S> {
    let a = "/_shim/actors/{class}/{name}";
    Router::new()
        .route("/_shim/overview", get(actor_api::overview))
        .route("/_shim/events", get(live::events))
        .route("/_shim/metrics/history", get(actor_api::metrics_history))
        .route(&format!("{a}/info"), get(actor_api::info))
        .route(&format!("{a}/schema"), get(actor_api::schema))
        .route(&format!("{a}/history"), get(actor_api::history))
        .route(&format!("{a}/rows/{{table}}"), get(actor_api::rows))
        .route(&format!("{a}/value/{{table}}"), get(actor_api::value))
        .route(&format!("{a}/query"), post(actor_api::query))
        .route(&format!("{a}/alarm/run"), post(actor_api::run_alarm))
        .route(&format!("{a}/hibernate"), post(actor_api::hibernate))
        .route(&format!("{a}/restore"), post(restore_api::restore))
        .with_state(DashCtx {
            metrics: metrics_history::MetricsHistory::start(&rt),
            rt,
            app,
            cluster,
        })
}

/// The page itself, under `/_shim/ui`, with its own guard.
pub(crate) fn page_routes<S: Clone + Send + Sync + 'static>(access: AdminAccess) -> Router<S> {
    assets::routes(access)
}
