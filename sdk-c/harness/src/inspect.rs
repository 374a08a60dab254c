//! What a test controls and reads besides events: the virtual clock, alarms,
//! faults, an actor's tables, the host's listings.

use crate::error::{Failure, guard};
use crate::ffi_str::{arg, buffer, free_buffer, free_owned, owned};
use crate::host::{WkhHost, actor_key};
use std::ffi::c_char;
use wasmkeep_host::SqlValue;
use wasmkeep_host_testing::{TestHost, TestHostError};

/// The type of a value read from a table.
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum WkhValueKind {
    /// SQL NULL.
    Null = 0,
    /// `integer` holds it.
    Integer = 1,
    /// `real` holds it.
    Real = 2,
    /// `data` holds `len` bytes of UTF-8 (then a NUL).
    Text = 3,
    /// `data` holds `len` bytes (then a NUL).
    Blob = 4,
}

/// One value of a row.
#[repr(C)]
pub struct WkhValue {
    /// Which field holds the value.
    pub kind: WkhValueKind,
    /// An integer (Integer).
    pub integer: i64,
    /// A real (Real).
    pub real: f64,
    /// Text or blob bytes, followed by a NUL; NULL for the other kinds.
    pub data: *mut u8,
    /// The length of `data` without the NUL.
    pub len: usize,
}

/// The rows of one table: `values[row * column_count + column]`.
/// Free it with `wkh_table_free`.
#[repr(C)]
pub struct WkhTable {
    /// The column names, `column_count` of them.
    pub columns: *mut *mut c_char,
    /// How many columns.
    pub column_count: usize,
    /// `row_count * column_count` values, row after row.
    pub values: *mut WkhValue,
    /// How many rows.
    pub row_count: usize,
}

/// The host's clock in milliseconds since the Unix epoch (virtual: it moves
/// only with `wkh_advance_clock`). 0 if `host` is NULL.
///
/// # Safety
/// `host` is NULL or a live host.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_now(host: *const WkhHost) -> u64 {
    // SAFETY: per the contract.
    guard(0, || {
        unsafe { WkhHost::from_ptr(host)? }.host.now_ms().map_err(Failure::from)
    })
}

/// Moves the virtual clock forward by `ms`. Alarms that came due do not run
/// until `wkh_run_due_alarms` (`wkh_advance_clock_running_due` moves the clock
/// and runs them). Returns the new time, or 0 on failure.
///
/// # Safety
/// `host` is a live host.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_advance_clock(host: *const WkhHost, ms: u64) -> u64 {
    guard(0, || {
        // SAFETY: per the contract.
        let host = unsafe { WkhHost::from_ptr(host)? };
        host.host.advance_clock(ms).map_err(Failure::from)
    })
}

/// Moves the virtual clock forward by `ms` as a running clock would, running
/// what falls due on the way: each alarm due by the new time runs at its own
/// time, in order (so an alarm that sets itself again inside the window runs
/// again), alarms already due first; a cluster's passes run as the clock
/// passes their intervals. Returns the new time, or 0 on failure; when
/// `alarms_ran` is not NULL, it is given how many alarms ran `on-alarm`.
/// Added after 0.2.0.
///
/// # Safety
/// `host` is a live host; `alarms_ran` is NULL or points to a `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_advance_clock_running_due(host: *const WkhHost, ms: u64, alarms_ran: *mut usize) -> u64 {
    guard(0, || {
        // SAFETY: per the contract.
        let host = unsafe { WkhHost::from_ptr(host)? };
        let advanced = host.host.advance_clock_running_due(ms).map_err(Failure::from)?;
        if !alarms_ran.is_null() {
            // SAFETY: per the contract: it points to a size_t.
            unsafe { *alarms_ran = advanced.alarms_ran };
        }
        Ok(advanced.now)
    })
}

/// Runs every due alarm (their `on-alarm` events) and waits for them.
/// Returns how many ran.
///
/// # Safety
/// `host` is a live host.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_run_due_alarms(host: *const WkhHost) -> usize {
    // SAFETY: per the contract.
    guard(0, || {
        unsafe { WkhHost::from_ptr(host)? }
            .host
            .run_due_alarms()
            .map_err(Failure::from)
    })
}

/// Runs the actor's alarm if it is due, through node `node` (numbered from
/// 1), or with `node` 0 through the lowest live node (in a cluster it
/// forwards the alarm to the actor's holder). Returns 1 if `on-alarm` ran,
/// 0 if not (not due, no alarm, a cut-off node), -1 on failure (no such node).
///
/// # Safety
/// `host` is a live host; strings NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_run_alarm(
    host: *const WkhHost,
    node: u32,
    app: *const c_char,
    class: *const c_char,
    name: *const c_char,
) -> i32 {
    guard(-1, || {
        // SAFETY: per the contract.
        let (host, key) = unsafe { (WkhHost::from_ptr(host)?, actor_key(app, class, name)?) };
        let ran = match node {
            0 => host.host.run_alarm(&key),
            n => host.host.run_alarm_on(n as usize, &key),
        }
        .map_err(Failure::from)?;
        Ok(i32::from(ran))
    })
}

/// Waits until the actor's queued events (socket messages, closes) have run.
/// Returns 0 or -1.
///
/// # Safety
/// `host` is a live host; strings NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_settle(
    host: *const WkhHost,
    app: *const c_char,
    class: *const c_char,
    name: *const c_char,
) -> i32 {
    guard(-1, || {
        // SAFETY: per the contract.
        let (host, key) = unsafe { (WkhHost::from_ptr(host)?, actor_key(app, class, name)?) };
        host.host.settle(&key).map_err(Failure::from)?;
        Ok(0)
    })
}

/// Arms a fault of the shim for its next `count` occurrences (0 disarms it):
/// `fail-removal` (one node: removing a deleted actor's files fails),
/// `fail-upload`, `upload-lands-but-fails`, `fail-erase`, `lose-hold`,
/// `cut-off-after-answer` (cluster). Returns 0, or -1 for an unknown name.
///
/// # Safety
/// `host` is a live host; `kind` NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_arm_fault(host: *const WkhHost, kind: *const c_char, count: u32) -> i32 {
    guard(-1, || {
        // SAFETY: per the contract.
        let (host, kind) = unsafe { (WkhHost::from_ptr(host)?, arg(kind, "kind")?) };
        host.host.arm_fault(kind, count).map_err(Failure::from)?;
        Ok(0)
    })
}

/// Arms a fault as `wkh_arm_fault` does, on node `node` (numbered from 1) of
/// a cluster: it hits only events that node runs. Returns 0, or -1 for an
/// unknown name or node.
///
/// # Safety
/// `host` is a live host; `kind` NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_arm_fault_on(host: *const WkhHost, node: u32, kind: *const c_char, count: u32) -> i32 {
    guard(-1, || {
        // SAFETY: per the contract.
        let (host, kind) = unsafe { (WkhHost::from_ptr(host)?, arg(kind, "kind")?) };
        host.host
            .arm_fault_on(node as usize, kind, count)
            .map_err(Failure::from)?;
        Ok(0)
    })
}

/// Disarms every fault, on every node. Returns 0 or -1.
///
/// # Safety
/// `host` is a live host.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_clear_faults(host: *const WkhHost) -> i32 {
    guard(-1, || {
        // SAFETY: per the contract.
        unsafe { WkhHost::from_ptr(host)? }
            .host
            .clear_faults()
            .map_err(Failure::from)?;
        Ok(0)
    })
}

/// Whether the actor has a database: 1 yes, 0 no, -1 on failure.
///
/// # Safety
/// `host` is a live host; strings NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_exists(
    host: *const WkhHost,
    app: *const c_char,
    class: *const c_char,
    name: *const c_char,
) -> i32 {
    guard(-1, || {
        // SAFETY: per the contract.
        let (host, key) = unsafe { (WkhHost::from_ptr(host)?, actor_key(app, class, name)?) };
        Ok(i32::from(host.host.exists(&key).map_err(Failure::from)?))
    })
}

/// Every table of an actor's database as JSON: `{"<table>": {"columns":
/// [...], "rows": [[...]]}}`, a value per column: an integer as
/// `{"integer": "<decimal>"}` (exact beyond 2^53), a real as `{"real": <number>}`,
/// text as a JSON string, a blob as `{"blob": "<hex>"}`, NULL as `null`. Free
/// it with `wkh_string_free`; NULL on failure (no such actor). Added after
/// 0.2.0, for harnesses that read every table at once (the Rust one).
///
/// # Safety
/// `host` is a live host; strings NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_tables_json(
    host: *const WkhHost,
    app: *const c_char,
    class: *const c_char,
    name: *const c_char,
) -> *mut c_char {
    guard(std::ptr::null_mut(), || {
        // SAFETY: per the contract.
        let (host, key) = unsafe { (WkhHost::from_ptr(host)?, actor_key(app, class, name)?) };
        let tables = host.host.tables_json(&key).map_err(Failure::from)?;
        Ok(owned(tables.to_string()))
    })
}

fn value(v: SqlValue) -> WkhValue {
    let mut out = WkhValue {
        kind: WkhValueKind::Null,
        integer: 0,
        real: 0.0,
        data: std::ptr::null_mut(),
        len: 0,
    };
    match v {
        SqlValue::Null => {}
        SqlValue::Integer(i) => (out.kind, out.integer) = (WkhValueKind::Integer, i),
        SqlValue::Real(r) => (out.kind, out.real) = (WkhValueKind::Real, r),
        SqlValue::Text(t) => (out.kind, (out.data, out.len)) = (WkhValueKind::Text, buffer(t.into_bytes())),
        SqlValue::Blob(b) => (out.kind, (out.data, out.len)) = (WkhValueKind::Blob, buffer(b)),
    }
    out
}

/// Reads one table of an actor's database (the actor's own tables; not the
/// host's). Returns it (free it with `wkh_table_free`), or NULL when the actor
/// or the table does not exist (`wkh_last_error` names the tables it has).
///
/// # Safety
/// `host` is a live host; strings NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_table_read(
    host: *const WkhHost,
    app: *const c_char,
    class: *const c_char,
    name: *const c_char,
    table: *const c_char,
) -> *mut WkhTable {
    guard(std::ptr::null_mut(), || {
        // SAFETY: per the contract.
        let (host, key, table) = unsafe {
            (
                WkhHost::from_ptr(host)?,
                actor_key(app, class, name)?,
                arg(table, "table")?,
            )
        };
        let tables = host.host.tables(&key).map_err(Failure::from)?;
        let names: Vec<String> = tables.iter().map(|(n, _)| n.clone()).collect();
        let Some((_, result)) = tables.into_iter().find(|(n, _)| n == table) else {
            return Err(format!("actor {key} has no table {table:?} (tables: {names:?})").into());
        };
        let columns: Box<[*mut c_char]> = result.columns.into_iter().map(owned).collect();
        let column_count = columns.len();
        let row_count = result.rows.len();
        let values: Box<[WkhValue]> = result.rows.into_iter().flatten().map(value).collect();
        Ok(Box::into_raw(Box::new(WkhTable {
            columns: Box::into_raw(columns).cast(),
            column_count,
            values: Box::into_raw(values).cast(),
            row_count,
        })))
    })
}

/// Frees a table and every value in it. NULL does nothing.
///
/// # Safety
/// `table` is NULL or from `wkh_table_read`, not freed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_table_free(table: *mut WkhTable) {
    if table.is_null() {
        return;
    }
    // SAFETY: everything here was made by wkh_table_read with these lengths, freed once.
    unsafe {
        let t = Box::from_raw(table);
        let columns = Box::from_raw(std::ptr::slice_from_raw_parts_mut(t.columns, t.column_count));
        for c in columns.iter() {
            free_owned(*c);
        }
        let values = Box::from_raw(std::ptr::slice_from_raw_parts_mut(
            t.values,
            t.row_count * t.column_count,
        ));
        for v in values.iter() {
            free_buffer(v.data, v.len);
        }
    }
}

/// Runs `f` on the host and hands its text to the caller.
///
/// # Safety
/// `host` is NULL or a live host.
unsafe fn json_string(host: *const WkhHost, f: impl FnOnce(&TestHost) -> Result<String, Failure>) -> *mut c_char {
    guard(std::ptr::null_mut(), || {
        // SAFETY: per the contract.
        let host = unsafe { WkhHost::from_ptr(host)? };
        f(&host.host).map(owned)
    })
}

/// `value` as JSON text, or what failed.
fn to_json<T: serde::Serialize>(value: Result<T, TestHostError>) -> Result<String, Failure> {
    serde_json::to_string(&value?).map_err(|e| Failure::from(e.to_string()))
}

/// Every actor the host knows, as JSON: `[{"app", "class", "name", "status",
/// "alarm"}, ...]` with status `resident`, `hibernated` or `deleted`. Free it
/// with `wkh_string_free`; NULL on failure.
///
/// # Safety
/// `host` is a live host.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_actors_json(host: *const WkhHost) -> *mut c_char {
    // SAFETY: per the contract.
    unsafe { json_string(host, |h| to_json(h.actors())) }
}

/// The lines actors logged, as JSON: `[{"at", "actor", "level", "message"}, ...]`.
/// Free it with `wkh_string_free`; NULL on failure.
///
/// # Safety
/// `host` is a live host.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_logs_json(host: *const WkhHost) -> *mut c_char {
    // SAFETY: per the contract.
    unsafe { json_string(host, |h| to_json(h.logs())) }
}

/// The host's metrics in Prometheus text. Free it with `wkh_string_free`.
///
/// # Safety
/// `host` is a live host.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_metrics(host: *const WkhHost) -> *mut c_char {
    // SAFETY: per the contract.
    unsafe { json_string(host, |h| h.metrics().map_err(Failure::from)) }
}

/// Hibernates every resident actor (their next event wakes them from their
/// files). Returns 0 or -1.
///
/// # Safety
/// `host` is a live host.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn wkh_hibernate_all(host: *const WkhHost) -> i32 {
    guard(-1, || {
        // SAFETY: per the contract.
        unsafe { WkhHost::from_ptr(host)? }
            .host
            .hibernate_all()
            .map_err(Failure::from)?;
        Ok(0)
    })
}
