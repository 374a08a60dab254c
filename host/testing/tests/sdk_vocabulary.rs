//! The SDKs spell the testing vocabulary as this crate names it: a step the
//! TypeScript types leave out is a chaos record a typed test cannot match.

use std::path::Path;
use wasmkeep_host_testing::ChaosStep;

fn repo_file(rel: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
}

#[test]
fn the_typescript_types_name_every_chaos_step_and_no_other() {
    let ts = repo_file("sdk-ts/testing/src/types.ts");
    let line = ts
        .lines()
        .find(|l| l.trim_start().starts_with("step: \"fail-removal\""))
        .expect("types.ts declares ChaosRecord's step as a union of the step kinds");
    let named: Vec<&str> = line.split('"').skip(1).step_by(2).collect();
    assert_eq!(named, ChaosStep::KINDS, "sdk-ts/testing/src/types.ts: {line}");
}

#[test]
fn the_python_docs_name_every_chaos_step() {
    let py = repo_file("sdk-python/wasmkeep_actor/chaos.py");
    let doc = py
        .split("class ChaosRecord:")
        .nth(1)
        .and_then(|rest| rest.split("\"\"\"").nth(1))
        .expect("chaos.py documents ChaosRecord");
    for kind in ChaosStep::KINDS {
        assert!(
            doc.contains(&format!("\"{kind}\"")),
            "ChaosRecord's docstring leaves out {kind:?}: {doc}"
        );
    }
}

#[test]
fn the_parity_table_describes_exactly_the_verbs_the_harnesses_bind_by_type() {
    let toml = repo_file("conformance/harness-parity/verbs.toml");
    // `name = "…"` lines of the [[verb]] entries, in order.
    let named: Vec<&str> = toml
        .lines()
        .filter_map(|l| l.strip_prefix("name = \""))
        .filter_map(|rest| rest.strip_suffix('"'))
        .collect();
    let typed: Vec<&str> = wasmkeep_host_testing::verbs::Verb::ALL
        .iter()
        .map(|v| v.name())
        .collect();
    assert_eq!(named, typed, "conformance/harness-parity/verbs.toml against Verb::ALL");
}

#[test]
fn every_sdk_reports_the_wit_package_of_wit_actor_wit() {
    let wit = repo_file("wit/actor.wit");
    let package = wit
        .lines()
        .find_map(|l| l.strip_prefix("package ").and_then(|p| p.strip_suffix(';')))
        .expect("wit/actor.wit has a package line");
    let quoted = format!("\"{package}\"");
    for (sdk, file) in [
        ("Rust", "sdk-rust/src/lib.rs"),
        ("TypeScript", "sdk-ts/src/index.ts"),
        ("Python", "sdk-python/wasmkeep_actor/__init__.py"),
        ("C", "sdk-c/include/wasmkeep.h"),
    ] {
        let text = repo_file(file);
        let line = text
            .lines()
            .find(|l| l.contains("WIT_PACKAGE") && l.contains("\"wasmkeep:actor@"))
            .unwrap_or_else(|| panic!("{file} declares no WIT_PACKAGE"));
        assert!(
            line.contains(&quoted),
            "the {sdk} SDK reports {line:?}, wit/ is {package}"
        );
    }
}
