//! The C ABI of the harness library (`sdk-c/include/wasmkeep_harness.h`,
//! generated from `sdk-c/harness`), as Rust declarations: the structs laid
//! out as the header lays them out, and the functions this crate calls,
//! looked up by name when the library is loaded. C enums are `int`: they are
//! read as `i32` here, so an unknown value is a number, never undefined
//! behaviour. `the_prebuilt_driver_runs_every_verb` (tests/drivers.rs) runs
//! each of them against the library the workspace builds.

use std::ffi::c_char;

/// The harness's host (opaque).
#[repr(C)]
pub(crate) struct WkhHost {
    _private: [u8; 0],
}

#[repr(C)]
pub(crate) struct Header {
    pub name: *mut c_char,
    pub value: *mut c_char,
}

#[repr(C)]
pub(crate) struct Response {
    pub status: u16,
    pub body: *mut u8,
    pub body_len: usize,
    pub headers: *mut Header,
    pub header_count: usize,
}

/// `wkh_call_status`.
pub(crate) const CALL_OK: i32 = 0;
pub(crate) const CALL_REFUSED: i32 = 1;
pub(crate) const CALL_REJECTED: i32 = 2;

#[repr(C)]
pub(crate) struct CallResult {
    pub status: i32,
    pub data: *mut u8,
    pub len: usize,
}

/// `wkh_outbound_kind`.
pub(crate) const OUTBOUND_TEXT: i32 = 0;
pub(crate) const OUTBOUND_BINARY: i32 = 1;

#[repr(C)]
pub(crate) struct Outbound {
    pub kind: i32,
    pub data: *mut u8,
    pub len: usize,
    pub code: u16,
}

#[repr(C)]
pub(crate) struct HostOptions {
    pub data_dir: *const c_char,
    pub cache_dir: *const c_char,
    pub event_timeout_ms: u32,
    pub idle_timeout_ms: u32,
    pub nodes: u32,
    pub history: u32,
}

#[repr(C)]
pub(crate) struct Class {
    pub name: *const c_char,
    pub component: *const c_char,
    pub access: i32,
}

/// `wkh_admin_deleted`.
pub(crate) const ADMIN_DELETED: i32 = 0;
pub(crate) const ADMIN_REMOVED_UNOPENABLE: i32 = 1;

/// `wkh_deletion_kind`.
pub(crate) const DELETION_DELETED: i32 = 1;
pub(crate) const DELETION_UNKNOWN: i32 = 2;

#[repr(C)]
pub(crate) struct Deletion {
    pub kind: i32,
    pub at_ms: u64,
    pub how: *mut c_char,
    pub reason: *mut c_char,
}

#[repr(C)]
pub(crate) struct Restored {
    pub from: *mut c_char,
    pub at: *mut c_char,
    pub undo: *mut c_char,
}

#[repr(C)]
pub(crate) struct ChaosResult {
    pub ran: u64,
    pub failed: bool,
    pub seed: u64,
    pub message: *mut c_char,
    pub schedule: *mut c_char,
    pub report: *mut c_char,
}

type Host = *const WkhHost;
type Str = *const c_char;

/// Declares the functions and how they are looked up: a missing one is an
/// older library than this crate, which `load` reports by name.
macro_rules! harness_api {
    ($($name:ident: fn($($arg:ty),*) -> $ret:ty;)*) => {
        /// The harness library's functions this crate calls.
        #[allow(clippy::struct_field_names, reason = "the C names")]
        pub(crate) struct Api {
            $(pub $name: unsafe extern "C" fn($($arg),*) -> $ret,)*
        }

        impl Api {
            /// Looks every function up in `lib`.
            ///
            /// # Safety
            /// `lib` is a wasmkeep harness library whose functions have the
            /// signatures above (its version was checked first).
            pub(crate) unsafe fn load(lib: &libloading::Library) -> Result<Self, String> {
                Ok(Self {
                    $($name: {
                        // SAFETY: the signature is the header's, per the contract.
                        let symbol = unsafe {
                            lib.get::<unsafe extern "C" fn($($arg),*) -> $ret>(concat!(stringify!($name), "\0").as_bytes())
                        };
                        *symbol.map_err(|e| format!("{}: {e}", stringify!($name)))?
                    },)*
                })
            }
        }
    };
}

harness_api! {
    wkh_last_error: fn() -> Str;
    wkh_last_error_kind: fn() -> Str;
    wkh_clear_last_error: fn() -> ();
    wkh_string_free: fn(*mut c_char) -> ();
    wkh_host_new: fn(*const HostOptions) -> *mut WkhHost;
    wkh_host_free: fn(*mut WkhHost) -> ();
    wkh_add_app: fn(Host, Str, *const Class, usize) -> i32;
    wkh_request: fn(Host, Str, Str, Str, Str, Str, *const Header, usize, *const u8, usize) -> *mut Response;
    wkh_request_on: fn(Host, u32, Str, Str, Str, Str, Str, *const Header, usize, *const u8, usize) -> *mut Response;
    wkh_response_free: fn(*mut Response) -> ();
    wkh_call: fn(Host, Str, Str, Str, *const u8, usize) -> *mut CallResult;
    wkh_call_result_free: fn(*mut CallResult) -> ();
    wkh_settle: fn(Host, Str, Str, Str) -> i32;
    wkh_now: fn(Host) -> u64;
    wkh_advance_clock: fn(Host, u64) -> u64;
    wkh_advance_clock_running_due: fn(Host, u64, *mut usize) -> u64;
    wkh_run_due_alarms: fn(Host) -> usize;
    wkh_run_alarm: fn(Host, u32, Str, Str, Str) -> i32;
    wkh_tables_json: fn(Host, Str, Str, Str) -> *mut c_char;
    wkh_exists: fn(Host, Str, Str, Str) -> i32;
    wkh_logs_json: fn(Host) -> *mut c_char;
    wkh_arm_fault: fn(Host, Str, u32) -> i32;
    wkh_arm_fault_on: fn(Host, u32, Str, u32) -> i32;
    wkh_restart: fn(Host, Str, Str, Str) -> i32;
    wkh_operator_delete: fn(Host, Str, Str, Str, *mut i32) -> i32;
    wkh_deletion_status: fn(Host, Str, Str, Str) -> *mut Deletion;
    wkh_deletion_free: fn(*mut Deletion) -> ();
    wkh_reset: fn(*mut WkhHost) -> i32;
    wkh_restart_host: fn(*mut WkhHost) -> i32;
    wkh_history: fn(Host, Str, Str, Str) -> *mut c_char;
    wkh_restore: fn(Host, Str, Str, Str, Str, u64) -> *mut Restored;
    wkh_restored_free: fn(*mut Restored) -> ();
    wkh_hibernate_all: fn(Host) -> i32;
    wkh_socket_open: fn(Host, Str, Str, Str, Str) -> u64;
    wkh_socket_send_text: fn(Host, u64, Str) -> i32;
    wkh_socket_take: fn(Host, u64) -> *mut Outbound;
    wkh_outbound_free: fn(*mut Outbound) -> ();
    wkh_cut_off: fn(Host, u32) -> i32;
    wkh_request_operator_delete: fn(Host, Str, Str, Str) -> *mut c_char;
    wkh_set_expire_after_idle: fn(Host, Str, Str, u64) -> i32;
    wkh_run_expiry_passes: fn(Host) -> usize;
    wkh_delete_app: fn(Host, Str) -> i32;
    wkh_chaos_start: fn(Host, u64) -> i32;
    wkh_chaos_end: fn(Host) -> *mut c_char;
    wkh_chaos_fail: fn(Host, Str) -> *mut ChaosResult;
    wkh_chaos_result_free: fn(*mut ChaosResult) -> ();
}
