//! The benchmark's guest. `on-call` takes a command as text and answers text:
//!
//! - `noop`: nothing (the cost of an event, to subtract).
//! - `exec <n>`: `begin`, then `n` times `INSERT INTO t(x) VALUES (?1)`, then
//!   `rollback` (so no fsync is in the loop). Answers the loop's time as the
//!   guest's own clock saw it, in ns, for a cross-check of the host's timing.
//! - `calls <n>`: `n` calls of `get-alarm`, a host call that lifts nothing
//!   and does almost nothing: what crossing into the host and back costs.
//!   Answers the loop's time in ns by the guest's clock.
//! - `fill <n>`: inserts `n` rows of 100 bytes and keeps them (a small actor).
//! - `delete`: `delete_self_durable()`, answering how long that one call took
//!   in ns (the guest's monotonic clock, around the call only).
//!
//! Over its WebSockets (the fan-out figure), a text message:
//! - `count`: answers the number of open sockets to the sender;
//! - `broadcast <k> <bytes>`: sends `k` text messages of `bytes` bytes to
//!   every open socket, a message to each socket in turn.

use std::time::Instant;

use wasmkeep_actor::{Actor, Address, Message, SocketId, alarms, params, sockets, storage};

struct Bench;

impl Actor for Bench {
    fn on_init() {
        storage::exec("CREATE TABLE t(x INTEGER, pad BLOB)", []).expect("create the table");
    }

    fn on_call(_caller: Option<Address>, payload: Vec<u8>) -> Result<Vec<u8>, String> {
        let text = String::from_utf8(payload).map_err(|e| e.to_string())?;
        let mut words = text.split_whitespace();
        let command = words.next().unwrap_or("");
        let n: i64 = match words.next() {
            Some(w) => w.parse().map_err(|e| format!("{w:?}: {e}"))?,
            None => 0,
        };
        let answer = match command {
            "noop" => 0,
            "exec" => exec_loop(n)?,
            "calls" => calls_loop(n),
            "fill" => {
                storage::transaction(|| -> Result<(), wasmkeep_actor::SqlError> {
                    for i in 0..n {
                        storage::exec("INSERT INTO t(x, pad) VALUES (?1, zeroblob(100))", params![i])?;
                    }
                    Ok(())
                })
                .map_err(|e| e.to_string())?;
                0
            }
            "delete" => {
                let start = Instant::now();
                storage::delete_self_durable().map_err(|e| e.to_string())?;
                start.elapsed().as_nanos()
            }
            other => {
                return Err(format!(
                    "unknown command {other:?}: noop, exec <n>, calls <n>, fill <n>, delete"
                ));
            }
        };
        Ok(answer.to_string().into_bytes())
    }

    fn on_socket_message(socket: SocketId, message: Message) {
        let Message::Text(text) = message else { return };
        let mut words = text.split_whitespace();
        match words.next() {
            Some("count") => {
                let _ = sockets::send_text(socket, &sockets::open_sockets().len().to_string());
            }
            Some("broadcast") => {
                let mut number = || words.next().and_then(|w| w.parse::<usize>().ok()).unwrap_or(1);
                let (k, bytes) = (number(), number());
                let body = "m".repeat(bytes);
                let open = sockets::open_sockets();
                for _ in 0..k {
                    for &s in &open {
                        // A socket closing meanwhile is skipped.
                        let _ = sockets::send_text(s, &body);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `n` inserts inside one transaction that is rolled back; the loop's time in ns.
fn exec_loop(n: i64) -> Result<u128, String> {
    storage::begin().map_err(|e| e.to_string())?;
    let start = Instant::now();
    let mut result = Ok(());
    for i in 0..n {
        if let Err(e) = storage::exec("INSERT INTO t(x) VALUES (?1)", params![i]) {
            result = Err(e.to_string());
            break;
        }
    }
    let took = start.elapsed().as_nanos();
    storage::rollback().map_err(|e| e.to_string())?;
    result.map(|()| took)
}

/// `n` calls of `get-alarm`; the loop's time in ns.
fn calls_loop(n: i64) -> u128 {
    let start = Instant::now();
    for _ in 0..n {
        std::hint::black_box(alarms::get());
    }
    start.elapsed().as_nanos()
}

wasmkeep_actor::export!(Bench);
