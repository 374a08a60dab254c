//! The TypeScript SDK's per-call costs inside each engine. The hot-path
//! guest (`sdk-ts/bench/hot-path.ts`) times each piece of an event's path,
//! and a storage call beside the bindings' own call, in a loop inside one
//! event, and answers a line per piece (ADR 057). Reported, with no target:
//! the figures say where an event's time goes, for a change of the SDK to
//! be measured before and after.

use std::path::PathBuf;

use anyhow::{Context, Result};
use wasmkeep_shim::HttpRequest;

use crate::report::{Met, Report, Row};
use crate::setup;

/// GETs to the guest; each piece's figure is the median over them.
const ROUNDS: usize = 3;

/// A build of the hot-path guest.
pub struct HotPathGuest {
    pub label: String,
    pub wasm: PathBuf,
}

/// The guest's answer: `µs<TAB>name` per line, in order.
fn parse(body: &str) -> Result<Vec<(String, f64)>> {
    body.lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (us, name) = l
                .split_once('\t')
                .with_context(|| format!("a line without a tab: {l:?}"))?;
            let us: f64 = us.parse().with_context(|| format!("not a number of µs: {l:?}"))?;
            Ok((name.to_owned(), us))
        })
        .collect()
}

pub fn run(guests: &[HotPathGuest], report: &mut Report) -> Result<()> {
    for g in guests {
        eprintln!("== the TypeScript SDK's per-call costs: {}", g.label);
        let (rt, _dir) = setup::runtime("hot", &g.wasm)?;
        let key = setup::key("hot", "path");
        let mut rounds: Vec<Vec<(String, f64)>> = Vec::new();
        for _ in 0..ROUNDS {
            let answer = rt.request(&key, HttpRequest::new("GET", "/", ""))?.wait();
            let body = String::from_utf8_lossy(&answer.body).into_owned();
            anyhow::ensure!(
                answer.status == 200,
                "{} answered {}: {body}",
                g.wasm.display(),
                answer.status
            );
            rounds.push(parse(&body).with_context(|| format!("{}'s answer", g.wasm.display()))?);
        }
        let Some(first) = rounds.first() else { continue };
        for (i, (name, _)) in first.iter().enumerate() {
            let mut v: Vec<f64> = rounds.iter().filter_map(|r| r.get(i).map(|(_, us)| *us)).collect();
            let us = setup::median(&mut v);
            report.row(Row {
                figure: format!("TS SDK ({}): {name}", g.label),
                shim: format!("{us:.2} µs per call"),
                baseline: "-".into(),
                ratio: "-".into(),
                target: "- (reported)".into(),
                met: Met::Unknown,
            });
        }
    }
    report.note(format!(
        "TS SDK: sdk-ts/bench/hot-path.ts times each piece in a loop inside one event, with the \
         engine's clock; each row is the median of {ROUNDS} events. A `storage.` row beside \"the \
         bindings'\" row of the same call: the difference is what the SDK adds (ADR 057)"
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn the_guest_s_lines_are_read_in_order() -> anyhow::Result<()> {
        let lines = parse("0.125\ttext(String(i))\n7.5\tstorage.flush()\n")?;
        assert_eq!(
            lines,
            vec![
                ("text(String(i))".to_owned(), 0.125),
                ("storage.flush()".to_owned(), 7.5)
            ]
        );
        assert!(parse("no tab here").is_err());
        Ok(())
    }
}
