//! A node's pool of instance slots (ADR 042): wakes reuse slots, and a
//! component that needs more than a slot is refused when its class loads.
//! Its own test binary: each pool claims its address space from the
//! process's budget, which the other test binaries' runtimes must not share.

mod common;

use std::time::Duration;
use wasmkeep_host::{ActorKey, FailureKind, InstanceSlots, Runtime, RuntimeConfig, SlotShape};

fn config(dir: &std::path::Path, max_resident: usize, shape: SlotShape) -> RuntimeConfig {
    let mut config = RuntimeConfig::for_tests(dir);
    config.cache_dir = common::cache_dir();
    config.event_timeout = Duration::from_secs(5);
    config.max_resident = max_resident;
    config.instance_slots = InstanceSlots::Pooled(shape);
    config
}

#[test]
fn more_actors_than_the_pool_has_slots_wake_one_after_another_and_keep_their_state() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Two resident at a time: a pool of ten slots (the cap and its spares).
    let rt = Runtime::new(config(dir.path(), 2, SlotShape::default())).expect("runtime");
    common::add_testee_app(&rt);
    let keys: Vec<ActorKey> = (0..30)
        .map(|i| ActorKey::new("t/app", "testee", format!("p{i}")))
        .collect();
    for round in 1..=2 {
        for key in &keys {
            let (status, body) = common::count_request(&rt, key);
            assert_eq!(status, 200, "{key}: {body}");
            assert!(
                body.contains(&format!(r#""rows":[[{{"integer":"{round}"}}]]"#)),
                "{key} in round {round}: {body}"
            );
            rt.settle(key);
        }
        rt.dev().hibernate_all();
    }
}

#[test]
fn a_component_that_needs_more_than_a_slot_is_refused_when_its_class_loads() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The Rust testee's function table starts with more than 17 elements.
    let shape = SlotShape {
        table_elements: 17,
        ..SlotShape::default()
    };
    let rt = Runtime::new(config(dir.path(), 2, shape)).expect("runtime");
    let e = rt
        .add_app(
            "t/app",
            &[wasmkeep_host::ClassSpec {
                name: "testee".into(),
                component: common::component("conformance-testee-rust"),
                access: wasmkeep_host::Access::Open,
            }],
        )
        .expect_err("a table larger than the slot's is refused");
    assert_eq!(e.kind(), FailureKind::Component, "{e}");
    // The message gives the slot's sizes, so the author knows what to change.
    assert!(e.to_string().contains(" 17 "), "{e}");
}
