//! Write wasmkeep actors in Rust.
//!
//! An actor is a WebAssembly component built for `wasm32-wasip2` from a
//! `cdylib` crate. It owns one SQLite database ([`storage`]), one alarm
//! ([`alarms`]), its open WebSockets ([`sockets`]), and can call other actors
//! of its app ([`calls`]). The host delivers events to it one at a time; you
//! answer them by implementing [`Actor`] and exporting the type with
//! [`export!`].
//!
//! The crate wraps the WIT package `wasmkeep:actor@0.2.0`; the generated
//! bindings are private.
//!
//! # Quick start
//!
//! ```no_run
//! use wasmkeep_actor::{storage, Actor, Request, Response};
//!
//! struct Hello;
//!
//! impl Actor for Hello {
//!     fn on_init() {
//!         storage::exec("CREATE TABLE visits(at INTEGER)", []).expect("create table");
//!     }
//!
//!     fn on_request(_request: Request) -> Response {
//!         let at = wasmkeep_actor::context::now() as i64;
//!         match storage::exec("INSERT INTO visits VALUES (?1)", wasmkeep_actor::params![at]) {
//!             Ok(_) => Response::text(200, "hello"),
//!             Err(e) => Response::text(500, e.to_string()),
//!         }
//!     }
//! }
//!
//! wasmkeep_actor::export!(Hello);
//! ```
//!
//! Build it into a component with the local host's build command,
//! `wasmkeep-shim build --manifest-path Cargo.toml -o my-actor.wasm`: it uses
//! the `wasm32-wasip2` target when rustup has it, and otherwise Debian's
//! `rustc-web` (see the repository's README). With the rustup target installed,
//! `cargo build --release --target wasm32-wasip2` gives the same component.
//!
//! # Memory is not state
//!
//! An actor's instance may be kept between events, or replaced at any time
//! (hibernation, another node, a deletion). Keep what must survive in
//! [`storage`]; the [`Actor`] handlers are associated functions without
//! `self` for this reason.
#![deny(missing_docs)]

mod actor;
pub mod alarms;
pub mod calls;
pub mod context;
pub mod http;
pub mod sockets;
pub mod storage;

pub use actor::Actor;
pub use calls::CallError;
pub use context::{Address, Level};
pub use http::{Request, Responder, Response};
pub use sockets::{Message, SocketError, SocketId};
pub use storage::{FromValue, Params, Row, Rows, SqlError, Value, ValueError};

/// The version of this SDK (the crate version), e.g. `"0.2.0"`.
///
/// ```
/// assert!(!wasmkeep_actor::VERSION.is_empty());
/// ```
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The version of the WIT package this SDK is built on.
///
/// ```
/// assert_eq!(wasmkeep_actor::WIT_PACKAGE, "wasmkeep:actor@0.2.0");
/// ```
pub const WIT_PACKAGE: &str = "wasmkeep:actor@0.2.0";

/// Not public API: what [`export!`] expands to. May change in any release.
#[doc(hidden)]
pub mod __private {
    /// The generated bindings.
    #[allow(
        unsafe_code,
        missing_docs,
        unused_imports,
        dead_code,
        unreachable_pub,
        clippy::all,
        clippy::unwrap_used,
        rust_2018_idioms
    )]
    pub mod bindings {
        wit_bindgen::generate!({
            world: "actor",
            path: "wit",
            pub_export_macro: true,
            export_macro_name: "export_generated",
            default_bindings_module: "$crate::__private::bindings",
        });
    }

    pub use crate::actor::Adapter;
}

/// Exports a type implementing [`Actor`] as the component's event handlers.
///
/// Use it exactly once, at the top level of the guest crate (a `cdylib`).
/// The expansion holds the component's `unsafe` export shims behind
/// `#[allow(unsafe_code)]`, so it works in crates that `deny(unsafe_code)`
/// but not in crates that `forbid` it.
///
/// ```no_run
/// struct Nothing;
/// impl wasmkeep_actor::Actor for Nothing {}
/// wasmkeep_actor::export!(Nothing);
/// ```
#[macro_export]
macro_rules! export {
    ($actor:ty) => {
        #[allow(unsafe_code)]
        const _: () = {
            type __WasmkeepActorExport = $crate::__private::Adapter<$actor>;
            $crate::__private::bindings::export_generated!(
                __WasmkeepActorExport with_types_in $crate::__private::bindings
            );
        };
    };
}

/// Builds the parameter list of a statement from values of mixed types.
///
/// Each argument is converted with [`Value::from`]; the result is an array
/// of [`Value`], which implements [`Params`].
///
/// ```
/// use wasmkeep_actor::{params, Value};
///
/// let p = params![7, "seven", 7.5, None::<i64>, vec![7u8]];
/// assert_eq!(p[0], Value::Integer(7));
/// assert_eq!(p[1], Value::Text("seven".into()));
/// assert_eq!(p[3], Value::Null);
/// assert_eq!(params![].len(), 0);
/// ```
#[macro_export]
macro_rules! params {
    () => {
        [] as [$crate::Value; 0]
    };
    ($($value:expr),+ $(,)?) => {
        [$($crate::Value::from($value)),+]
    };
}

/// Compiles the README's example as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
