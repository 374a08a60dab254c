//! The host's bindings of `wasmkeep:actor@0.2.4` (which serves components built against 0.2.0 to 0.2.3 too): the one place `bindgen!` runs.

wasmtime::component::bindgen!({
    world: "actor",
    // The copy `cargo xtask gen` keeps of wit/: the published crate carries it.
    path: "wit",
    with: {
        "wasmkeep:actor/http.response-outparam": crate::outparam::Outparam,
    },
    // Host functions that fail with a trap return wasmtime::Result.
    imports: { default: trappable },
});

pub use wasmkeep::actor::{alarms, calls, context, http, sockets, storage, types};
