//! The Rust conformance testee (see `conformance/PROTOCOL.md`): runs the
//! operations a request lists through the Rust SDK's public API and answers
//! each outcome. It holds no test logic.

use serde_json::{Map, Value as Json, json};
use wasmkeep_actor::{
    Actor, Address, CallError, Message, Request, Responder, Response, SocketError, SocketId, SqlError, Value, alarms,
    calls, context, sockets, storage,
};

struct Testee;

impl Actor for Testee {
    fn on_init() {
        storage::exec("CREATE TABLE IF NOT EXISTS init_log(n INTEGER)", []).expect("create init_log");
        storage::exec(
            "INSERT INTO init_log(n) VALUES ((SELECT count(*) FROM init_log) + 1)",
            [],
        )
        .expect("insert into init_log");
        // For the host's own tests of an on-init that fails or is killed
        // after its first write (Rust testee only; PROTOCOL.md, "Other events").
        let name = context::self_address().name;
        if let Some(until) = name
            .strip_prefix("init-traps-before-")
            .and_then(|t| t.parse::<u64>().ok())
            && context::now() < until
        {
            panic!("on-init traps before {until} ms, after its first write (the actor's name asks for it)");
        }
        if let Some(ms) = name.strip_prefix("init-spins-").and_then(|t| t.parse::<u64>().ok()) {
            let until = context::now().saturating_add(ms);
            while context::now() < until {}
        }
    }

    fn on_request_with(request: Request, responder: Responder) {
        let mut responder = Some(responder);
        let outcomes = match parse_ops(&request.body) {
            Ok(ops) => run_ops(&ops, &mut responder),
            Err(message) => {
                if let Some(r) = responder.take() {
                    r.send(Response::json(400, json!({ "error": message }).to_string()));
                }
                return;
            }
        };
        // The WIT's own semantics (answer, then the event's end keeps the
        // writes); a case asks for the SDK's kept answer with `respond`'s `kept`.
        if let Some(r) = responder.take() {
            r.send_before_kept(outcomes_response(200, &outcomes));
        }
    }

    fn on_alarm() {
        storage::exec("CREATE TABLE IF NOT EXISTS alarm_log(at TEXT)", []).expect("create alarm_log");
        storage::exec(
            "INSERT INTO alarm_log(at) VALUES (?1)",
            [Value::Text(context::now().to_string())],
        )
        .expect("insert into alarm_log");
    }

    fn on_call(_caller: Option<Address>, payload: Vec<u8>) -> Result<Vec<u8>, String> {
        let ops = parse_ops(&payload)?;
        let outcomes = run_ops(&ops, &mut None);
        Ok(json!({ "outcomes": outcomes }).to_string().into_bytes())
    }

    fn on_socket_open(socket: SocketId, path: String) {
        log_socket("open", socket, &path);
    }

    fn on_socket_message(socket: SocketId, message: Message) {
        match message {
            Message::Text(text) => {
                log_socket("message", socket, &text);
                if let Some(echo) = text.strip_prefix("echo:")
                    && let Err(e) = sockets::send_text(socket, echo)
                {
                    context::warn(format_args!("echo on socket {socket}: {e}"));
                }
            }
            Message::Binary(bytes) => log_socket("message", socket, &hex(&bytes)),
        }
    }

    fn on_socket_close(socket: SocketId, code: u16, reason: String) {
        log_socket("close", socket, &format!("{code} {reason}"));
    }
}

wasmkeep_actor::export!(Testee);

/// Records a socket event in `socket_log(event, socket, detail)`.
fn log_socket(event: &str, socket: SocketId, detail: &str) {
    let result = storage::exec(
        "CREATE TABLE IF NOT EXISTS socket_log(event TEXT, socket TEXT, detail TEXT)",
        [],
    )
    .and_then(|_| {
        storage::exec(
            "INSERT INTO socket_log(event, socket, detail) VALUES (?1, ?2, ?3)",
            wasmkeep_actor::params![event, socket.to_string(), detail],
        )
    });
    if let Err(e) = result {
        context::error(format_args!("socket_log: {e}"));
    }
}

fn outcomes_response(status: u16, outcomes: &[Json]) -> Response {
    Response::json(status, json!({ "outcomes": outcomes }).to_string())
}

/// The `ops` list of a request body (an empty body is no operations).
fn parse_ops(body: &[u8]) -> Result<Vec<Json>, String> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Vec::new());
    }
    let doc: Json = serde_json::from_slice(body).map_err(|e| format!("invalid JSON: {e}"))?;
    match doc.get("ops") {
        Some(Json::Array(ops)) => Ok(ops.clone()),
        _ => Err("the body must be an object with an \"ops\" array".to_string()),
    }
}

/// Runs every operation in order; one outcome each, except `trap` and `loop`,
/// which end the event.
fn run_ops(ops: &[Json], responder: &mut Option<Responder>) -> Vec<Json> {
    let mut outcomes = Vec::with_capacity(ops.len());
    for op in ops {
        let outcome = match run_op(op, responder, &outcomes) {
            Ok(value) => json!({ "ok": value }),
            Err(err) => json!({ "err": err.to_json() }),
        };
        outcomes.push(outcome);
    }
    outcomes
}

/// A failed operation, as the protocol writes it.
enum OpError {
    BadOp(String),
    Sql(SqlError),
    Socket(SocketError),
    Call(CallError),
}

impl OpError {
    fn to_json(&self) -> Json {
        match self {
            Self::BadOp(m) => json!({ "kind": "bad-op", "message": m }),
            Self::Sql(SqlError::NotAllowed(m)) => json!({ "kind": "not-allowed", "message": m }),
            Self::Sql(SqlError::Internal(m)) => json!({ "kind": "internal", "message": m }),
            Self::Sql(SqlError::Sqlite { code, message }) => {
                json!({ "kind": "sqlite", "code": code, "message": message })
            }
            Self::Socket(SocketError::NotOpen) => {
                json!({ "kind": "not-open", "message": "socket not open" })
            }
            Self::Call(CallError::Refused(m)) => json!({ "kind": "refused", "message": m }),
            Self::Call(CallError::Rejected(m)) => json!({ "kind": "rejected", "message": m }),
            Self::Call(CallError::Failed(m)) => json!({ "kind": "failed", "message": m }),
        }
    }
}

impl From<SqlError> for OpError {
    fn from(e: SqlError) -> Self {
        Self::Sql(e)
    }
}

impl From<SocketError> for OpError {
    fn from(e: SocketError) -> Self {
        Self::Socket(e)
    }
}

impl From<CallError> for OpError {
    fn from(e: CallError) -> Self {
        Self::Call(e)
    }
}

fn bad(message: impl Into<String>) -> OpError {
    OpError::BadOp(message.into())
}

fn field<'a>(op: &'a Map<String, Json>, name: &str) -> Result<&'a Json, OpError> {
    op.get(name).ok_or_else(|| bad(format!("missing field \"{name}\"")))
}

fn str_field<'a>(op: &'a Map<String, Json>, name: &str) -> Result<&'a str, OpError> {
    field(op, name)?
        .as_str()
        .ok_or_else(|| bad(format!("\"{name}\" must be a string")))
}

/// A u64 given as a decimal string (or, leniently, a JSON number).
fn u64_field(op: &Map<String, Json>, name: &str) -> Result<u64, OpError> {
    let value = field(op, name)?;
    match value {
        Json::String(s) => s.parse().ok(),
        Json::Number(n) => n.as_u64(),
        _ => None,
    }
    .ok_or_else(|| bad(format!("\"{name}\" must be a decimal string of a u64")))
}

fn params(op: &Map<String, Json>) -> Result<Vec<Value>, OpError> {
    match op.get("params") {
        None | Some(Json::Null) => Ok(Vec::new()),
        Some(Json::Array(values)) => values.iter().map(value_from_json).collect(),
        Some(_) => Err(bad("\"params\" must be an array")),
    }
}

fn value_from_json(v: &Json) -> Result<Value, OpError> {
    let obj = v
        .as_object()
        .filter(|o| o.len() == 1)
        .ok_or_else(|| bad(format!("a value is an object with one key, not {v}")))?;
    let (kind, inner) = obj.iter().next().ok_or_else(|| bad("empty value"))?;
    let invalid = || bad(format!("invalid {kind} value {inner}"));
    Ok(match kind.as_str() {
        "null" => Value::Null,
        "integer" => Value::Integer(match inner {
            Json::String(s) => s.parse().map_err(|_| invalid())?,
            Json::Number(n) => n.as_i64().ok_or_else(invalid)?,
            _ => return Err(invalid()),
        }),
        "real" => Value::Real(inner.as_f64().ok_or_else(invalid)?),
        "text" => Value::Text(inner.as_str().ok_or_else(invalid)?.to_string()),
        "blob" => Value::Blob(unhex(inner.as_str().ok_or_else(invalid)?).ok_or_else(invalid)?),
        _ => return Err(bad(format!("unknown value kind \"{kind}\""))),
    })
}

fn value_to_json(v: &Value) -> Json {
    match v {
        Value::Null => json!({ "null": true }),
        Value::Integer(i) => json!({ "integer": i.to_string() }),
        Value::Real(r) => json!({ "real": r }),
        Value::Text(t) => json!({ "text": t }),
        Value::Blob(b) => json!({ "blob": hex(b) }),
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// A bookmark, or none, as the protocol answers it.
fn bookmark_json(b: Option<String>) -> Json {
    match b {
        Some(b) => json!({ "bookmark": b }),
        None => json!({ "none": true }),
    }
}

fn run_op(op: &Json, responder: &mut Option<Responder>, outcomes_so_far: &[Json]) -> Result<Json, OpError> {
    let op = op.as_object().ok_or_else(|| bad("an operation is a JSON object"))?;
    let name = str_field(op, "op")?;
    match name {
        "exec" => {
            let changed = storage::exec(str_field(op, "sql")?, params(op)?)?;
            Ok(json!({ "changed": changed }))
        }
        "exec-durable" => {
            let changed = storage::exec_durable(str_field(op, "sql")?, params(op)?)?;
            Ok(json!({ "changed": changed }))
        }
        "query" => {
            let rows = storage::query(str_field(op, "sql")?, params(op)?)?;
            let json_rows: Vec<Json> = rows
                .iter()
                .map(|row| Json::Array(row.values().iter().map(value_to_json).collect()))
                .collect();
            Ok(json!({ "columns": rows.columns(), "rows": json_rows }))
        }
        "flush" => storage::flush().map(|()| Json::Null).map_err(Into::into),
        "current-bookmark" => Ok(bookmark_json(storage::current_bookmark()?)),
        "bookmark-for-time" => Ok(bookmark_json(storage::bookmark_for_time(u64_field(op, "at")?)?)),
        "restore-on-next-session" => {
            Ok(json!({ "undo": storage::restore_on_next_session(str_field(op, "bookmark")?)? }))
        }
        "begin" => storage::begin().map(|()| Json::Null).map_err(Into::into),
        "commit" => storage::commit().map(|()| Json::Null).map_err(Into::into),
        "rollback" => storage::rollback().map(|()| Json::Null).map_err(Into::into),
        "delete-self" => {
            storage::delete_self();
            Ok(Json::Null)
        }
        "delete-self-durable" => storage::delete_self_durable().map(|()| Json::Null).map_err(Into::into),
        "get-alarm" => Ok(match alarms::get() {
            Some(at) => json!({ "pending": true, "at": at.to_string() }),
            None => json!({ "pending": false }),
        }),
        "set-alarm" => {
            if op.contains_key("at") {
                alarms::set(u64_field(op, "at")?);
            } else if op.contains_key("in") {
                let delay = u64_field(op, "in")?;
                alarms::set(context::now().saturating_add(delay));
            } else {
                return Err(bad("set-alarm needs \"at\" or \"in\""));
            }
            Ok(Json::Null)
        }
        "clear-alarm" => {
            alarms::clear();
            Ok(Json::Null)
        }
        "now" => Ok(json!({ "now": context::now().to_string() })),
        "previous-deletion" => Ok(match context::previous_deletion() {
            None => json!({ "deleted": false }),
            Some(d) => {
                let cause = match d.cause {
                    context::DeletionCause::DeleteSelf => "delete-self",
                    context::DeletionCause::DeleteSelfDurable => "delete-self-durable",
                    context::DeletionCause::Operator => "operator",
                    context::DeletionCause::Expired => "expired",
                };
                json!({ "deleted": true, "at": d.at.to_string(), "cause": cause })
            }
        }),
        "self" => {
            let me = context::self_address();
            Ok(json!({ "class": me.class, "name": me.name, "app": context::app() }))
        }
        "log" => {
            context::info(str_field(op, "message")?);
            Ok(Json::Null)
        }
        "respond" => {
            let status = match op.get("status") {
                None | Some(Json::Null) => 200,
                Some(s) => s
                    .as_u64()
                    .and_then(|s| u16::try_from(s).ok())
                    .ok_or_else(|| bad("\"status\" must be a number"))?,
            };
            let r = responder
                .take()
                .ok_or_else(|| bad("respond: no request to answer (already answered, or a call)"))?;
            let response = outcomes_response(status, outcomes_so_far);
            if op.get("kept").and_then(Json::as_bool).unwrap_or(false) {
                r.send(response);
            } else {
                r.send_before_kept(response);
            }
            Ok(Json::Null)
        }
        "trap" => panic!("trap requested by the conformance case"),
        "loop" => loop {
            std::hint::black_box(());
        },
        "alloc" => {
            let mb = usize::try_from(u64_field(op, "mb")?).map_err(|_| bad("mb is too large"))?;
            let block = std::hint::black_box(vec![1u8; mb << 20]);
            Ok(json!({ "bytes": block.len() }))
        }
        "call" => {
            let target = Address::new(str_field(op, "class")?, str_field(op, "name")?);
            let answer = calls::call(&target, str_field(op, "payload")?)?;
            Ok(json!({ "payload": String::from_utf8_lossy(&answer) }))
        }
        "sockets" => {
            let ids: Vec<String> = sockets::open_sockets().iter().map(ToString::to_string).collect();
            Ok(json!({ "sockets": ids }))
        }
        "send" => {
            sockets::send_text(u64_field(op, "socket")?, str_field(op, "text")?)?;
            Ok(Json::Null)
        }
        "close" => {
            let code = field(op, "code")?
                .as_u64()
                .and_then(|c| u16::try_from(c).ok())
                .ok_or_else(|| bad("\"code\" must be a number"))?;
            sockets::close(u64_field(op, "socket")?, code, str_field(op, "reason")?)?;
            Ok(Json::Null)
        }
        other => Err(bad(format!("unknown op \"{other}\""))),
    }
}
