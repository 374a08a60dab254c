//! The native half of `@wasmkeep/actor/testing`: the `wasmkeep_host` library
//! (the same host the dev server and the conformance runner use) exposed to
//! Node through napi-rs. The JavaScript half (`sdk-ts/testing/index.js`) wraps
//! it in the documented API; this layer stays thin and synchronous.
#![allow(
    unsafe_code,
    reason = "napi-derive expands #[napi] items into the extern \"C\" glue Node calls"
)]

use napi::bindgen_prelude::{Buffer, Either};
use napi_derive::napi;
use serde_json::{Value as Json, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;
use wasmkeep_host::{
    Access, ActorKey, CallFailure, ClassSpec, FaultKind, HttpRequest, Outbound, Runtime, RuntimeConfig, SocketMessage,
    SqlValue,
};

fn err(e: impl std::fmt::Display) -> napi::Error {
    napi::Error::from_reason(e.to_string())
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
}

/// A host with its own data directory and a virtual clock.
#[napi]
pub struct NativeHost {
    rt: Option<Runtime>,
    temp: Option<tempfile::TempDir>,
    sockets: Mutex<HashMap<u64, wasmkeep_host::SocketHandle>>,
}

fn key(app: String, class: String, name: String) -> ActorKey {
    ActorKey::new(app, class, name)
}

fn value_json(v: &SqlValue) -> Json {
    match v {
        SqlValue::Null => Json::Null,
        SqlValue::Integer(i) => json!({ "integer": i.to_string() }),
        SqlValue::Real(r) => json!({ "real": r }),
        SqlValue::Text(t) => Json::String(t.clone()),
        SqlValue::Blob(b) => json!({ "blob": b.iter().map(|x| format!("{x:02x}")).collect::<String>() }),
    }
}

#[napi]
impl NativeHost {
    /// Starts a host (virtual clock, in-memory alarm index).
    #[napi(constructor)]
    pub fn new(options: Option<HostOptions>) -> napi::Result<Self> {
        let options = options.unwrap_or(HostOptions {
            data_dir: None,
            cache_dir: None,
            event_timeout_ms: None,
            idle_timeout_ms: None,
        });
        let (data_dir, temp) = match options.data_dir {
            Some(d) => (PathBuf::from(d), None),
            None => {
                let t = tempfile::Builder::new()
                    .prefix("wasmkeep-test-")
                    .tempdir()
                    .map_err(err)?;
                (t.path().to_owned(), Some(t))
            }
        };
        let mut config = RuntimeConfig::for_tests(&data_dir);
        if let Some(c) = options.cache_dir {
            config.cache_dir = PathBuf::from(c);
        }
        if let Some(ms) = options.event_timeout_ms {
            config.event_timeout = Duration::from_millis(u64::from(ms));
        }
        if let Some(ms) = options.idle_timeout_ms {
            config.idle_timeout = Duration::from_millis(u64::from(ms));
        }
        let rt = Runtime::new(config).map_err(err)?;
        Ok(Self {
            rt: Some(rt),
            temp,
            sockets: Mutex::new(HashMap::new()),
        })
    }

    fn rt(&self) -> napi::Result<&Runtime> {
        self.rt.as_ref().ok_or_else(|| err("the host is closed"))
    }

    /// The data directory.
    #[napi(getter)]
    pub fn data_dir(&self) -> napi::Result<String> {
        Ok(self.rt()?.config().data_dir.display().to_string())
    }

    /// Adds (or replaces) an app with its classes, compiling their components.
    #[napi]
    pub fn add_app(&self, app: String, classes: Vec<ClassOptions>) -> napi::Result<()> {
        let specs = classes
            .into_iter()
            .map(|c| {
                let access = match c.access.as_deref().unwrap_or("open") {
                    "open" => Access::Open,
                    "existing" => Access::Existing,
                    "internal" => Access::Internal,
                    other => {
                        return Err(err(format!(
                            "class {}: access {other:?} is not open, existing or internal",
                            c.name
                        )));
                    }
                };
                Ok(ClassSpec {
                    name: c.name,
                    component: PathBuf::from(c.component),
                    access,
                })
            })
            .collect::<napi::Result<Vec<_>>>()?;
        self.rt()?.add_app(&app, &specs).map_err(err)
    }

    /// Loads an app manifest (`wasmkeep.toml`); returns the app's name.
    #[napi]
    pub fn load_manifest(&self, path: String) -> napi::Result<String> {
        let m = self.rt()?.load_manifest(path.as_ref()).map_err(err)?;
        Ok(m.app)
    }

    /// Sends a request event and waits for the answer.
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
    ) -> napi::Result<NativeResponse> {
        let mut req = HttpRequest::new(&method, &path, body.to_vec());
        for h in headers {
            if let [k, v] = h.as_slice() {
                req.headers.push((k.clone(), v.clone()));
            }
        }
        let answer = self.rt()?.request_blocking(&key(app, class, name), req).map_err(err)?;
        Ok(NativeResponse {
            status: u32::from(answer.status),
            headers: answer.headers.into_iter().map(|(k, v)| vec![k, v]).collect(),
            body: answer.body.into(),
        })
    }

    /// Runs `on-call` as the host: `{ok: Buffer}` or `{error: {kind, message}}`.
    #[napi]
    pub fn call(&self, app: String, class: String, name: String, payload: Buffer) -> napi::Result<Json> {
        let r = self.rt()?.call(&key(app, class, name), payload.to_vec()).map_err(err)?;
        Ok(match r {
            Ok(bytes) => json!({ "ok": bytes }),
            Err(CallFailure::Refused(m)) => json!({ "error": { "kind": "refused", "message": m } }),
            Err(CallFailure::Rejected(m)) => json!({ "error": { "kind": "rejected", "message": m } }),
            Err(CallFailure::Failed(m)) => json!({ "error": { "kind": "failed", "message": m } }),
        })
    }

    /// Opens a WebSocket to an actor (its `on-socket-open` runs); returns the socket id.
    #[napi]
    pub fn open_socket(&self, app: String, class: String, name: String, path: String) -> napi::Result<f64> {
        let handle = self.rt()?.open_socket(&key(app, class, name), &path).map_err(err)?;
        let id = handle.id;
        self.sockets.lock().map_err(err)?.insert(id, handle);
        #[allow(
            clippy::cast_precision_loss,
            reason = "socket ids count up from 1 and stay far below 2^53"
        )]
        Ok(id as f64)
    }

    /// Sends a client message to the actor (its `on-socket-message` runs).
    #[napi]
    pub fn socket_send(&self, id: f64, message: Either<String, Buffer>) -> napi::Result<()> {
        let msg = match message {
            Either::A(t) => SocketMessage::Text(t),
            Either::B(b) => SocketMessage::Binary(b.to_vec()),
        };
        self.rt()?.socket_message(socket_id(id)?, msg).map_err(err)
    }

    /// The client closes the socket (the actor's `on-socket-close` runs).
    #[napi]
    pub fn socket_close(&self, id: f64, code: u32, reason: String) -> napi::Result<()> {
        let code = u16::try_from(code).map_err(|_| err("a close code is 0..=65535"))?;
        self.rt()?.socket_closed(socket_id(id)?, code, &reason);
        Ok(())
    }

    /// What the actor sent the socket's client since the last look, in order:
    /// `{text}`, `{binary}` or `{close: {code, reason}}`.
    #[napi]
    pub fn socket_take(&self, id: f64) -> napi::Result<Vec<Json>> {
        let id = socket_id(id)?;
        let mut sockets = self.sockets.lock().map_err(err)?;
        let handle = sockets
            .get_mut(&id)
            .ok_or_else(|| err(format!("no socket {id} was opened by this host")))?;
        let mut out = Vec::new();
        while let Ok(o) = handle.outbound.try_recv() {
            out.push(match o {
                Outbound::Message(SocketMessage::Text(t)) => json!({ "text": t }),
                Outbound::Message(SocketMessage::Binary(b)) => json!({ "binary": b }),
                Outbound::Close { code, reason } => json!({ "close": { "code": code, "reason": reason } }),
            });
        }
        Ok(out)
    }

    /// Waits until the actor's queued events have run.
    #[napi]
    pub fn settle(&self, app: String, class: String, name: String) -> napi::Result<()> {
        self.rt()?.settle(&key(app, class, name));
        Ok(())
    }

    /// The host's clock (ms since the epoch).
    #[napi]
    pub fn now(&self) -> napi::Result<f64> {
        #[allow(clippy::cast_precision_loss, reason = "milliseconds since the epoch fit in 2^53")]
        Ok(self.rt()?.now_ms() as f64)
    }

    /// Moves the virtual clock forward; returns the new time.
    #[napi]
    pub fn advance_clock(&self, ms: f64) -> napi::Result<f64> {
        if !(ms.is_finite() && ms >= 0.0) {
            return Err(err("advance by a finite number of milliseconds >= 0"));
        }
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "checked finite and non-negative above"
        )]
        let now = self.rt()?.advance_clock(ms as u64).map_err(err)?;
        #[allow(clippy::cast_precision_loss, reason = "milliseconds since the epoch fit in 2^53")]
        Ok(now as f64)
    }

    /// Runs every due alarm; returns how many ran.
    #[napi]
    pub fn run_due_alarms(&self) -> napi::Result<u32> {
        Ok(u32::try_from(self.rt()?.run_due_alarms()).unwrap_or(u32::MAX))
    }

    /// Runs this actor's alarm if it is due; tells whether one ran.
    #[napi]
    pub fn run_alarm(&self, app: String, class: String, name: String) -> napi::Result<bool> {
        Ok(self.rt()?.run_alarm(&key(app, class, name)))
    }

    /// Arms a fault (`fail-removal`, ...) for the next `count` attempts.
    #[napi]
    pub fn arm_fault(&self, kind: String, count: u32) -> napi::Result<()> {
        let k = FaultKind::from_name(&kind).ok_or_else(|| err(format!("unknown fault {kind:?}")))?;
        self.rt()?.faults().arm(k, count);
        Ok(())
    }

    /// Clears every armed fault.
    #[napi]
    pub fn clear_faults(&self) -> napi::Result<()> {
        self.rt()?.faults().clear();
        Ok(())
    }

    /// Whether the actor has a database.
    #[napi]
    pub fn exists(&self, app: String, class: String, name: String) -> napi::Result<bool> {
        Ok(self.rt()?.exists(&key(app, class, name)))
    }

    /// The actor's tables: `{table: {columns, rows}}`; integers as `{integer: "n"}`,
    /// reals as `{real: x}`, blobs as `{blob: hex}`, text and NULL as themselves.
    #[napi]
    pub fn tables(&self, app: String, class: String, name: String) -> napi::Result<Json> {
        let tables = self.rt()?.tables(&key(app, class, name)).map_err(err)?;
        let mut out = serde_json::Map::new();
        for (t, r) in tables {
            let rows: Vec<Json> = r
                .rows
                .iter()
                .map(|row| Json::Array(row.iter().map(value_json).collect()))
                .collect();
            out.insert(t, json!({ "columns": r.columns, "rows": rows }));
        }
        Ok(Json::Object(out))
    }

    /// Every actor the host knows and its status.
    #[napi]
    pub fn actors(&self) -> napi::Result<Json> {
        serde_json::to_value(self.rt()?.actors()).map_err(err)
    }

    /// The lines actors logged.
    #[napi]
    pub fn logs(&self) -> napi::Result<Json> {
        serde_json::to_value(self.rt()?.logs()).map_err(err)
    }

    /// The metrics in Prometheus text.
    #[napi]
    pub fn metrics(&self) -> napi::Result<String> {
        Ok(self.rt()?.metrics().render())
    }

    /// Hibernates every resident actor.
    #[napi]
    pub fn hibernate_all(&self) -> napi::Result<()> {
        self.rt()?.hibernate_all();
        Ok(())
    }

    /// Stops the host and removes its temporary data directory.
    #[napi]
    pub fn close(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.hibernate_all();
        }
        if let Ok(mut s) = self.sockets.lock() {
            s.clear();
        }
        self.temp = None;
    }
}

fn socket_id(id: f64) -> napi::Result<u64> {
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
