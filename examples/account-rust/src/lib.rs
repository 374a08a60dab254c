//! An account actor that guards against late writes: a payment provider's
//! webhook that arrives after the account was closed must not bring it back.
//!
//! - `PUT /` with a plan name opens the account (or changes its plan).
//! - `POST /webhook` with an event records it, but only for an open account.
//!   For an address that was deleted before, `context::previous_deletion()`
//!   says when and how, and the webhook is refused with 410 Gone; the empty
//!   database the request created is deleted again, so nothing is recreated.
//! - `GET /` shows the account; `DELETE /` closes it with
//!   `delete_self_durable`, and only once that succeeded would the account's
//!   external subscription be cancelled (logged here).
//! - Every answer that acknowledges a write comes after the write is durable
//!   (`exec_durable`), and a 500 means "not known to be done: retry". A
//!   `DELETE` retried after a delete that landed but answered 500 finds the
//!   address deleted by `delete_self_durable` and cancels then (cancelling
//!   is idempotent at the provider), so a durable close always cancels.

use wasmkeep_actor::{Actor, Request, Response, SqlError, context, storage};

struct Account;

impl Actor for Account {
    fn on_request(request: Request) -> Response {
        let path = request.path_only().to_owned();
        let result = match (request.method.as_str(), path.as_str()) {
            ("PUT", "/") => open(request.text().unwrap_or("")),
            ("GET", "/") => show(),
            ("POST", "/webhook") => webhook(request.text().unwrap_or("")),
            ("DELETE", "/") => close(),
            _ => Ok(Response::text(405, "use PUT /, GET /, POST /webhook or DELETE /")),
        };
        result.unwrap_or_else(|e| Response::text(500, e.to_string()))
    }
}

/// Whether this address holds an open account (a new database has no table).
fn is_open() -> Result<bool, SqlError> {
    let rows = storage::query("SELECT 1 FROM sqlite_master WHERE name = 'account'", [])?;
    Ok(!rows.is_empty())
}

fn open(plan: &str) -> Result<Response, SqlError> {
    if plan.trim().is_empty() {
        return Ok(Response::text(400, "send the plan name in the body"));
    }
    storage::exec(
        "CREATE TABLE IF NOT EXISTS account(id INTEGER PRIMARY KEY CHECK (id = 1), plan TEXT NOT NULL);
         CREATE TABLE IF NOT EXISTS events(body TEXT NOT NULL);",
        [],
    )?;
    // Durable before the 200: an acknowledged account is never lost.
    storage::exec_durable(
        "INSERT INTO account VALUES (1, ?1) ON CONFLICT(id) DO UPDATE SET plan = excluded.plan",
        wasmkeep_actor::params![plan.trim()],
    )?;
    Ok(Response::text(200, format!("open, plan {}", plan.trim())))
}

fn show() -> Result<Response, SqlError> {
    if !is_open()? {
        return refuse_missing();
    }
    let rows = storage::query("SELECT plan, (SELECT count(*) FROM events) AS events FROM account", [])?;
    let row = rows.first().expect("an open account has its row");
    let plan: String = row.get("plan").expect("plan is text");
    let events: i64 = row.get("events").expect("events is a count");
    Ok(Response::text(200, format!("plan {plan}, {events} event(s)")))
}

fn webhook(body: &str) -> Result<Response, SqlError> {
    if !is_open()? {
        // The late-write guard: never create an account from a webhook.
        return refuse_missing();
    }
    storage::exec_durable("INSERT INTO events VALUES (?1)", wasmkeep_actor::params![body])?;
    Ok(Response::text(200, "recorded"))
}

/// Answers a request for an account that is not open, and deletes the empty
/// database the request itself created, so that nothing is left behind.
fn refuse_missing() -> Result<Response, SqlError> {
    let answer = match context::previous_deletion() {
        Some(d) => Response::text(
            410,
            format!(
                "this account was closed at {} ms ({:?}); the request is ignored",
                d.at, d.cause
            ),
        ),
        None => Response::text(404, "no such account: open it with PUT / first"),
    };
    storage::delete_self();
    Ok(answer)
}

/// The invariant: the external subscription is cancelled only once the
/// delete is durable (`tests/chaos.rs` holds it under 1,000 seeds of faults).
fn close() -> Result<Response, SqlError> {
    if !is_open()? {
        if let Some(d) = context::previous_deletion()
            && d.cause == context::DeletionCause::DeleteSelfDurable
        {
            // A retry: the close landed although it answered 500. It is
            // durable, so cancelling is safe, and must still happen.
            context::info("account closed; cancelling the external subscription");
            storage::delete_self();
            return Ok(Response::text(200, format!("closed (at {} ms)", d.at)));
        }
        return refuse_missing();
    }
    if cfg!(feature = "broken-cancel-first") {
        // The deliberately wrong variant the chaos test must catch: it
        // cancels first, so a delete that then fails leaves it cancelled.
        context::info("account closed; cancelling the external subscription");
        storage::delete_self_durable()?;
        return Ok(Response::text(200, "closed"));
    }
    storage::delete_self_durable()?;
    // Only now is the deletion durable: cancelling the external subscription is safe.
    context::info("account closed; cancelling the external subscription");
    Ok(Response::text(200, "closed"))
}

wasmkeep_actor::export!(Account);
