//! The driver contract: one script of every verb, run on the prebuilt
//! harness library and on the host compiled in, must see the same. The
//! prebuilt driver loads the library this workspace builds
//! (`target/<profile>/libwasmkeep_c_harness.so`, built by `cargo test
//! --workspace` or `cargo build -p wasmkeep-c-harness`), unless
//! `WASMKEEP_HARNESS_LIB` names another.
#![allow(unsafe_code, reason = "setting the library's variable before any other thread runs")]

use std::panic::AssertUnwindSafe;
use std::time::Duration;
use wasmkeep_actor_testing::{ActorTest, AdminDeleted, Builder, Driver, HarnessError, Outbound, RestoreTo, run_chaos};

const COUNTER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/counter-rust");
const BANK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/bank-rust");

fn counter(driver: Driver) -> Builder {
    ActorTest::builder(COUNTER).class("counter").driver(driver)
}

/// Every verb on one node, a line per observation.
fn one_node(driver: Driver) -> Vec<String> {
    let mut seen = Vec::new();
    let mut t = counter(driver).start().expect("the counter starts");
    let mut see = |what: &str, v: String| seen.push(format!("{what}: {v}"));
    see("get", t.get("c", "/").text());
    see("post", t.post("c", "/", "").text());
    let r = t.request("c", "PUT", "/", "");
    see("put", format!("{} {}", r.status, r.text()));
    see("tables", t.tables("c").to_string());
    see("exists", format!("{} {}", t.exists("c"), t.exists("never")));
    t.hibernate_all();
    see("after hibernation", t.get("c", "/").text());
    t.restart("c");
    see("after restart", t.get("c", "/").text());
    let start = t.now_ms();
    see("clock", format!("{}", t.advance_clock(60_000) - start));
    see("due alarms", t.run_due_alarms().to_string());
    see("alarm", t.run_alarm("c").to_string());
    see("call", format!("{:?}", t.call("c", "hi")));
    let socket = t.open_socket("c", "/");
    t.socket_send_text("c", socket, "hello");
    let taken: Vec<Outbound> = t.socket_take(socket);
    see("socket", format!("{taken:?}"));
    t.arm_fault("fail-removal", 1);
    let r = t.delete("c", "/");
    see("failed removal", format!("{} {:?}", r.status, r.failure_kind()));
    see("after the delete", t.get("c", "/").text());
    see("operator delete", format!("{:?}", t.operator_delete("c")));
    assert_eq!(t.operator_delete("c"), AdminDeleted::Absent);
    see("logs", t.logs_of("c").len().to_string());
    t.post("d", "/", "");
    t.restart_host();
    see("after a host restart", t.get("d", "/").text());
    t.reset();
    see("after reset", format!("{} {}", t.exists("d"), t.now_ms() == start));
    seen
}

/// The cluster verbs on two nodes.
fn two_nodes(driver: Driver) -> Vec<String> {
    let mut seen = Vec::new();
    let t = counter(driver).nodes(2).start().expect("a cluster of 2 starts");
    seen.push(t.request_on(1, "c", "POST", "/", "").text());
    seen.push(t.request_on(2, "c", "POST", "/", "").text());
    t.cut_off(1);
    seen.push(t.request_on(2, "c", "GET", "/", "").text());
    t.request_on(2, "e", "POST", "/", "");
    seen.push((!t.request_operator_delete("e").is_empty()).to_string());
    seen.push(
        format!("{:?}", t.deletion_status("e"))
            .starts_with("Deleted")
            .to_string(),
    );
    t.expire_after_idle(Some(Duration::from_secs(3600)));
    seen.push(t.run_expiry_passes().to_string());
    t.arm_fault_on(2, "fail-upload", 1);
    seen.push(t.request_on(2, "f", "POST", "/", "").status.to_string());
    seen.push(t.run_alarm_on(2, "c").to_string());
    t.delete_app();
    seen
}

/// Seeded chaos: a body that holds passes every seed; one that does not
/// fails with a seed whose schedule replays.
fn chaos(driver: Driver) -> Vec<String> {
    let builder = counter(driver);
    let ran = run_chaos(&builder, 0..20, |t| {
        assert!(t.chaos_seed().is_some());
        let r = t.post("c", "/", "");
        assert!(r.status == 200 || r.status >= 500, "{}", r.status);
    })
    .expect("chaos runs")
    .expect("every seed passes");
    let fails = |t: &ActorTest| {
        t.post("c", "/", "");
        t.post("c", "/", "");
        assert_eq!(t.get("c", "/").text(), "2", "two posts are two");
    };
    let failure = run_chaos(&builder, 0..200, fails)
        .expect("chaos runs")
        .expect_err("some schedule breaks a test that ignores failures");
    let again = run_chaos(&builder, [failure.seed], fails)
        .expect("chaos runs")
        .expect_err("the seed replays");
    assert_eq!(again.schedule, failure.schedule);
    assert!(failure.report.contains(&failure.seed.to_string()));
    // Seeds that are not a range run in their order; a message longer than
    // the library's buffer for it (1,024 bytes) comes back whole, in the
    // report too; a panic of another payload has a message of its own.
    let long = format!("{}é", "x".repeat(3000));
    let cut = run_chaos(&builder, [5, 3, 4, 9], |t| {
        assert_ne!(t.chaos_seed(), Some(4), "{long}");
    })
    .expect("chaos runs")
    .expect_err("seed 4 fails");
    assert_eq!((cut.seed, cut.passed), (4, 2));
    assert!(cut.message.contains(&long), "{}", cut.message);
    assert!(cut.report.contains(&cut.message), "{}", cut.report);
    let odd = run_chaos(&builder, [1], |_| std::panic::panic_any(7))
        .expect("chaos runs")
        .expect_err("the body panics");
    vec![
        ran.to_string(),
        failure.seed.to_string(),
        failure.passed.to_string(),
        failure.schedule.join("\n"),
        failure.message,
        cut.report,
        odd.report,
    ]
}

/// Alarms that run, and tables with text: the bank's daily interest.
fn alarms_and_tables(driver: Driver) -> Vec<String> {
    let t = ActorTest::builder(BANK)
        .class("bank")
        .driver(driver)
        .start()
        .expect("the bank starts");
    let mut seen = vec![t.post("acct", "/deposit?op=d1&amount=1000", "").text()];
    t.advance_clock(24 * 3600 * 1000);
    seen.push(t.run_due_alarms().to_string());
    t.advance_clock(24 * 3600 * 1000);
    seen.push(t.run_alarm("acct").to_string());
    seen.push(t.tables("acct").to_string());
    seen.push(format!(
        "{:?}",
        t.logs_of("acct").iter().map(|l| &l.level).collect::<Vec<_>>()
    ));
    seen
}

/// Going back in time on a single node started with history: the history,
/// a restore to a time and its undo; the refusals by kind.
fn history(driver: Driver) -> Vec<String> {
    let mut seen = Vec::new();
    let kind = |e: HarnessError| format!("{:?}", e.kind);
    let without = counter(driver).start().expect("the counter starts");
    without.post("c", "/", "");
    seen.push(kind(
        without.try_history("c").expect_err("no history without the option"),
    ));
    seen.push(kind(
        without
            .try_restore("c", RestoreTo::Time(without.now_ms()))
            .expect_err("no restore without history"),
    ));
    let t = counter(driver)
        .history(true)
        .start()
        .expect("the counter starts with history");
    seen.push(t.post("c", "/", "").text());
    t.advance_clock(1_000);
    let one = t.now_ms();
    t.advance_clock(1_000);
    seen.push(t.post("c", "/", "").text());
    let positions = t.history("c");
    assert!(positions.len() >= 2, "{positions:?}");
    assert!(
        positions.windows(2).all(|w| w[0].bookmark < w[1].bookmark),
        "{positions:?}"
    );
    assert!(positions.last().is_some_and(|p| p.head), "{positions:?}");
    assert!(positions.iter().any(|p| p.at <= one) && positions.iter().any(|p| p.at > one));
    seen.push(format!(
        "{:?}",
        positions.iter().map(|p| (p.kind.as_str(), p.head)).collect::<Vec<_>>()
    ));
    let restored = t.restore("c", RestoreTo::Time(one));
    seen.push(format!("restored to the time of 1: {}", t.get("c", "/").text()));
    assert!(restored.at > restored.undo, "{restored:?}");
    assert_eq!(
        t.history("c").last().map(|p| p.bookmark.clone()),
        Some(restored.at.clone())
    );
    t.restore("c", RestoreTo::Bookmark(restored.undo));
    seen.push(format!("undone: {}", t.get("c", "/").text()));
    seen.push(kind(
        t.try_restore("c", RestoreTo::Bookmark("yesterday".into()))
            .expect_err("a malformed bookmark"),
    ));
    seen.push(kind(
        t.try_restore("c", RestoreTo::Time(1))
            .expect_err("before the first state"),
    ));
    seen.push(format!("{:?}", t.history("never")));
    seen.push(kind(
        t.try_restore("never", RestoreTo::Time(one))
            .expect_err("an actor that never was"),
    ));
    seen
}

/// What each driver refuses, by kind or by the verb's panic.
fn refusals(driver: Driver) -> Vec<String> {
    let kind = |b: Builder| {
        b.start()
            .err()
            .and_then(|e| e.downcast_ref::<HarnessError>().and_then(|h| h.kind.clone()))
    };
    let mut seen = vec![format!("{:?}", kind(counter(driver).nodes(0)))];
    let t = counter(driver).start().expect("the counter starts");
    let panics = |f: &dyn Fn()| std::panic::catch_unwind(AssertUnwindSafe(f)).is_err();
    seen.push(
        panics(&|| {
            let _ = t.run_alarm_on(0, "c");
        })
        .to_string(),
    );
    seen.push(panics(&|| t.arm_fault("no-such-fault", 1)).to_string());
    seen.push(panics(&|| t.cut_off(1)).to_string());
    // A refused request is worded the same by both: it names the request once.
    let message = std::panic::catch_unwind(AssertUnwindSafe(|| t.request_on(9, "c", "GET", "/", "")))
        .err()
        .and_then(|p| p.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    seen.push(message);
    seen.push(
        panics(&|| {
            let _ = t.socket_take(12_345);
        })
        .to_string(),
    );
    seen
}

#[test]
fn both_drivers_see_the_same() {
    if std::env::var_os("WASMKEEP_HARNESS_LIB").is_none() {
        // tests/<this>-<hash> is in target/<profile>/deps; the library in target/<profile>.
        let exe = std::env::current_exe().expect("the test's own path");
        let lib = exe
            .parent()
            .and_then(std::path::Path::parent)
            .expect("target/<profile>")
            .join(libloading_name());
        assert!(
            lib.is_file(),
            "{} is missing: build it with `cargo build -p wasmkeep-c-harness`",
            lib.display()
        );
        // SAFETY: the only test of this binary, before it starts any thread.
        unsafe { std::env::set_var("WASMKEEP_HARNESS_LIB", &lib) };
    }
    // The refusals' panics are expected: their messages would fill the output.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let refused = (refusals(Driver::Prebuilt), refusals(Driver::InProcess));
    std::panic::set_hook(hook);
    assert_eq!(refused.0, refused.1);
    assert_eq!(refused.0[..4], ["Some(\"bad-nodes\")", "true", "true", "true"]);
    assert_eq!(refused.0[4].matches("GET / to ").count(), 1, "{}", refused.0[4]);
    for script in [one_node, two_nodes, chaos, alarms_and_tables] {
        assert_eq!(script(Driver::Prebuilt), script(Driver::InProcess));
    }
    let back = (history(Driver::Prebuilt), history(Driver::InProcess));
    assert_eq!(back.0, back.1);
    let bad = "Some(\"bad-argument\")";
    assert_eq!(back.0[..2], [bad, bad], "a host without history says so by kind");
    assert_eq!(back.0[5..7], ["restored to the time of 1: 1", "undone: 2"]);
    assert_eq!(
        back.0[7..9],
        [bad, bad],
        "a malformed bookmark, a time before the first state"
    );
    assert_eq!(back.0[9..], ["[]", "Some(\"no-such-actor\")"], "an actor never written");
}

/// `libwasmkeep_c_harness.so` on this platform.
fn libloading_name() -> String {
    format!(
        "{}wasmkeep_c_harness{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}
