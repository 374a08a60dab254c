//! Components built against an earlier release of the WIT keep working: the
//! host serves `wasmkeep:actor@0.2.4` to a component that imports `@0.2.0`.
//!
//! `data/counter-rust-0.2.0.wasm` is `examples/counter-rust` as built at the
//! 0.2.0 release; it is never rebuilt (that is its point).

mod common;

use std::path::PathBuf;
use wasmkeep_host::{Access, ActorKey, ClassSpec, HttpRequest, Runtime, RuntimeConfig};

#[test]
fn a_component_built_against_0_2_0_links_and_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = RuntimeConfig::for_tests(dir.path());
    config.cache_dir = common::cache_dir();
    let rt = Runtime::new(config).expect("runtime");
    let old = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/counter-rust-0.2.0.wasm");
    rt.add_app(
        "t/app",
        &[ClassSpec {
            name: "counter".into(),
            component: old,
            access: Access::Open,
        }],
    )
    .expect("a component importing wasmkeep:actor@0.2.0 links against the 0.2.4 host");
    let k = ActorKey::new("t/app", "counter", "c");
    for want in ["1", "2"] {
        let r = rt
            .request_blocking(&k, HttpRequest::new("POST", "/", ""))
            .expect("the 0.2.0 counter answers");
        assert_eq!(
            String::from_utf8_lossy(&r.body),
            want,
            "the 0.2.0 counter keeps its count in storage as it did"
        );
    }
}
