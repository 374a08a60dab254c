//! A bank account whose every `200` is kept, in a cluster too.
//!
//! - `POST /deposit?op=<id>&amount=<n>` and `POST /withdraw?op=<id>&amount=<n>`
//!   move money once per operation id: a client that retries after a `503`
//!   or a lost answer repeats the id, and the retry changes nothing and
//!   answers what the first try did. A withdrawal beyond the balance is
//!   refused with `409`, and that refusal is kept for its id too.
//! - `GET /` answers `{"balance": <n>, "interest": <total paid>}`.
//! - Interest: 1% of the balance (rounded down) every virtual day, paid by the
//!   alarm, which sets itself again.
//! - `DELETE /` closes the account with a durable delete.
//!
//! Nothing here waits for a write by hand: the SDK sends each answer only
//! once the transaction before it is kept (`Responder::send` flushes first;
//! ADR 019), and answers `503` when it is not known to be.

use std::time::Duration;
#[cfg(feature = "broken-idempotency")]
use wasmkeep_actor::Responder;
use wasmkeep_actor::{Actor, Request, Response, SqlError, ValueError, alarms, params, storage};

/// How often interest is paid (a virtual day under the test host).
const DAY: Duration = Duration::from_secs(24 * 3600);

struct Bank;

impl Actor for Bank {
    fn on_init() {
        storage::exec(
            "CREATE TABLE account(id INTEGER PRIMARY KEY CHECK (id = 1), balance INTEGER NOT NULL);
             INSERT INTO account VALUES (1, 0);
             CREATE TABLE ops(id TEXT PRIMARY KEY, status INTEGER NOT NULL, answer TEXT NOT NULL);
             CREATE TABLE interest(paid INTEGER NOT NULL);",
            [],
        )
        .expect("create the account's tables");
        alarms::set_in(DAY);
    }

    fn on_request(request: Request) -> Response {
        let result = match (request.method.as_str(), request.path_only()) {
            ("GET", "/") => statement(),
            ("POST", "/deposit") => operation(&request, Kind::Deposit, Record::WithTheMove),
            ("POST", "/withdraw") => operation(&request, Kind::Withdraw, Record::WithTheMove),
            ("DELETE", "/") => storage::delete_self_durable()
                .map(|()| Response::text(200, "closed"))
                .map_err(BankError::from),
            _ => Ok(Response::text(
                405,
                "use GET /, POST /deposit?op=<id>&amount=<n>, POST /withdraw?op=<id>&amount=<n> or DELETE /",
            )),
        };
        // `internal`: not known to be done; a 503 asks the client to retry.
        result.unwrap_or_else(|e| Response::text(503, format!("{e}; try again")))
    }

    /// The deliberately wrong variant (feature `broken-idempotency`): a
    /// deposit records its operation id only after its answer went out. A
    /// host that stops between the answer and that write (a crash) leaves the
    /// money moved and the id unknown, so a client that did not get the
    /// answer retries and the deposit is counted twice.
    #[cfg(feature = "broken-idempotency")]
    fn on_request_with(request: Request, responder: Responder) {
        if request.method != "POST" || request.path_only() != "/deposit" {
            responder.send(Self::on_request(request));
            return;
        }
        let answer = operation(&request, Kind::Deposit, Record::AfterTheAnswer)
            .unwrap_or_else(|e| Response::text(503, format!("{e}; try again")));
        let (status, body) = (answer.status, String::from_utf8_lossy(&answer.body).into_owned());
        responder.send(answer);
        if status == 200
            && let Some(op) = request.query_param("op")
        {
            let recorded = storage::exec(
                "INSERT OR REPLACE INTO ops(id, status, answer) VALUES (?1, ?2, ?3)",
                params![op.as_str(), i64::from(status), body.as_str()],
            );
            if let Err(e) = recorded {
                wasmkeep_actor::context::warn(format_args!("the operation's id was not recorded: {e}"));
            }
        }
    }

    fn on_alarm() {
        let paid = storage::transaction(|| {
            let b = balance()?;
            let interest = b / 100;
            storage::exec("UPDATE account SET balance = balance + ?1", params![interest])?;
            storage::exec("INSERT INTO interest(paid) VALUES (?1)", params![interest])?;
            Ok::<_, BankError>(interest)
        });
        if let Err(e) = paid {
            wasmkeep_actor::context::warn(format_args!("interest not paid: {e}"));
        }
        alarms::set_in(DAY);
    }
}

/// Why an operation could not be done: storage failed, or a row had an
/// unexpected type.
#[derive(Debug)]
enum BankError {
    Sql(SqlError),
    Value(ValueError),
}

impl From<SqlError> for BankError {
    fn from(e: SqlError) -> Self {
        Self::Sql(e)
    }
}

impl From<ValueError> for BankError {
    fn from(e: ValueError) -> Self {
        Self::Value(e)
    }
}

impl std::fmt::Display for BankError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Sql(e) => e.fmt(f),
            Self::Value(e) => e.fmt(f),
        }
    }
}

/// When an operation's id is written: with the money it moves, in one
/// transaction (the bank), or by the caller after the answer went out (the
/// broken variant's deposits).
#[derive(Clone, Copy, PartialEq)]
enum Record {
    WithTheMove,
    #[cfg_attr(not(feature = "broken-idempotency"), allow(dead_code))]
    AfterTheAnswer,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Deposit,
    Withdraw,
}

fn balance() -> Result<i64, BankError> {
    let rows = storage::query("SELECT balance FROM account", [])?;
    Ok(rows.first().map_or(Ok(0), |r| r.get::<i64>(0))?)
}

/// `{"balance": <n>, "interest": <total paid>}`.
fn statement() -> Result<Response, BankError> {
    let rows = storage::query("SELECT coalesce(sum(paid), 0) FROM interest", [])?;
    let interest: i64 = rows.first().map_or(Ok(0), |r| r.get(0))?;
    Ok(Response::json(
        200,
        format!("{{\"balance\": {}, \"interest\": {interest}}}", balance()?),
    ))
}

fn operation(request: &Request, kind: Kind, record: Record) -> Result<Response, BankError> {
    let (Some(op), Some(amount)) = (
        request.query_param("op"),
        request.query_param("amount").and_then(|a| a.parse::<i64>().ok()),
    ) else {
        return Ok(Response::text(400, "give ?op=<id>&amount=<a positive whole number>"));
    };
    if amount <= 0 {
        return Ok(Response::text(400, "the amount must be positive"));
    }
    storage::transaction(|| {
        // A retry of an operation already done answers what it answered.
        let done = storage::query("SELECT status, answer FROM ops WHERE id = ?1", params![op.as_str()])?;
        if let Some(row) = done.first() {
            let status: i64 = row.get(0)?;
            let answer: String = row.get(1)?;
            return Ok(Response::text(u16::try_from(status).unwrap_or(500), answer));
        }
        let b = balance()?;
        let (status, answer) = match kind {
            Kind::Withdraw if amount > b => (409, format!("refused: the balance is {b}")),
            Kind::Withdraw => (200, (b - amount).to_string()),
            Kind::Deposit => (200, (b + amount).to_string()),
        };
        if status == 200 {
            let delta = if kind == Kind::Deposit { amount } else { -amount };
            storage::exec("UPDATE account SET balance = balance + ?1", params![delta])?;
        }
        if record == Record::WithTheMove {
            storage::exec(
                "INSERT OR REPLACE INTO ops(id, status, answer) VALUES (?1, ?2, ?3)",
                params![op.as_str(), i64::from(status), answer.as_str()],
            )?;
        }
        Ok(Response::text(status, answer))
    })
}

wasmkeep_actor::export!(Bank);
