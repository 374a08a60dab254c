//! `GET /_shim/events`: the dashboard's live feed, server-sent events. The
//! first `update` carries every actor (`"reset": true`); each later one, every
//! half second, only the actors that changed or went (`upsert`, `gone`), so the
//! page never fetches the whole list again. Each carries the clock, the armed
//! faults, the cluster's live nodes and the counters of `/metrics` too (the
//! page draws the counters over the last minutes).

use super::overview::{ActorRow, actor_rows, counters, diff};
use super::state::DashCtx;
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::time::Duration;
use wasmkeep_host::{FaultKind, Runtime};

/// How often the feed looks for changes.
const TICK: Duration = Duration::from_millis(500);

type Rows = BTreeMap<String, ActorRow>;

/// One update of the feed.
#[derive(Serialize)]
struct Update<'a> {
    reset: bool,
    upsert: Vec<&'a ActorRow>,
    gone: Vec<String>,
    now: u64,
    #[serde(rename = "virtual")]
    virtual_clock: bool,
    faults: Value,
    node: Option<&'a str>,
    live: Vec<String>,
    counters: BTreeMap<String, u64>,
}

fn faults(rt: &Runtime) -> Value {
    FaultKind::ALL
        .iter()
        .map(|k| (k.name().to_owned(), json!(rt.dev().faults().remaining(*k))))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// One update as JSON: the actors since `before` (all of them when there is
/// no `before`), and the rest of the page's state now.
fn update(ctx: &DashCtx, before: Option<&Rows>, after: &Rows) -> String {
    let (upsert, gone) = match before {
        None => (after.values().collect(), Vec::new()),
        Some(b) => diff(b, after),
    };
    let u = Update {
        reset: before.is_none(),
        upsert,
        gone,
        now: ctx.rt.dev().now_ms(),
        virtual_clock: ctx.rt.config().virtual_clock,
        faults: faults(&ctx.rt),
        node: ctx.rt.node_id(),
        live: ctx.rt.passes().live_nodes(),
        counters: counters(&ctx.rt),
    };
    serde_json::to_string(&u).unwrap_or_else(|e| json!({ "error": e.to_string() }).to_string())
}

/// The feed; it ends when the host begins to shut down.
pub(crate) async fn events(State(ctx): State<DashCtx>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let stream = futures_util::stream::unfold((ctx, None::<Rows>), |(ctx, before)| async move {
        if before.is_some() {
            tokio::time::sleep(TICK).await;
        }
        if ctx.rt.is_stopping() {
            return None;
        }
        let c = ctx.clone();
        // A listing that failed to run keeps the last one: never "all gone".
        let after = match tokio::task::spawn_blocking(move || actor_rows(&c.rt, &c.cluster)).await {
            Ok(rows) => rows,
            Err(_) => before.clone().unwrap_or_default(),
        };
        let data = update(&ctx, before.as_ref(), &after);
        let event = Event::default().event("update").data(data);
        Some((Ok(event), (ctx, Some(after))))
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}
