//! `run_chaos` keeps quiet only the panics of its own body, on its own
//! thread: a test that `cargo test` runs on another thread meanwhile still
//! reaches the panic hook (and prints its failure). A binary of its own: it
//! sets the process's panic hook.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use wasmkeep_actor_testing::{ActorTest, Driver, run_chaos};

const COUNTER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/counter-rust");

/// Panics the hook saw: of the other threads, and of the chaos body's.
static OTHERS_SEEN: AtomicUsize = AtomicUsize::new(0);
static BODY_SEEN: AtomicUsize = AtomicUsize::new(0);

#[test]
fn run_chaos_leaves_the_panics_of_other_threads_to_their_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().name() == Some("another-test") {
            OTHERS_SEEN.fetch_add(1, Ordering::SeqCst);
        } else {
            // The body's panic (which must not come here) or this test's own failure.
            BODY_SEEN.fetch_add(1, Ordering::SeqCst);
            default(info);
        }
    }));
    // Another test, failing over and over while the seeds run.
    let stop = Arc::new(AtomicBool::new(false));
    let other = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut failed = 0usize;
            while !stop.load(Ordering::SeqCst) {
                let t = std::thread::Builder::new()
                    .name("another-test".into())
                    .spawn(|| panic!("a test on another thread fails"))
                    .expect("spawn");
                assert!(t.join().is_err(), "it panicked");
                failed += 1;
                std::thread::sleep(Duration::from_millis(1));
            }
            failed
        })
    };
    let builder = ActorTest::builder(COUNTER).class("counter").driver(Driver::InProcess);
    let outcome = run_chaos(&builder, 0..10, |t| {
        t.post("c", "/", "");
        std::thread::sleep(Duration::from_millis(20));
        assert_ne!(t.chaos_seed(), Some(9), "the last seed fails on purpose");
    })
    .expect("the host starts");
    stop.store(true, Ordering::SeqCst);
    let failed = other.join().expect("the other thread ends");
    let failure = outcome.expect_err("the last seed failed");
    assert_eq!(failure.seed, 9);
    assert!(failed > 0, "the other test failed while the seeds ran");
    assert_eq!(
        OTHERS_SEEN.load(Ordering::SeqCst),
        failed,
        "every panic of the other thread reached the hook"
    );
    assert_eq!(
        BODY_SEEN.load(Ordering::SeqCst),
        0,
        "the chaos body's own panic is kept for its report"
    );
}
