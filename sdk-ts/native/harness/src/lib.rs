//! The native half of `@wasmkeep/actor/testing`: the `wasmkeep_host` library
//! (the same host the dev server and the conformance runner use) exposed to
//! Node through napi-rs. The TypeScript half (`sdk-ts/testing/src/`) wraps
//! it in the documented API; this layer stays thin and synchronous. Seeded
//! chaos runs the testing crate's loop, calling the test's body (`chaos`).
#![allow(
    unsafe_code,
    reason = "napi-derive expands #[napi] items into the extern \"C\" glue Node calls"
)]

use napi::bindgen_prelude::{Buffer, Either};
use napi_derive::napi;
use serde_json::{Value as Json, json};
use std::cell::{Ref, RefCell, RefMut};
use std::path::PathBuf;
use std::time::Duration;
use wasmkeep_host::deletion::DeletionStatus;
use wasmkeep_host::{ActorKey, AdminDeleted, ClassSpec, HttpRequest, Outbound, SocketMessage};
use wasmkeep_host_testing::{RestoreTo, TestAnswer, TestHost, TestHostError, TestHostOptions, parse_access};

pub mod chaos;
pub mod verbs;

/// The `code` of the error a harness call throws: the kind of the host's
/// failure (`no-such-class`, `needs-cluster`, `no-such-node`, ...), for a test
/// to compare rather than the message's words, or `InvalidArg` for an
/// argument this layer refuses itself.
pub struct ErrorCode(&'static str);

impl AsRef<str> for ErrorCode {
    fn as_ref(&self) -> &str {
        self.0
    }
}

/// A failure of the test host, with its kind as the JavaScript error's `code`.
fn host_err(e: TestHostError) -> napi::Error<ErrorCode> {
    napi::Error::new(ErrorCode(e.kind().as_str()), e.to_string())
}

/// What should not fail did (a listing that does not serialise): `host`,
/// as the host names its own failures.
fn internal(e: impl std::fmt::Display) -> napi::Error<ErrorCode> {
    napi::Error::new(ErrorCode("host"), e.to_string())
}

/// An argument this layer refuses before the host sees it.
fn err(e: impl std::fmt::Display) -> napi::Error<ErrorCode> {
    napi::Error::new(ErrorCode("InvalidArg"), e.to_string())
}

/// Options of a new host.
#[napi(object)]
pub struct HostOptions {
    /// The data directory; a fresh temporary one (removed by `close`) when absent.
    pub data_dir: Option<String>,
    /// Where compiled components are cached (default: `<data dir>/cache`).
    pub cache_dir: Option<String>,
    /// An event's time limit in milliseconds (default 5000).
    pub event_timeout_ms: Option<u32>,
    /// Idle time before an actor hibernates, in milliseconds (default 30000).
    pub idle_timeout_ms: Option<u32>,
    /// How many nodes: 1 (the default) or a local cluster of 2 or more.
    pub nodes: Option<u32>,
    /// A single node keeps its actors' history (default false); a cluster always does.
    pub history: Option<bool>,
}

/// One class of an app.
#[napi(object)]
pub struct ClassOptions {
    /// The class name (`/<class>/<name>` routes to it).
    pub name: String,
    /// The component file.
    pub component: String,
    /// `open` (default), `existing` or `internal`.
    pub access: Option<String>,
}

/// An actor's answer to a request.
#[napi(object)]
pub struct NativeResponse {
    pub status: u32,
    pub headers: Vec<Vec<String>>,
    pub body: Buffer,
    /// For an answer of 500 or more, what the host library says explains
    /// it (the request and the actor's log), to print; none under chaos.
    pub explanation: Option<String>,
}

/// A host with its own data directory and a virtual clock: the host
/// library's `TestHost`, converted to JavaScript's types.
#[napi]
pub struct NativeHost {
    // In a cell: `runChaos` lends the host to the testing crate's loop and,
    // while a body runs, back to the verbs the body calls (every method
    // takes `&self`, so a verb called from inside the body aliases nothing).
    host: RefCell<TestHost>,
}

/// A verb called while the host is borrowed (only a verb called from
/// inside the chaos loop's own steps could be; none is).
fn busy() -> napi::Error<ErrorCode> {
    napi::Error::new(ErrorCode("busy"), "the host is busy with another call".to_owned())
}

impl NativeHost {
    /// The host, for a verb.
    fn host(&self) -> napi::Result<Ref<'_, TestHost>, ErrorCode> {
        self.host.try_borrow().map_err(|_| busy())
    }

    /// The host, for a verb that restarts or closes it.
    fn host_mut(&self) -> napi::Result<RefMut<'_, TestHost>, ErrorCode> {
        self.host.try_borrow_mut().map_err(|_| busy())
    }
}

fn key(app: String, class: String, name: String) -> ActorKey {
    ActorKey::new(app, class, name)
}

#[napi]
impl NativeHost {
    /// Starts a host (virtual clock, in-memory alarm index).
    #[napi(constructor)]
    #[allow(
        clippy::needless_update,
        reason = "options the host library adds later keep their defaults"
    )]
    pub fn new(options: Option<HostOptions>) -> napi::Result<Self, ErrorCode> {
        let options = options.unwrap_or(HostOptions {
            data_dir: None,
            cache_dir: None,
            event_timeout_ms: None,
            idle_timeout_ms: None,
            nodes: None,
            history: None,
        });
        // The library refuses a count it does not run (TestHostError::BadNodes).
        let nodes = options.nodes.map(|n| n as usize);
        let host = TestHost::new(TestHostOptions {
            data_dir: options.data_dir.map(PathBuf::from),
            cache_dir: options.cache_dir.map(PathBuf::from),
            event_timeout: options.event_timeout_ms.map(|ms| Duration::from_millis(u64::from(ms))),
            idle_timeout: options.idle_timeout_ms.map(|ms| Duration::from_millis(u64::from(ms))),
            nodes,
            history: options.history.unwrap_or(false),
            ..TestHostOptions::default()
        })
        .map_err(host_err)?;
        Ok(Self {
            host: RefCell::new(host),
        })
    }

    /// The data directory.
    #[napi(getter)]
    pub fn data_dir(&self) -> napi::Result<String, ErrorCode> {
        Ok(self.host()?.data_dir().map_err(host_err)?.display().to_string())
    }

    /// Adds (or replaces) an app with its classes, compiling their components.
    #[napi]
    pub fn add_app(&self, app: String, classes: Vec<ClassOptions>) -> napi::Result<(), ErrorCode> {
        let specs = classes
            .into_iter()
            .map(|c| {
                let access = parse_access(&c.name, c.access.as_deref().unwrap_or("open")).map_err(host_err)?;
                Ok(ClassSpec {
                    name: c.name,
                    component: PathBuf::from(c.component),
                    access,
                })
            })
            .collect::<napi::Result<Vec<_>, ErrorCode>>()?;
        self.host()?.add_app(&app, &specs).map_err(host_err)
    }

    /// Loads an app manifest (`wasmkeep.toml`); returns the app's name.
    #[napi]
    pub fn load_manifest(&self, path: String) -> napi::Result<String, ErrorCode> {
        self.host()?.load_manifest(path.as_ref()).map_err(host_err)
    }

    /// Sends a request event and waits for the answer; with `node` (1-based),
    /// to that node of a cluster, which serves it or forwards it to the
    /// actor's holder.
    #[napi]
    #[allow(clippy::too_many_arguments, reason = "a flat signature keeps the JS side simple")]
    pub fn request(
        &self,
        app: String,
        class: String,
        name: String,
        method: String,
        path: String,
        headers: Vec<Vec<String>>,
        body: Buffer,
        node: Option<u32>,
    ) -> napi::Result<NativeResponse, ErrorCode> {
        let mut req = HttpRequest::new(&method, &path, body.to_vec());
        req.headers = header_pairs(headers);
        let node = node.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        let answered = self
            .host()?
            .request(&key(app, class, name), req, node)
            .map_err(host_err)?;
        Ok(response(answered))
    }

    /// How many nodes the host runs.
    #[napi(getter)]
    pub fn node_count(&self) -> napi::Result<u32, ErrorCode> {
        Ok(u32::try_from(self.host()?.node_count()).unwrap_or(u32::MAX))
    }

    /// Cuts node `node` off: it holds nothing from now on, and the others
    /// take its actors over from the bucket.
    #[napi]
    pub fn cut_off(&self, node: u32) -> napi::Result<(), ErrorCode> {
        self.host()?.cut_off(node as usize).map_err(host_err)
    }

    /// Cluster: an operator delete of the actor, carried out before this
    /// returns; the request's id.
    #[napi]
    pub fn request_operator_delete(&self, app: String, class: String, name: String) -> napi::Result<String, ErrorCode> {
        self.host()?
            .request_operator_delete(&key(app, class, name))
            .map_err(host_err)
    }

    /// Runs each node's control pass once (app tombstones, heartbeats,
    /// operator delete requests).
    #[napi]
    pub fn run_control_passes(&self) -> napi::Result<(), ErrorCode> {
        self.host()?.run_control_passes().map_err(host_err)
    }

    /// Sets (or, with `null`, removes) a class's `expire-after-idle`, in ms.
    #[napi]
    pub fn set_expire_after_idle(
        &self,
        app: String,
        class: String,
        limit_ms: Option<f64>,
    ) -> napi::Result<(), ErrorCode> {
        let limit = limit_ms
            .map(|ms| {
                if ms.is_finite() && ms >= 0.0 {
                    Ok(Duration::from_secs_f64(ms / 1000.0))
                } else {
                    Err(err(format!(
                        "expire-after-idle of {ms} ms: give a number of milliseconds (at least 3600000, an hour), or null to remove it"
                    )))
                }
            })
            .transpose()?;
        self.host()?
            .set_expire_after_idle(&app, &class, limit)
            .map_err(host_err)
    }

    /// Runs each node's idle-expiry pass once; how many actors were expired.
    #[napi]
    pub fn run_expiry_passes(&self) -> napi::Result<u32, ErrorCode> {
        Ok(u32::try_from(self.host()?.run_expiry_passes().map_err(host_err)?).unwrap_or(u32::MAX))
    }

    /// Cluster: deletes the app as `wasmkeep-shim app delete` does.
    #[napi]
    pub fn delete_app(&self, app: String) -> napi::Result<(), ErrorCode> {
        self.host()?.delete_app(&app).map_err(host_err)
    }

    /// Starts over: no actor, socket, alarm, fault or log line is left, the
    /// clock is back at its start, the same apps are loaded again.
    #[napi]
    pub fn reset(&self) -> napi::Result<(), ErrorCode> {
        self.host_mut()?.reset().map_err(host_err)
    }

    /// Restarts the whole host as its process would stop and start again
    /// on the same data (TestHost::restart_host).
    #[napi]
    pub fn restart_host(&self) -> napi::Result<(), ErrorCode> {
        self.host_mut()?.restart_host().map_err(host_err)
    }

    /// Restarts one actor as a crash and recovery would.
    #[napi]
    pub fn restart(&self, app: String, class: String, name: String) -> napi::Result<(), ErrorCode> {
        self.host()?.restart(&key(app, class, name)).map_err(host_err)
    }

    /// Deletes an actor as an operator would (no guest code runs):
    /// `"deleted"`, `"removed-unopenable"` or `"absent"`.
    #[napi]
    pub fn delete_actor(&self, app: String, class: String, name: String) -> napi::Result<String, ErrorCode> {
        let done = self.host()?.delete_actor(&key(app, class, name)).map_err(host_err)?;
        Ok(match done {
            AdminDeleted::Deleted => "deleted",
            AdminDeleted::RemovedUnopenable => "removed-unopenable",
            AdminDeleted::Absent => "absent",
        }
        .to_owned())
    }

    /// Whether the actor was deleted, from positive evidence only:
    /// `{status: "deleted", at_ms, how}`, `{status: "not-deleted"}` or
    /// `{status: "unknown", reason}`.
    #[napi]
    pub fn deletion_status(&self, app: String, class: String, name: String) -> napi::Result<Json, ErrorCode> {
        let status: DeletionStatus = self.host()?.deletion_status(&key(app, class, name)).map_err(host_err)?;
        serde_json::to_value(status).map_err(internal)
    }

    /// The actor's history, oldest first: `[{bookmark, kind, at, head}]`,
    /// `at` in ms since the epoch on the host's clock.
    #[napi]
    pub fn history(&self, app: String, class: String, name: String) -> napi::Result<Json, ErrorCode> {
        let positions = self.host()?.history(&key(app, class, name)).map_err(host_err)?;
        Ok(Json::Array(
            positions
                .into_iter()
                .map(|p| json!({ "bookmark": p.bookmark, "kind": p.kind, "at": p.at, "head": p.head }))
                .collect(),
        ))
    }

    /// Restores the actor to `bookmark`, or without one to the time
    /// `time_ms` (the last state written at or before it): `{from, at, undo}`,
    /// three bookmarks; restoring to `undo` undoes it.
    #[napi]
    pub fn restore(
        &self,
        app: String,
        class: String,
        name: String,
        bookmark: Option<String>,
        time_ms: Option<f64>,
    ) -> napi::Result<Json, ErrorCode> {
        let to = match (bookmark, time_ms) {
            (Some(b), None) => RestoreTo::Bookmark(b),
            (None, Some(ms)) if ms.is_finite() && ms >= 0.0 && ms.fract() == 0.0 =>
            {
                #[allow(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "checked a whole number >= 0 above"
                )]
                RestoreTo::Time(ms as u64)
            }
            _ => {
                return Err(err(
                    "restore to { bookmark } (a string the history lists) or { time } (ms since the epoch, a whole number >= 0)",
                ));
            }
        };
        let done = self.host()?.restore(&key(app, class, name), &to).map_err(host_err)?;
        serde_json::to_value(done).map_err(internal)
    }

    /// Runs `on-call` as the host: `{ok: Buffer}` or `{error: {kind, message}}`.
    #[napi]
    pub fn call(&self, app: String, class: String, name: String, payload: Buffer) -> napi::Result<Json, ErrorCode> {
        let r = self
            .host()?
            .call(&key(app, class, name), payload.to_vec())
            .map_err(host_err)?;
        Ok(match r {
            Ok(bytes) => json!({ "ok": bytes }),
            Err(f) => json!({ "error": { "kind": f.variant(), "message": f.message() } }),
        })
    }

    /// Opens a WebSocket to an actor (its `on-socket-open` runs); returns the socket id.
    #[napi]
    pub fn open_socket(&self, app: String, class: String, name: String, path: String) -> napi::Result<f64, ErrorCode> {
        let id = self
            .host()?
            .open_socket(&key(app, class, name), &path)
            .map_err(host_err)?;
        #[allow(
            clippy::cast_precision_loss,
            reason = "socket ids count up from 1 and stay far below 2^53"
        )]
        Ok(id as f64)
    }

    /// Sends a client message to the actor (its `on-socket-message` runs).
    #[napi]
    pub fn socket_send(&self, id: f64, message: Either<String, Buffer>) -> napi::Result<(), ErrorCode> {
        let msg = match message {
            Either::A(t) => SocketMessage::Text(t),
            Either::B(b) => SocketMessage::Binary(b.to_vec()),
        };
        self.host()?.socket_send(socket_id(id)?, msg).map_err(host_err)
    }

    /// The client closes the socket (the actor's `on-socket-close` runs).
    #[napi]
    pub fn socket_close(&self, id: f64, code: u32, reason: String) -> napi::Result<(), ErrorCode> {
        let code = u16::try_from(code).map_err(|_| err("a close code is 0..=65535"))?;
        self.host()?
            .socket_close(socket_id(id)?, code, &reason)
            .map_err(host_err)
    }

    /// What the actor sent the socket's client since the last look, in order:
    /// `{text}`, `{binary}` or `{close: {code, reason}}`.
    #[napi]
    pub fn socket_take(&self, id: f64) -> napi::Result<Vec<Json>, ErrorCode> {
        let taken = self.host()?.socket_take(socket_id(id)?).map_err(host_err)?;
        Ok(taken
            .into_iter()
            .map(|o| match o {
                Outbound::Message(SocketMessage::Text(t)) => json!({ "text": t }),
                Outbound::Message(SocketMessage::Binary(b)) => json!({ "binary": b }),
                Outbound::Close { code, reason } => json!({ "close": { "code": code, "reason": reason } }),
            })
            .collect())
    }

    /// Waits until the actor's queued events have run.
    #[napi]
    pub fn settle(&self, app: String, class: String, name: String) -> napi::Result<(), ErrorCode> {
        self.host()?.settle(&key(app, class, name)).map_err(host_err)
    }

    /// The host's clock (ms since the epoch).
    #[napi]
    pub fn now(&self) -> napi::Result<f64, ErrorCode> {
        #[allow(clippy::cast_precision_loss, reason = "milliseconds since the epoch fit in 2^53")]
        Ok(self.host()?.now_ms().map_err(host_err)? as f64)
    }

    /// Moves the virtual clock forward; returns the new time.
    #[napi]
    pub fn advance_clock(&self, ms: f64) -> napi::Result<f64, ErrorCode> {
        if !(ms.is_finite() && ms >= 0.0) {
            return Err(err("advance by a finite number of milliseconds >= 0"));
        }
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "checked finite and non-negative above"
        )]
        let now = self.host()?.advance_clock(ms as u64).map_err(host_err)?;
        #[allow(clippy::cast_precision_loss, reason = "milliseconds since the epoch fit in 2^53")]
        Ok(now as f64)
    }

    /// Moves the virtual clock forward running what falls due on the way,
    /// each alarm at its own time; returns how many alarms ran (`now()` is
    /// the new time).
    #[napi]
    pub fn advance_clock_running_due(&self, ms: f64) -> napi::Result<u32, ErrorCode> {
        if !(ms.is_finite() && ms >= 0.0) {
            return Err(err("advance by a finite number of milliseconds >= 0"));
        }
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "checked finite and non-negative above"
        )]
        let advanced = self.host()?.advance_clock_running_due(ms as u64).map_err(host_err)?;
        Ok(u32::try_from(advanced.alarms_ran).unwrap_or(u32::MAX))
    }

    /// Runs every due alarm; returns how many ran.
    #[napi]
    pub fn run_due_alarms(&self) -> napi::Result<u32, ErrorCode> {
        Ok(u32::try_from(self.host()?.run_due_alarms().map_err(host_err)?).unwrap_or(u32::MAX))
    }

    /// Runs this actor's alarm if it is due; tells whether one ran. In a
    /// cluster it goes through the lowest live node, which forwards it to the holder.
    #[napi]
    pub fn run_alarm(&self, app: String, class: String, name: String) -> napi::Result<bool, ErrorCode> {
        self.host()?.run_alarm(&key(app, class, name)).map_err(host_err)
    }

    /// Runs this actor's alarm through node `node` (1-based) if it is due.
    #[napi]
    pub fn run_alarm_on(&self, node: u32, app: String, class: String, name: String) -> napi::Result<bool, ErrorCode> {
        self.host()?
            .run_alarm_on(node as usize, &key(app, class, name))
            .map_err(host_err)
    }

    /// Arms a fault (`fail-removal`, ...) on node `node` (1-based) for its
    /// next `count` attempts.
    #[napi]
    pub fn arm_fault(&self, node: u32, kind: String, count: u32) -> napi::Result<(), ErrorCode> {
        self.host()?.arm_fault_on(node as usize, &kind, count).map_err(host_err)
    }

    /// Clears every armed fault.
    #[napi]
    pub fn clear_faults(&self) -> napi::Result<(), ErrorCode> {
        self.host()?.clear_faults().map_err(host_err)
    }

    /// Whether the actor has a database.
    #[napi]
    pub fn exists(&self, app: String, class: String, name: String) -> napi::Result<bool, ErrorCode> {
        self.host()?.exists(&key(app, class, name)).map_err(host_err)
    }

    /// The actor's tables: `{table: {columns, rows}}`; integers as `{integer: "n"}`,
    /// reals as `{real: x}`, blobs as `{blob: hex}`, text and NULL as themselves.
    #[napi]
    pub fn tables(&self, app: String, class: String, name: String) -> napi::Result<Json, ErrorCode> {
        self.host()?.tables_json(&key(app, class, name)).map_err(host_err)
    }

    /// Every actor the host knows and its status.
    #[napi]
    pub fn actors(&self) -> napi::Result<Json, ErrorCode> {
        serde_json::to_value(self.host()?.actors().map_err(host_err)?).map_err(internal)
    }

    /// The lines actors logged.
    #[napi]
    pub fn logs(&self) -> napi::Result<Json, ErrorCode> {
        serde_json::to_value(self.host()?.logs().map_err(host_err)?).map_err(internal)
    }

    /// What one actor logged.
    #[napi]
    pub fn logs_of(&self, app: String, class: String, name: String) -> napi::Result<Json, ErrorCode> {
        serde_json::to_value(self.host()?.logs_of(&key(app, class, name)).map_err(host_err)?).map_err(internal)
    }

    /// The metrics in Prometheus text.
    #[napi]
    pub fn metrics(&self) -> napi::Result<String, ErrorCode> {
        self.host()?.metrics().map_err(host_err)
    }

    /// Hibernates every resident actor.
    #[napi]
    pub fn hibernate_all(&self) -> napi::Result<(), ErrorCode> {
        self.host()?.hibernate_all().map_err(host_err)
    }

    /// Stops the host and removes its temporary data directory.
    #[napi]
    pub fn close(&self) -> napi::Result<(), ErrorCode> {
        self.host_mut()?.close();
        Ok(())
    }
}

fn header_pairs(headers: Vec<Vec<String>>) -> Vec<(String, String)> {
    headers
        .into_iter()
        .filter_map(|h| match h.as_slice() {
            [k, v] => Some((k.clone(), v.clone())),
            _ => None,
        })
        .collect()
}

fn response(answered: TestAnswer) -> NativeResponse {
    let answer = answered.response;
    NativeResponse {
        status: u32::from(answer.status),
        headers: answer.headers.into_iter().map(|(k, v)| vec![k, v]).collect(),
        body: answer.body.into(),
        explanation: answered.explanation,
    }
}

fn socket_id(id: f64) -> napi::Result<u64, ErrorCode> {
    if id.is_finite() && id >= 1.0 && id.fract() == 0.0 {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "checked a positive whole number above"
        )]
        Ok(id as u64)
    } else {
        Err(err(format!("{id} is not a socket id")))
    }
}

/// The version of the host library the addon was built with.
#[napi]
pub fn host_version() -> String {
    wasmkeep_host::VERSION.to_owned()
}
