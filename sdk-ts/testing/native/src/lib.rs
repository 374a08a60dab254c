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
use std::path::PathBuf;
use std::time::Duration;
use wasmkeep_host::{
    ActorKey, CallFailure, ClassSpec, Outbound, SocketMessage, TestHost, TestHostOptions, parse_access,
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

/// A host with its own data directory and a virtual clock: the host
/// library's `TestHost`, converted to JavaScript's types.
#[napi]
pub struct NativeHost {
    host: TestHost,
}

fn key(app: String, class: String, name: String) -> ActorKey {
    ActorKey::new(app, class, name)
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
        let host = TestHost::new(TestHostOptions {
            data_dir: options.data_dir.map(PathBuf::from),
            cache_dir: options.cache_dir.map(PathBuf::from),
            event_timeout: options.event_timeout_ms.map(|ms| Duration::from_millis(u64::from(ms))),
            idle_timeout: options.idle_timeout_ms.map(|ms| Duration::from_millis(u64::from(ms))),
            // One node: the cluster verbs are not bound in this language yet.
            ..TestHostOptions::default()
        })
        .map_err(err)?;
        Ok(Self { host })
    }

    /// The data directory.
    #[napi(getter)]
    pub fn data_dir(&self) -> napi::Result<String> {
        Ok(self.host.data_dir().map_err(err)?.display().to_string())
    }

    /// Adds (or replaces) an app with its classes, compiling their components.
    #[napi]
    pub fn add_app(&self, app: String, classes: Vec<ClassOptions>) -> napi::Result<()> {
        let specs = classes
            .into_iter()
            .map(|c| {
                let access = parse_access(&c.name, c.access.as_deref().unwrap_or("open")).map_err(err)?;
                Ok(ClassSpec {
                    name: c.name,
                    component: PathBuf::from(c.component),
                    access,
                })
            })
            .collect::<napi::Result<Vec<_>>>()?;
        self.host.add_app(&app, &specs).map_err(err)
    }

    /// Loads an app manifest (`wasmkeep.toml`); returns the app's name.
    #[napi]
    pub fn load_manifest(&self, path: String) -> napi::Result<String> {
        self.host.load_manifest(path.as_ref()).map_err(err)
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
        let headers = headers
            .into_iter()
            .filter_map(|h| match h.as_slice() {
                [k, v] => Some((k.clone(), v.clone())),
                _ => None,
            })
            .collect();
        let answer = self
            .host
            .request(&key(app, class, name), &method, &path, headers, body.to_vec())
            .map_err(err)?;
        Ok(NativeResponse {
            status: u32::from(answer.status),
            headers: answer.headers.into_iter().map(|(k, v)| vec![k, v]).collect(),
            body: answer.body.into(),
        })
    }

    /// Runs `on-call` as the host: `{ok: Buffer}` or `{error: {kind, message}}`.
    #[napi]
    pub fn call(&self, app: String, class: String, name: String, payload: Buffer) -> napi::Result<Json> {
        let r = self.host.call(&key(app, class, name), payload.to_vec()).map_err(err)?;
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
        let id = self.host.open_socket(&key(app, class, name), &path).map_err(err)?;
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
        self.host.socket_send(socket_id(id)?, msg).map_err(err)
    }

    /// The client closes the socket (the actor's `on-socket-close` runs).
    #[napi]
    pub fn socket_close(&self, id: f64, code: u32, reason: String) -> napi::Result<()> {
        let code = u16::try_from(code).map_err(|_| err("a close code is 0..=65535"))?;
        self.host.socket_close(socket_id(id)?, code, &reason).map_err(err)
    }

    /// What the actor sent the socket's client since the last look, in order:
    /// `{text}`, `{binary}` or `{close: {code, reason}}`.
    #[napi]
    pub fn socket_take(&self, id: f64) -> napi::Result<Vec<Json>> {
        let taken = self.host.socket_take(socket_id(id)?).map_err(err)?;
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
    pub fn settle(&self, app: String, class: String, name: String) -> napi::Result<()> {
        self.host.settle(&key(app, class, name)).map_err(err)
    }

    /// The host's clock (ms since the epoch).
    #[napi]
    pub fn now(&self) -> napi::Result<f64> {
        #[allow(clippy::cast_precision_loss, reason = "milliseconds since the epoch fit in 2^53")]
        Ok(self.host.now_ms().map_err(err)? as f64)
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
        let now = self.host.advance_clock(ms as u64).map_err(err)?;
        #[allow(clippy::cast_precision_loss, reason = "milliseconds since the epoch fit in 2^53")]
        Ok(now as f64)
    }

    /// Runs every due alarm; returns how many ran.
    #[napi]
    pub fn run_due_alarms(&self) -> napi::Result<u32> {
        Ok(u32::try_from(self.host.run_due_alarms().map_err(err)?).unwrap_or(u32::MAX))
    }

    /// Runs this actor's alarm if it is due; tells whether one ran.
    #[napi]
    pub fn run_alarm(&self, app: String, class: String, name: String) -> napi::Result<bool> {
        self.host.run_alarm(&key(app, class, name)).map_err(err)
    }

    /// Arms a fault (`fail-removal`, ...) for the next `count` attempts.
    #[napi]
    pub fn arm_fault(&self, kind: String, count: u32) -> napi::Result<()> {
        self.host.arm_fault(&kind, count).map_err(err)
    }

    /// Clears every armed fault.
    #[napi]
    pub fn clear_faults(&self) -> napi::Result<()> {
        self.host.clear_faults().map_err(err)
    }

    /// Whether the actor has a database.
    #[napi]
    pub fn exists(&self, app: String, class: String, name: String) -> napi::Result<bool> {
        self.host.exists(&key(app, class, name)).map_err(err)
    }

    /// The actor's tables: `{table: {columns, rows}}`; integers as `{integer: "n"}`,
    /// reals as `{real: x}`, blobs as `{blob: hex}`, text and NULL as themselves.
    #[napi]
    pub fn tables(&self, app: String, class: String, name: String) -> napi::Result<Json> {
        self.host.tables_json(&key(app, class, name)).map_err(err)
    }

    /// Every actor the host knows and its status.
    #[napi]
    pub fn actors(&self) -> napi::Result<Json> {
        serde_json::to_value(self.host.actors().map_err(err)?).map_err(err)
    }

    /// The lines actors logged.
    #[napi]
    pub fn logs(&self) -> napi::Result<Json> {
        serde_json::to_value(self.host.logs().map_err(err)?).map_err(err)
    }

    /// The metrics in Prometheus text.
    #[napi]
    pub fn metrics(&self) -> napi::Result<String> {
        self.host.metrics().map_err(err)
    }

    /// Hibernates every resident actor.
    #[napi]
    pub fn hibernate_all(&self) -> napi::Result<()> {
        self.host.hibernate_all().map_err(err)
    }

    /// Stops the host and removes its temporary data directory.
    #[napi]
    pub fn close(&mut self) {
        self.host.close();
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
