//! The native half of `wasmkeep_actor.testing`: the `wasmkeep_host` library
//! (the same host the dev server and the conformance runner use) exposed to
//! Python through pyo3 as the module `wasmkeep_actor_harness`. The Python half
//! (`sdk-python/wasmkeep_actor/testing.py`) wraps it in the documented API;
//! this layer stays thin and synchronous.
#![allow(
    unsafe_code,
    reason = "pyo3's #[pymodule]/#[pyclass]/#[pymethods] expand into the extern \"C\" glue CPython calls"
)]

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use std::path::PathBuf;
use std::time::Duration;
use wasmkeep_host::{ActorKey, AdminDeleted, ClassSpec, HttpRequest, Outbound, SocketMessage, SqlValue};
use wasmkeep_host_testing::{CHAOS_SEED_VAR, RestoreTo, TestHost, TestHostError, TestHostOptions, parse_access};

pyo3::create_exception!(
    wasmkeep_actor_harness,
    HostError,
    PyRuntimeError,
    "The host refused or failed an operation (no such app or class, a class closed to requests, a closed host, ...)."
);

pub mod chaos;
pub mod verbs;

use chaos::{ChaosFailed, Record, record_py};

fn err(e: impl std::fmt::Display) -> PyErr {
    HostError::new_err(e.to_string())
}

/// A bad argument is Python's `ValueError`; anything else the host refused is
/// `HostError`. Either carries the failure's kind as `kind` (`"no-such-node"`,
/// `"needs-cluster"`, `"bad-argument"`, ...), for tests to match on rather
/// than the message's words.
fn host_err(e: TestHostError) -> PyErr {
    let kind = e.kind();
    let raised = if kind.is_bad_argument() {
        PyValueError::new_err(e.to_string())
    } else {
        HostError::new_err(e.to_string())
    };
    Python::attach(|py| {
        // Setting an attribute on a fresh exception instance does not fail
        // short of memory; the message still says what happened if it does.
        let _ = raised.value(py).setattr("kind", kind.as_str());
    });
    raised
}

fn key(app: String, class: String, name: String) -> ActorKey {
    ActorKey::new(app, class, name)
}

fn value_py(py: Python<'_>, v: &SqlValue) -> PyResult<Py<PyAny>> {
    Ok(match v {
        SqlValue::Null => py.None(),
        SqlValue::Integer(i) => i.into_pyobject(py)?.into_any().unbind(),
        SqlValue::Real(r) => r.into_pyobject(py)?.into_any().unbind(),
        SqlValue::Text(t) => t.into_pyobject(py)?.into_any().unbind(),
        SqlValue::Blob(b) => PyBytes::new(py, b).into_any().unbind(),
    })
}

/// An answer to a request as Python sees it: `(status, headers, body,
/// explanation)`, the explanation what the library says explains an answer
/// of 500 or more (None otherwise, and under chaos).
type Answer = (u16, Vec<(String, String)>, Py<PyBytes>, Option<String>);

/// A host with its own data directory and a virtual clock: the host
/// library's `TestHost`, converted to Python's types (the GIL released while it works).
#[pyclass(module = "wasmkeep_actor_harness")]
pub struct NativeHost {
    host: TestHost,
}

#[pymethods]
impl NativeHost {
    /// Starts a host (virtual clock, in-memory alarm index). Without
    /// `data_dir`, a fresh temporary one that `close` removes.
    #[new]
    #[allow(
        clippy::needless_update,
        reason = "options the host library adds later keep their defaults"
    )]
    #[pyo3(signature = (data_dir=None, cache_dir=None, event_timeout_ms=None, idle_timeout_ms=None, nodes=None, history=false))]
    fn new(
        data_dir: Option<PathBuf>,
        cache_dir: Option<PathBuf>,
        event_timeout_ms: Option<u64>,
        idle_timeout_ms: Option<u64>,
        nodes: Option<usize>,
        history: bool,
    ) -> PyResult<Self> {
        let host = TestHost::new(TestHostOptions {
            data_dir,
            cache_dir,
            event_timeout: event_timeout_ms.map(Duration::from_millis),
            idle_timeout: idle_timeout_ms.map(Duration::from_millis),
            nodes,
            history,
            ..TestHostOptions::default()
        })
        .map_err(host_err)?;
        Ok(Self { host })
    }

    /// How many nodes the host runs (1: a single node).
    #[getter]
    fn node_count(&self) -> usize {
        self.host.node_count()
    }

    /// Cuts node `node` off: it holds nothing from now on, the others take
    /// its actors over from the bucket.
    fn cut_off(&self, py: Python<'_>, node: usize) -> PyResult<()> {
        let host = &self.host;
        py.detach(|| host.cut_off(node)).map_err(host_err)
    }

    /// A cluster's operator delete, as `wasmkeep-shim actor delete` asks for
    /// it, carried out before this returns; the request's id.
    fn request_operator_delete(&self, py: Python<'_>, app: String, class: String, name: String) -> PyResult<String> {
        let host = &self.host;
        py.detach(|| host.request_operator_delete(&key(app, class, name)))
            .map_err(host_err)
    }

    /// Runs each node's control pass once (app tombstones, operator deletes).
    fn run_control_passes(&self, py: Python<'_>) -> PyResult<()> {
        let host = &self.host;
        py.detach(|| host.run_control_passes()).map_err(host_err)
    }

    /// Sets a class's `expire-after-idle` on every node (None removes it).
    fn set_expire_after_idle(&self, py: Python<'_>, app: String, class: String, limit_ms: Option<u64>) -> PyResult<()> {
        let host = &self.host;
        py.detach(|| host.set_expire_after_idle(&app, &class, limit_ms.map(Duration::from_millis)))
            .map_err(host_err)
    }

    /// Runs each node's idle-expiry pass once; how many actors expired.
    fn run_expiry_passes(&self, py: Python<'_>) -> PyResult<usize> {
        let host = &self.host;
        py.detach(|| host.run_expiry_passes()).map_err(host_err)
    }

    /// Deletes an app as `wasmkeep-shim app delete` does (a cluster only).
    fn delete_app(&self, py: Python<'_>, app: String) -> PyResult<()> {
        let host = &self.host;
        py.detach(|| host.delete_app(&app)).map_err(host_err)
    }

    /// Starts over: no actor, socket, alarm, fault, log line or chaos is
    /// left, the clock is back at its start, the same apps are loaded again.
    fn reset(&mut self, py: Python<'_>) -> PyResult<()> {
        let host = &mut self.host;
        py.detach(|| host.reset()).map_err(host_err)
    }

    /// Restarts the whole host as its process would stop and start again on
    /// the same data (TestHost::restart_host).
    fn restart_host(&mut self, py: Python<'_>) -> PyResult<()> {
        let host = &mut self.host;
        py.detach(|| host.restart_host()).map_err(host_err)
    }

    /// Restarts one actor as a crash and recovery would.
    fn restart(&self, py: Python<'_>, app: String, class: String, name: String) -> PyResult<()> {
        let host = &self.host;
        py.detach(|| host.restart(&key(app, class, name))).map_err(host_err)
    }

    /// Deletes an actor as an operator would (no guest code runs):
    /// `deleted`, `removed-unopenable` (its database could not be opened)
    /// or `absent` (there was none).
    fn operator_delete(&self, py: Python<'_>, app: String, class: String, name: String) -> PyResult<&'static str> {
        let host = &self.host;
        let done = py
            .detach(|| host.delete_actor(&key(app, class, name)))
            .map_err(host_err)?;
        Ok(match done {
            AdminDeleted::Deleted => "deleted",
            AdminDeleted::RemovedUnopenable => "removed-unopenable",
            AdminDeleted::Absent => "absent",
        })
    }

    /// Whether the actor was deleted, from positive evidence only, as JSON:
    /// `{"status": "deleted", "at_ms", "how"}`, `{"status": "not-deleted"}`
    /// or `{"status": "unknown", "reason"}`.
    fn deletion_status_json(&self, py: Python<'_>, app: String, class: String, name: String) -> PyResult<String> {
        let host = &self.host;
        let status = py
            .detach(|| host.deletion_status(&key(app, class, name)))
            .map_err(host_err)?;
        serde_json::to_string(&status).map_err(err)
    }

    /// The actor's history, oldest first, as `(bookmark, kind, at_ms, head)`.
    fn history(
        &self,
        py: Python<'_>,
        app: String,
        class: String,
        name: String,
    ) -> PyResult<Vec<(String, String, u64, bool)>> {
        let host = &self.host;
        let positions = py.detach(|| host.history(&key(app, class, name))).map_err(host_err)?;
        Ok(positions
            .into_iter()
            .map(|p| (p.bookmark, p.kind, p.at, p.head))
            .collect())
    }

    /// Restores the actor to `bookmark`, or without one to the time
    /// `time_ms` (the last state written at or before it): `(from, at,
    /// undo)`, three bookmarks; restoring to `undo` undoes it.
    #[pyo3(signature = (app, class, name, bookmark=None, time_ms=None))]
    fn restore(
        &self,
        py: Python<'_>,
        app: String,
        class: String,
        name: String,
        bookmark: Option<String>,
        time_ms: Option<u64>,
    ) -> PyResult<(String, String, String)> {
        let to = match (bookmark, time_ms) {
            (Some(b), None) => RestoreTo::Bookmark(b),
            (None, Some(ms)) => RestoreTo::Time(ms),
            _ => return Err(PyValueError::new_err("restore to a bookmark or a time, one of the two")),
        };
        let host = &self.host;
        let done = py
            .detach(|| host.restore(&key(app, class, name), &to))
            .map_err(host_err)?;
        Ok((done.from, done.at, done.undo))
    }

    /// Starts seeded chaos: before each request, call and socket opening the
    /// seed's schedule may inject a fault (see the library's `start_chaos`).
    fn start_chaos(&self, seed: u64) {
        self.host.start_chaos(seed);
    }

    /// The seed of the chaos running now, or None.
    #[getter]
    fn chaos_seed(&self) -> Option<u64> {
        self.host.chaos_seed()
    }

    /// Stops the chaos; what its schedule did, in order, as
    /// `(event, actor, node, kind, value, text)`.
    fn end_chaos(&self) -> Vec<Record> {
        self.host.end_chaos().iter().map(record_py).collect()
    }

    /// Runs the testing crate's chaos loop: `body(seed)` once per seed (only
    /// `WASMKEEP_CHAOS_SEED` when it is set; `ValueError` when it is not a
    /// number), each after a reset under that seed's schedule, with the GIL
    /// held; returns how many seeds ran. The first seed whose body raises an
    /// `Exception` ends the loop with `ChaosFailed` (its `__cause__` what the
    /// body raised); anything else the body raises (`KeyboardInterrupt`) is
    /// raised as it is. The host is never left in chaos.
    fn run_chaos(slf: &Bound<'_, Self>, seeds: Vec<u64>, body: &Bound<'_, PyAny>) -> PyResult<usize> {
        chaos::run(slf, seeds, body)
    }

    /// The data directory.
    #[getter]
    fn data_dir(&self) -> PyResult<String> {
        Ok(self.host.data_dir().map_err(host_err)?.display().to_string())
    }

    /// Adds (or replaces) an app: `classes` is a list of `(name, component,
    /// access)` with access `open`, `existing` or `internal`. Compiles the
    /// components (or loads them from the cache).
    fn add_app(&self, py: Python<'_>, app: String, classes: Vec<(String, PathBuf, String)>) -> PyResult<()> {
        let specs = classes
            .into_iter()
            .map(|(name, component, access)| {
                let access = parse_access(&name, &access).map_err(host_err)?;
                Ok(ClassSpec {
                    name,
                    component,
                    access,
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        let host = &self.host;
        py.detach(|| host.add_app(&app, &specs)).map_err(host_err)
    }

    /// Loads an app manifest (`wasmkeep.toml`); returns the app's name.
    fn load_manifest(&self, py: Python<'_>, path: PathBuf) -> PyResult<String> {
        let host = &self.host;
        py.detach(|| host.load_manifest(&path)).map_err(host_err)
    }

    /// Sends a request event and waits for the answer: `(status, headers, body)`.
    /// With `node` (1-based), to that node, which serves it or forwards it to
    /// the actor's holder.
    #[allow(clippy::too_many_arguments, reason = "a flat signature keeps the Python side simple")]
    #[pyo3(signature = (app, class, name, method, path, headers, body, node=None))]
    fn request(
        &self,
        py: Python<'_>,
        app: String,
        class: String,
        name: String,
        method: String,
        path: String,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
        node: Option<usize>,
    ) -> PyResult<Answer> {
        let host = &self.host;
        let key = key(app, class, name);
        let mut req = HttpRequest::new(&method, &path, body);
        req.headers = headers;
        let answered = py.detach(|| host.request(&key, req, node)).map_err(host_err)?;
        let answer = answered.response;
        Ok((
            answer.status,
            answer.headers,
            PyBytes::new(py, &answer.body).unbind(),
            answered.explanation,
        ))
    }

    /// Runs `on-call` as the host: `("ok", bytes)` or `(kind, message)` with
    /// kind `refused`, `rejected` or `failed`.
    fn call(
        &self,
        py: Python<'_>,
        app: String,
        class: String,
        name: String,
        payload: Vec<u8>,
    ) -> PyResult<Py<PyTuple>> {
        let host = &self.host;
        let r = py
            .detach(|| host.call(&key(app, class, name), payload))
            .map_err(host_err)?;
        let (kind, value): (&str, Py<PyAny>) = match r {
            Ok(bytes) => ("ok", PyBytes::new(py, &bytes).into_any().unbind()),
            Err(f) => (f.variant(), f.message().into_pyobject(py)?.into_any().unbind()),
        };
        Ok(PyTuple::new(py, [kind.into_pyobject(py)?.into_any().unbind(), value])?.unbind())
    }

    /// Opens a WebSocket to an actor (its `on-socket-open` runs); returns the socket id.
    fn open_socket(&self, py: Python<'_>, app: String, class: String, name: String, path: String) -> PyResult<u64> {
        let host = &self.host;
        py.detach(|| host.open_socket(&key(app, class, name), &path))
            .map_err(host_err)
    }

    /// Sends a client message (`str` text or `bytes` binary) to the actor.
    fn socket_send(&self, py: Python<'_>, id: u64, message: &Bound<'_, PyAny>) -> PyResult<()> {
        let msg = if let Ok(t) = message.extract::<String>() {
            SocketMessage::Text(t)
        } else if let Ok(b) = message.cast::<PyBytes>() {
            SocketMessage::Binary(b.as_bytes().to_vec())
        } else {
            return Err(PyValueError::new_err(
                "a socket message is str (text) or bytes (binary)",
            ));
        };
        let host = &self.host;
        py.detach(|| host.socket_send(id, msg)).map_err(host_err)
    }

    /// The client closes the socket (the actor's `on-socket-close` runs).
    fn socket_close(&self, py: Python<'_>, id: u64, code: u16, reason: String) -> PyResult<()> {
        let host = &self.host;
        py.detach(|| host.socket_close(id, code, &reason)).map_err(host_err)
    }

    /// What the actor sent the socket's client since the last look, in
    /// order: `str`, `bytes`, or `(code, reason)` for the close.
    fn socket_take(&self, py: Python<'_>, id: u64) -> PyResult<Py<PyList>> {
        let out = PyList::empty(py);
        for o in self.host.socket_take(id).map_err(host_err)? {
            match o {
                Outbound::Message(SocketMessage::Text(t)) => out.append(t)?,
                Outbound::Message(SocketMessage::Binary(b)) => out.append(PyBytes::new(py, &b))?,
                Outbound::Close { code, reason } => out.append((code, reason))?,
            }
        }
        Ok(out.unbind())
    }

    /// Waits until the actor's queued events have run.
    fn settle(&self, py: Python<'_>, app: String, class: String, name: String) -> PyResult<()> {
        let host = &self.host;
        py.detach(|| host.settle(&key(app, class, name))).map_err(host_err)
    }

    /// The host's clock (ms since the epoch).
    fn now(&self) -> PyResult<u64> {
        self.host.now_ms().map_err(host_err)
    }

    /// Moves the virtual clock forward; returns the new time.
    fn advance_clock(&self, ms: u64) -> PyResult<u64> {
        self.host.advance_clock(ms).map_err(host_err)
    }

    /// Moves the virtual clock forward running what falls due on the way,
    /// each alarm at its own time; returns the new time and how many alarms ran.
    fn advance_clock_running_due(&self, py: Python<'_>, ms: u64) -> PyResult<(u64, usize)> {
        let host = &self.host;
        py.detach(|| host.advance_clock_running_due(ms))
            .map(|a| (a.now, a.alarms_ran))
            .map_err(host_err)
    }

    /// Runs every due alarm; returns how many ran.
    fn run_due_alarms(&self, py: Python<'_>) -> PyResult<usize> {
        let host = &self.host;
        py.detach(|| host.run_due_alarms()).map_err(host_err)
    }

    /// Runs this actor's alarm if it is due; tells whether one ran. Through
    /// node `node` (1-based) if given, else the lowest live node (in a
    /// cluster it forwards the alarm to the holder).
    #[pyo3(signature = (app, class, name, node=None))]
    fn run_alarm(
        &self,
        py: Python<'_>,
        app: String,
        class: String,
        name: String,
        node: Option<usize>,
    ) -> PyResult<bool> {
        let host = &self.host;
        let key = key(app, class, name);
        py.detach(|| match node {
            Some(n) => host.run_alarm_on(n, &key),
            None => host.run_alarm(&key),
        })
        .map_err(host_err)
    }

    /// Arms a fault (`fail-removal`, ...) on node `node` (1-based, default 1)
    /// for its next `count` attempts.
    #[pyo3(signature = (kind, count, node=1))]
    fn arm_fault(&self, kind: &str, count: u32, node: usize) -> PyResult<()> {
        self.host.arm_fault_on(node, kind, count).map_err(host_err)
    }

    /// Clears every armed fault.
    fn clear_faults(&self) -> PyResult<()> {
        self.host.clear_faults().map_err(host_err)
    }

    /// Whether the actor has a database.
    fn exists(&self, app: String, class: String, name: String) -> PyResult<bool> {
        self.host.exists(&key(app, class, name)).map_err(host_err)
    }

    /// The actor's tables: `{table: (columns, rows)}` with SQLite values as
    /// Python values (None, int, float, str, bytes).
    fn tables(&self, py: Python<'_>, app: String, class: String, name: String) -> PyResult<Py<PyDict>> {
        let host = &self.host;
        let tables = py.detach(|| host.tables(&key(app, class, name))).map_err(host_err)?;
        let out = PyDict::new(py);
        for (t, r) in tables {
            let rows = PyList::empty(py);
            for row in &r.rows {
                let values = row.iter().map(|v| value_py(py, v)).collect::<PyResult<Vec<_>>>()?;
                rows.append(PyTuple::new(py, values)?)?;
            }
            out.set_item(t, (r.columns, rows))?;
        }
        Ok(out.unbind())
    }

    /// Every actor the host knows and its status, as JSON.
    fn actors_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.host.actors().map_err(host_err)?).map_err(err)
    }

    /// The lines actors logged, as JSON.
    fn logs_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.host.logs().map_err(host_err)?).map_err(err)
    }

    /// What one actor logged, as JSON.
    fn logs_of_json(&self, app: String, class: String, name: String) -> PyResult<String> {
        serde_json::to_string(&self.host.logs_of(&key(app, class, name)).map_err(host_err)?).map_err(err)
    }

    /// The metrics in Prometheus text.
    fn metrics(&self) -> PyResult<String> {
        self.host.metrics().map_err(host_err)
    }

    /// Hibernates every resident actor.
    fn hibernate_all(&self, py: Python<'_>) -> PyResult<()> {
        let host = &self.host;
        py.detach(|| host.hibernate_all()).map_err(host_err)
    }

    /// Stops the host and removes its temporary data directory. Idempotent.
    fn close(&mut self, py: Python<'_>) {
        let host = &mut self.host;
        py.detach(|| host.close());
    }
}

/// The module `wasmkeep_actor_harness`.
#[pymodule(name = "wasmkeep_actor_harness")]
fn harness_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeHost>()?;
    m.add_function(wrap_pyfunction!(chaos::chaos_report, m)?)?;
    m.add_function(wrap_pyfunction!(chaos::chaos_seed_from_env, m)?)?;
    m.add("CHAOS_SEED_VAR", CHAOS_SEED_VAR)?;
    m.add("HostError", m.py().get_type::<HostError>())?;
    m.add("ChaosFailed", m.py().get_type::<ChaosFailed>())?;
    m.add("HOST_VERSION", wasmkeep_host::VERSION)?;
    Ok(())
}
