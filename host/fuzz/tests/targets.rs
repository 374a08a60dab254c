//! The targets' own checks: inputs survive their corpus form, and the
//! oracles see a violation when there is one (a fuzz target whose oracle
//! cannot fail finds nothing).

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use wasmkeep_fuzz::engine::{Target, Verdict};
use wasmkeep_fuzz::targets::{admin_json, manifest, routing, sql_guard, wit_values};

/// Generated inputs decode from what they encode to, to the same input.
fn round_trips<T: Target>(t: &T)
where
    T::Input: PartialEq,
{
    let mut runner = TestRunner::deterministic();
    let s = t.strategy();
    for _ in 0..300 {
        let input = s.new_tree(&mut runner).expect("an input").current();
        let decoded = t.decode(&t.encode(&input));
        assert_eq!(decoded.as_ref(), Some(&input), "{} input {input:?}", t.name());
    }
}

#[test]
fn inputs_survive_their_corpus_form() {
    round_trips(&manifest::ManifestTarget::new().expect("target"));
    round_trips(&wit_values::WitValuesTarget::new().expect("target"));
    round_trips(&admin_json::AdminJsonTarget::new().expect("target"));
}

#[test]
fn reals_are_judged_exact_only_where_every_parser_is() {
    use wit_values::parsed_exactly_anywhere as exact;
    for t in [
        "0.0",
        "-0.0",
        "1.5",
        "3.0",
        "1e22",
        "123456789.0",
        "9007199254740991e-7",
        "1e-22",
    ] {
        assert!(exact(t), "{t}");
    }
    for t in [
        "7342997889553193.0",
        "9007199254740991.0e-7",
        "1e23",
        "5e-324",
        "1.7976931348623157e308",
        "2.2155041394724744e144",
    ] {
        assert!(!exact(t), "{t}");
    }
}

#[test]
fn the_route_oracle_holds_for_the_seeds_and_the_encoders_round_trip() {
    let mut t = routing::RoutingTarget::new().expect("target");
    for s in t.seeds() {
        assert!(matches!(t.run(&s), Verdict::Pass(_)), "{s}");
    }
    for name in ["a", "é/😀", "..", "%", "a b?c#d", "\0", ""] {
        for enc in [routing::encode_all(name), routing::encode_minimal(name)] {
            assert_eq!(
                wasmkeep_shim::route::percent_decode(&enc).as_deref(),
                Some(name),
                "{enc}"
            );
        }
    }
}

#[test]
fn the_sql_oracle_sees_a_file_outside_and_a_changed_host_table() {
    let mut t = sql_guard::SqlGuardTarget::new().expect("target");
    let benign = t
        .decode(br#"[{"op": "exec", "sql": "CREATE TABLE IF NOT EXISTS t(a)"}]"#)
        .expect("an input");
    assert!(matches!(t.run(&benign), Verdict::Pass(_)), "a benign statement passes");
    // A file in the working directory, as a relative ATTACH would leave.
    std::fs::write("x0.db", b"").expect("write");
    let v = t.run(&benign);
    let _ = std::fs::remove_file("x0.db");
    assert!(
        matches!(&v, Verdict::Fail(why) if why.contains("working directory")),
        "{v:?}"
    );
    assert!(
        matches!(t.run(&benign), Verdict::Pass(_)),
        "and passes again once it is gone"
    );
    // A row of the host table changed behind the guard (the actor
    // hibernated first: while resident it holds its file, ADR 040).
    t.hibernate();
    let db = t.db_path();
    let conn = rusqlite::Connection::open(&db).expect("open");
    conn.execute("INSERT INTO _wasmkeep_meta VALUES('alarm', '1')", [])
        .expect("insert");
    drop(conn);
    let v = t.run(&benign);
    assert!(
        matches!(&v, Verdict::Fail(why) if why.contains("host table changed")),
        "{v:?}"
    );
}

#[test]
fn the_value_seeds_come_back_equal() {
    let mut t = wit_values::WitValuesTarget::new().expect("target");
    for s in t.seeds() {
        assert!(matches!(t.run(&s), Verdict::Pass(_)), "{s:?}");
    }
}

#[test]
fn the_admin_oracle_holds_for_the_seeds() {
    let mut t = admin_json::AdminJsonTarget::new().expect("target");
    for s in t.seeds() {
        assert!(matches!(t.run(&s), Verdict::Pass(_)), "{s:?}");
    }
}

/// Panics on another thread (as a host worker would) for inputs of 1000 or more.
struct Panicky;

impl Target for Panicky {
    type Input = u32;
    fn name(&self) -> &'static str {
        "panicky"
    }
    fn strategy(&self) -> proptest::strategy::BoxedStrategy<u32> {
        proptest::prelude::any::<u32>().boxed()
    }
    fn encode(&self, input: &u32) -> Vec<u8> {
        input.to_string().into_bytes()
    }
    fn decode(&self, bytes: &[u8]) -> Option<u32> {
        std::str::from_utf8(bytes).ok()?.parse().ok()
    }
    fn run(&mut self, input: &u32) -> Verdict {
        let x = *input;
        let _ = std::thread::spawn(move || assert!(x < 1000, "boom")).join();
        Verdict::Pass(format!("{}", x % 5))
    }
}

#[test]
fn a_panic_on_another_thread_is_a_crash_saved_shrunk() {
    wasmkeep_fuzz::engine::install_panic_hook();
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = wasmkeep_fuzz::engine::Options {
        budget: std::time::Duration::from_secs(5),
        seed: 7,
        corpus_root: dir.path().to_path_buf(),
        extend: true,
        max_new: 8,
        max_dir_bytes: 1 << 20,
        hang_after: std::time::Duration::from_secs(60),
        only_input: None,
    };
    let report = wasmkeep_fuzz::engine::fuzz(&mut Panicky, &opts);
    let crash = report.crash.expect("the panic is found");
    assert!(crash.why.contains("boom"), "{}", crash.why);
    assert_eq!(crash.input, b"1000", "shrunk to the smallest failing input");
    let saved = crash.saved.expect("saved");
    assert!(saved.starts_with(dir.path().join("panicky")) && saved.is_file());
    // Replayed, the saved crash fails again before anything is generated.
    let again = wasmkeep_fuzz::engine::fuzz(&mut Panicky, &opts);
    assert_eq!(again.execs, 1, "the crash file goes first: {again:?}");
    assert!(again.crash.is_some());
}
