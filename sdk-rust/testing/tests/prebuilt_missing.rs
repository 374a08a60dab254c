//! The prebuilt driver without its library: `start` fails and says where it
//! looked and what to install; it does not crash.
#![allow(unsafe_code, reason = "setting the library's variable before any other thread runs")]

use wasmkeep_actor_testing::{ActorTest, Driver, HarnessError};

#[test]
fn a_missing_library_is_an_error_of_the_harness() {
    // SAFETY: the only test of this binary, before it starts any thread.
    unsafe { std::env::set_var("WASMKEEP_HARNESS_LIB", "/nonexistent/libwasmkeep_c_harness.so") };
    let started = ActorTest::builder(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/counter-rust"))
        .class("counter")
        .driver(Driver::Prebuilt)
        .start();
    let e = started.err().expect("no library, no host");
    let e = e.downcast_ref::<HarnessError>().expect("the harness's own error");
    assert_eq!(e.kind.as_deref(), Some("harness-library"));
}
