//! A counter actor: `GET` reads the count, `POST` adds one, `DELETE` deletes
//! the actor (the next request meets a new counter at 0).
//!
//! Copy this crate to start a new wasmkeep actor in Rust.

use wasmkeep_actor::{Actor, Request, Response, SqlError, storage};

struct Counter;

impl Actor for Counter {
    /// Runs once per new database: create the table and its one row.
    fn on_init() {
        storage::exec(
            "CREATE TABLE counter(id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
             INSERT INTO counter VALUES (1, 0);",
            [],
        )
        .expect("create the counter table");
    }

    fn on_request(request: Request) -> Response {
        let result = match request.method.as_str() {
            "GET" => count(),
            "POST" => increment(),
            "DELETE" => {
                return match storage::delete_self_durable() {
                    Ok(()) => Response::text(200, "deleted"),
                    // Not known to be durable; the client may retry (503, Retry-After).
                    Err(e @ SqlError::Internal(_)) => Response::not_kept(&e),
                    Err(e) => Response::text(500, e.to_string()),
                };
            }
            _ => return Response::text(405, "use GET, POST or DELETE"),
        };
        match result {
            Ok(n) => Response::text(200, n.to_string()),
            Err(e) => Response::text(500, e.to_string()),
        }
    }
}

/// The current count.
fn count() -> Result<i64, SqlError> {
    let rows = storage::query("SELECT n FROM counter WHERE id = 1", [])?;
    let row = rows.first().expect("on_init inserted the row");
    Ok(row.get("n").expect("n is an integer"))
}

/// Adds one and returns the new count.
fn increment() -> Result<i64, SqlError> {
    storage::exec("UPDATE counter SET n = n + 1 WHERE id = 1", [])?;
    count()
}

wasmkeep_actor::export!(Counter);
