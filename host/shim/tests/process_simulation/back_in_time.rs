//! The client going back in time (ADR 064): a restore through the admin API
//! or a fork with `actor fork` to a time inside the retention window, each
//! checked against the book's bounds; a restore to before an acknowledged
//! delete must be refused.

use crate::book::{Book, Counter, Draws, now_ms};
use crate::{RESTORE_WITHIN_MS, Run, common, post};
use serde_json::{Value, json};
use std::sync::Mutex;

/// The count an actor reads through `base` now (a read: it writes nothing).
pub fn read_count(base: &str, name: &str) -> Option<u64> {
    let read = json!({"ops": [{"op": "query", "sql": "SELECT n FROM c"}]});
    let Ok((200, body)) = post(base, name, &read) else {
        return None;
    };
    serde_json::from_str::<Value>(&body)
        .ok()?
        .pointer("/outcomes/0/ok/rows/0/0/integer")?
        .as_str()?
        .parse()
        .ok()
}

/// A time to go back to: inside the window and this incarnation, after its
/// first acknowledged write; with the bounds a state then must keep.
fn time_to_go_back_to(c: &Counter, draws: &mut Draws) -> Option<(u64, (u64, u64))> {
    let first = c.acks.first()?.0;
    let now = now_ms();
    let from = first.max(now.saturating_sub(RESTORE_WITHIN_MS));
    let t = from + draws.next(now.saturating_sub(from) + 1);
    Some((t, c.bounds_at(t)?))
}

/// Restores `name` through the admin API of the node at `base`: to a time
/// inside the window, checked against what was acknowledged and sent by
/// then; or, now and then, to a time before its last acknowledged delete,
/// which must be refused. Only while none of its writes is in flight.
pub fn restore(base: &str, name: &'static str, book: &Mutex<Book>, draws: &mut Draws) {
    enum Plan {
        Inside(u64, (u64, u64)),
        BeforeDelete(u64),
    }
    fn plan_of(c: &Counter, draws: &mut Draws) -> Option<Plan> {
        Some(match c.deleted_before {
            Some(d) if draws.next(4) == 0 => Plan::BeforeDelete(d.saturating_sub(1 + draws.next(2_000))),
            _ => {
                let (t, bounds) = time_to_go_back_to(c, draws)?;
                Plan::Inside(t, bounds)
            }
        })
    }
    let (plan, sent_before) = {
        let b = book.lock().expect("book");
        let Some(c) = b.counters.get(name).filter(|c| c.pending == 0) else {
            return;
        };
        (plan_of(c, draws), c.sends.len())
    };
    let Some(plan) = plan else { return };
    let to = match plan {
        Plan::Inside(t, _) | Plan::BeforeDelete(t) => t,
    };
    let answer = common::try_http_body(
        "POST",
        &format!("{base}/_shim/actors/testee/{name}/restore"),
        &json!({ "to": to }).to_string(),
    );
    let kind = |body: &str| {
        serde_json::from_str::<Value>(body)
            .ok()
            .and_then(|v| v.get("kind")?.as_str().map(str::to_owned))
    };
    match (plan, answer) {
        (Plan::BeforeDelete(_), Ok((200, body))) => {
            let msg = format!("a restore of {name} to {to}, before its acknowledged delete, was carried out: {body}");
            book.lock().expect("book").violations.push(msg);
        }
        (Plan::BeforeDelete(_), Ok((_, body))) if kind(&body).as_deref() == Some("bad-argument") => {
            book.lock().expect("book").refused_restores += 1;
        }
        // Refused otherwise (a node killed, no holder yet): nothing happened.
        (Plan::BeforeDelete(_), _) => {}
        (Plan::Inside(_, (lo, hi)), Ok((200, _))) => {
            let count = read_count(base, name);
            let mut b = book.lock().expect("book");
            // A write the chaos thread sent to the counter after the plan
            // (its paused holder's) may land after the restore and before
            // the read: each counts once more (the final run of 2026-12-07
            // read 2 for a bound of 1 so, over Azurite).
            let late = b
                .counters
                .get(name)
                .map_or(0, |c| c.sends.len().saturating_sub(sent_before)) as u64;
            let hi = hi + late;
            if let Some(n) = count {
                b.restores += 1;
                if n < lo || n > hi {
                    b.violations.push(format!(
                        "a restore of {name} to {to} gave {n}: the state then held at least {lo} (acknowledged by then) \
                         and at most {hi} (sent by then)"
                    ));
                }
            }
            b.restore_answered(name, count);
        }
        // Not carried out, or not known to be: a restore's outcome is
        // unknown unless it was answered.
        (Plan::Inside(..), _) => book.lock().expect("book").restore_answered(name, None),
    }
}

/// Forks `name` with `actor fork` over the bucket to a time inside the
/// window, into a new actor, and reads the fork through the node at `base`:
/// the same bounds as a restore. The counter itself is left as it is.
pub fn fork(run: &Run, base: &str, name: &'static str, book: &Mutex<Book>, draws: &mut Draws) {
    let (to, (lo, hi), into) = {
        let mut b = book.lock().expect("book");
        let Some(c) = b.counters.get(name) else { return };
        let Some(plan) = time_to_go_back_to(c, draws) else {
            return;
        };
        b.forks += 1;
        (plan.0, plan.1, format!("fork-{}-{name}", b.forks))
    };
    let forked = std::process::Command::new(env!("CARGO_BIN_EXE_wasmkeep-shim"))
        .args(["actor", "fork", "--app", "t/app", &format!("testee/{name}")])
        .args([
            "--bucket",
            &run.url,
            "--to",
            &to.to_string(),
            "--into",
            &format!("testee/{into}"),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let count = if forked { read_count(base, &into) } else { None };
    let mut b = book.lock().expect("book");
    match count {
        Some(n) if n < lo || n > hi => b.violations.push(format!(
            "a fork of {name} at {to} into {into} reads {n}: the state then held at least {lo} and at most {hi}"
        )),
        Some(_) => {}
        // The fork or its first read did not happen (a node killed): not counted.
        None => b.forks -= 1,
    }
}
