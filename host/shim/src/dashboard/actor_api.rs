//! The admin API the dashboard adds for one actor, and the whole list:
//! `/_shim/overview`, and under `/_shim/actors/<class>/<name>/` its `info`,
//! `schema`, `rows/<table>`, `value/<table>`, a read-only `query`, and the
//! actions `alarm/run` and `hibernate` (the delete is the admin API's own
//! `DELETE /_shim/actors/<class>/<name>`).

use super::overview::actor_rows;
use super::readonly_sql::{Cut, ReadError, ReadOnlyDb, Rows};
use super::state::DashCtx;
use crate::reply::{bad_request, failure, kind, ok};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use serde_json::{Value, json};
use wasmkeep_host::{ActorKey, FailureKind, LentReadError, Runtime};

/// Which node of a local cluster to ask about the actor (`?node=node-2`,
/// the one holding it, as the actors list says); this node when absent.
#[derive(Deserialize)]
pub(crate) struct NodeQuery {
    pub(crate) node: Option<String>,
}

/// Values longer than this are cut in a page of rows (the page asks for the whole one).
const CUT_AT: usize = 256;
/// The most rows one page or one query answers.
const MAX_ROWS: u64 = 1000;

/// Runs blocking host work off the async threads.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, Response> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| kind(FailureKind::Host, format!("the dashboard's task failed: {e}")))
}

/// `GET /_shim/overview`: every actor, with the clock and the node.
pub(crate) async fn overview(State(ctx): State<DashCtx>) -> Response {
    let c = ctx.clone();
    match blocking(move || actor_rows(&c.rt, &c.cluster)).await {
        Ok(rows) => ok(json!({
            "actors": rows.values().collect::<Vec<_>>(),
            "now": ctx.rt.dev().now_ms(),
            "virtual": ctx.rt.config().virtual_clock,
            "node": ctx.rt.node_id(),
            "app": ctx.app,
        })),
        Err(r) => r,
    }
}

/// `GET /_shim/metrics/history`: the counters of `/metrics` sampled every
/// 5 s over the last 10 minutes, oldest first, and a sample of now last.
pub(crate) async fn metrics_history(State(ctx): State<DashCtx>) -> Response {
    let mut samples = ctx.metrics.samples();
    samples.push(super::metrics_history::sample(&ctx.rt));
    ok(json!({
        "every_ms": super::metrics_history::EVERY.as_millis(),
        "keep_ms": super::metrics_history::KEEP.as_millis(),
        "samples": samples,
    }))
}

/// `GET …/info`: status, alarm, sockets, last event, deletion record, log lines.
pub(crate) async fn info(
    State(ctx): State<DashCtx>,
    Query(at): Query<NodeQuery>,
    Path((class, name)): Path<(String, String)>,
) -> Response {
    let ctx = ctx.on(at.node.as_deref());
    let key = ctx.key(class, name);
    let c = ctx.clone();
    let k = key.clone();
    let found = blocking(move || {
        // The node asked first; in a local cluster, then the others (an actor
        // no node holds, deleted or hibernated, is listed by the node that had it).
        let others = c.cluster.iter().filter(|rt| rt.node_id() != c.rt.node_id());
        let row = std::iter::once(&c.rt)
            .chain(others)
            .find_map(|rt| rt.admin().actors_listing().into_iter().find(|a| a.key == k));
        let deletion = c.rt.passes().deletion_status(&k);
        (row, deletion)
    })
    .await;
    let (row, deletion) = match found {
        Ok(f) => f,
        Err(r) => return r,
    };
    let id = key.to_string();
    let logs: Vec<_> = ctx.rt.admin().logs().into_iter().filter(|l| l.actor == id).collect();
    ok(json!({
        "id": id,
        "app": key.app,
        "class": key.class,
        "name": key.name,
        "exists": row.as_ref().is_some_and(|r| r.status != wasmkeep_host::ActorStatus::Deleted),
        "status": row.as_ref().map(|r| r.status),
        "alarm": row.as_ref().and_then(|r| r.alarm),
        "sockets": ctx.rt.admin().sockets_of(&key),
        "last": ctx.last_event(&key),
        "deletion": deletion,
        "logs": logs,
        "now": ctx.rt.dev().now_ms(),
    }))
}

/// `GET …/history`: in a cluster, the actor's ownership record (which
/// node, which generation, released or held, and whether that node is live)
/// and its history in the bucket, each object as what it is: `upload`,
/// `fence`, `reset` (with `deleted_at` and `how` from its marker),
/// `snapshot`, at its generation and seq, oldest first, the head marked. A
/// single node that keeps history (ADR 064) answers its history directory's
/// the same way (`"cluster": false, "history": true`); one that keeps none
/// `{"cluster": false, "history": false}`.
pub(crate) async fn history(
    State(ctx): State<DashCtx>,
    Query(at): Query<NodeQuery>,
    Path((class, name)): Path<(String, String)>,
) -> Response {
    let ctx = ctx.on(at.node.as_deref());
    let key = ctx.key(class, name);
    let rt = ctx.rt.clone();
    let k = key.clone();
    match blocking(move || rt.passes().actor_records(&k)).await {
        Ok(None) => ok(json!({ "cluster": false, "history": false, "owner": null, "records": [] })),
        Ok(Some(Ok(records))) => {
            let cluster = ctx.rt.node_id().is_some();
            let live = ctx.rt.passes().live_nodes();
            // A single node's history has an ownership record of its own
            // writer's: no node holds or takes the actor, so none is shown.
            let owner = records.owner.filter(|_| cluster).map(|o| {
                let node_live = live.contains(&o.node);
                let mut v = json!(o);
                v["live"] = json!(node_live);
                // Held: named, not released, and its node live (ADR 006).
                v["held"] = json!(node_live && !o.released);
                v
            });
            ok(json!({
                "cluster": cluster,
                "history": true,
                "owner": owner,
                "owner_unreadable": records.owner_unreadable,
                "records": records.history,
            }))
        }
        Ok(Some(Err(e))) => kind(FailureKind::Bucket, format!("the bucket could not be read: {e}")),
        Err(r) => r,
    }
}

/// A read's failure by its kind.
fn read_failure(e: &ReadError) -> Response {
    match e {
        ReadError::NoDatabase => kind(FailureKind::NoSuchActor, e.to_string()),
        ReadError::NoSuchTable(_) => failure(StatusCode::NOT_FOUND, FailureKind::Sql, e.to_string()),
        ReadError::NotReadOnly(_) => failure(StatusCode::FORBIDDEN, FailureKind::Sql, e.to_string()),
        ReadError::Sql(_) => failure(StatusCode::BAD_REQUEST, FailureKind::Sql, e.to_string()),
        ReadError::TooSlow => kind(FailureKind::TablesTooSlow, e.to_string()),
    }
}

/// Runs `f` on `key`'s database, read-only, in its mailbox (the actor is
/// not woken), off the async threads.
async fn read<T: Send + 'static>(
    rt: &Runtime,
    key: &ActorKey,
    f: impl FnOnce(&ReadOnlyDb<'_>) -> Result<T, ReadError> + Send + 'static,
) -> Result<T, Response> {
    if !rt.admin().exists(key) {
        return Err(kind(FailureKind::NoSuchActor, format!("no such actor: {key}")));
    }
    let (rt, key) = (rt.clone(), key.clone());
    let read = blocking(move || rt.admin().read_database(&key, move |conn| f(&ReadOnlyDb::new(conn)))).await?;
    match read {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(read_failure(&e)),
        Err(LentReadError::NoDatabase) => Err(read_failure(&ReadError::NoDatabase)),
        Err(LentReadError::NotRun { kind: k, message }) => Err(kind(k, message)),
        Err(e) => Err(kind(FailureKind::Host, e.to_string())),
    }
}

fn rows_json(r: Rows) -> Value {
    json!({ "columns": r.columns, "rows": r.rows, "truncated": r.truncated })
}

/// `GET …/schema`: the actor's tables, their columns and row counts.
pub(crate) async fn schema(
    State(ctx): State<DashCtx>,
    Query(at): Query<NodeQuery>,
    Path((class, name)): Path<(String, String)>,
) -> Response {
    let ctx = ctx.on(at.node.as_deref());
    let key = ctx.key(class, name);
    match read(&ctx.rt, &key, |db| db.tables()).await {
        Ok(tables) => ok(json!({
            "tables": tables
                .into_iter()
                .map(|t| json!({ "name": t.name, "columns": t.columns, "rows": t.rows }))
                .collect::<Vec<_>>()
        })),
        Err(r) => r,
    }
}

/// Which rows of a table.
#[derive(Deserialize)]
pub(crate) struct PageQuery {
    #[serde(default)]
    offset: u64,
    limit: Option<u64>,
}

/// `GET …/rows/<table>?offset=&limit=`: a page of rows, long values cut
/// (`{"text"|"blob": prefix, "length": n}`), blobs as hex.
pub(crate) async fn rows(
    State(ctx): State<DashCtx>,
    Query(at): Query<NodeQuery>,
    Path((class, name, table)): Path<(String, String, String)>,
    Query(q): Query<PageQuery>,
) -> Response {
    let ctx = ctx.on(at.node.as_deref());
    let key = ctx.key(class, name);
    let limit = q.limit.unwrap_or(50).min(MAX_ROWS);
    let offset = q.offset;
    match read(&ctx.rt, &key, move |db| db.page(&table, offset, limit, Cut::At(CUT_AT))).await {
        Ok(r) => {
            let mut v = rows_json(r);
            v["offset"] = json!(offset);
            ok(v)
        }
        Err(r) => r,
    }
}

/// Which value whole.
#[derive(Deserialize)]
pub(crate) struct ValueQuery {
    offset: u64,
    column: String,
}

/// `GET …/value/<table>?offset=&column=`: one value whole.
pub(crate) async fn value(
    State(ctx): State<DashCtx>,
    Query(at): Query<NodeQuery>,
    Path((class, name, table)): Path<(String, String, String)>,
    Query(q): Query<ValueQuery>,
) -> Response {
    let ctx = ctx.on(at.node.as_deref());
    let key = ctx.key(class, name);
    match read(&ctx.rt, &key, move |db| db.value(&table, &q.column, q.offset)).await {
        Ok(Some(v)) => ok(json!({ "value": v })),
        Ok(None) => failure(StatusCode::NOT_FOUND, FailureKind::Sql, "no such row"),
        Err(r) => r,
    }
}

/// `POST …/query {"sql": "SELECT …"}`: the page's SQL, read-only whatever it says.
pub(crate) async fn query(
    State(ctx): State<DashCtx>,
    Query(at): Query<NodeQuery>,
    Path((class, name)): Path<(String, String)>,
    body: axum::body::Bytes,
) -> Response {
    let ctx = ctx.on(at.node.as_deref());
    let Some(sql) = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v.get("sql").and_then(Value::as_str).map(str::to_owned))
    else {
        return bad_request("expected {\"sql\": \"SELECT …\"}");
    };
    let key = ctx.key(class, name);
    let max = usize::try_from(MAX_ROWS).unwrap_or(usize::MAX);
    match read(&ctx.rt, &key, move |db| db.query(&sql, max, Cut::At(CUT_AT * 4))).await {
        Ok(r) => ok(rows_json(r)),
        Err(r) => r,
    }
}

/// `POST …/alarm/run`: runs the actor's alarm if it is due: `{"ran": bool}`.
pub(crate) async fn run_alarm(
    State(ctx): State<DashCtx>,
    Query(at): Query<NodeQuery>,
    Path((class, name)): Path<(String, String)>,
) -> Response {
    let ctx = ctx.on(at.node.as_deref());
    let key = ctx.key(class, name);
    let (rt, k) = (ctx.rt.clone(), key.clone());
    let ran = move || {
        let ran = rt.dev().run_alarm(&k);
        // The answer comes once on-alarm returned; the event's end (its writes
        // kept, its last event recorded) follows: wait for it, so the page's
        // next read shows it.
        rt.settle(&k);
        ran
    };
    match blocking(ran).await {
        Ok(ran) => ok(json!({ "ran": ran })),
        Err(r) => r,
    }
}

/// `POST …/hibernate`: drops the actor's instance once its queued events ran
/// (its sockets stay open); the next event wakes it from its files.
pub(crate) async fn hibernate(
    State(ctx): State<DashCtx>,
    Query(at): Query<NodeQuery>,
    Path((class, name)): Path<(String, String)>,
) -> Response {
    let ctx = ctx.on(at.node.as_deref());
    let key = ctx.key(class, name);
    if !ctx.rt.admin().exists(&key) {
        return kind(FailureKind::NoSuchActor, format!("no such actor: {key}"));
    }
    let (rt, k) = (ctx.rt.clone(), key.clone());
    match blocking(move || rt.dev().restart_actor(&k)).await {
        Ok(()) => ok(json!({ "hibernated": key.to_string() })),
        Err(r) => r,
    }
}
