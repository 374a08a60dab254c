//! The engine's side: generating, saving and running inputs, and judging the
//! testee's answers.

use super::grammar::op;
use super::{Op, SqlGuardTarget, lit};
use crate::engine::{Target, Verdict};
use crate::targets::manifest::error_class;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::BTreeSet;

const RESET_EVERY: u64 = 250;

/// The guest's view of objects named like the host's, in `main` and `temp`.
const PROBE: &str = "SELECT 'main', type, name, tbl_name FROM main.sqlite_schema \
     WHERE lower(name) LIKE '\\_wasmkeep%' ESCAPE '\\' OR lower(tbl_name) LIKE '\\_wasmkeep%' ESCAPE '\\' \
     UNION ALL SELECT 'temp', type, name, tbl_name FROM temp.sqlite_schema \
     WHERE lower(name) LIKE '\\_wasmkeep%' ESCAPE '\\' OR lower(tbl_name) LIKE '\\_wasmkeep%' ESCAPE '\\'";

fn outcome_class(op: &str, outcome: &Value) -> String {
    if outcome.get("ok").is_some() {
        return format!("{op}: ok");
    }
    let err = &outcome["err"];
    let kind = err["kind"].as_str().unwrap_or("?");
    let message = err["message"].as_str().unwrap_or("");
    // What kind of refusal, not which name: the text before a colon, a few words.
    let head = message.split(':').next().unwrap_or("");
    let head = if head.starts_with("near ") {
        "syntax error"
    } else {
        head
    };
    let words: Vec<String> = error_class(head)
        .split_whitespace()
        .filter(|w| w.len() > 1 && w.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
        .take(6)
        .map(str::to_owned)
        .collect();
    match err.get("code") {
        Some(code) => format!("{op}: {kind} {code} {}", words.join(" ")),
        None => format!("{op}: {kind} {}", words.join(" ")),
    }
}

impl Target for SqlGuardTarget {
    type Input = Vec<Op>;

    fn name(&self) -> &'static str {
        "sql_guard"
    }

    fn strategy(&self) -> BoxedStrategy<Vec<Op>> {
        proptest::collection::vec(op(self.path_literals.clone()), 1..6).boxed()
    }

    fn encode(&self, input: &Vec<Op>) -> Vec<u8> {
        // Paths of this run are written with placeholders, so that a saved
        // input replays against the next run's directories.
        let text =
            serde_json::to_string_pretty(&Value::Array(input.iter().map(Op::json).collect())).unwrap_or_default();
        self.placeholders(&text).into_bytes()
    }

    fn decode(&self, bytes: &[u8]) -> Option<Vec<Op>> {
        let text = self.expand(std::str::from_utf8(bytes).ok()?);
        let v: Value = serde_json::from_str(&text).ok()?;
        v.as_array()?.iter().map(Op::from_json).collect()
    }

    fn seeds(&self) -> Vec<Vec<Op>> {
        let e = |sql: &str| Op {
            op: "exec".into(),
            sql: Some(sql.to_owned()),
            params: None,
        };
        let tmp0 = lit(&self.tmp_paths[0].display().to_string());
        vec![
            vec![e(&format!("ATTACH {tmp0} AS x"))],
            vec![e(&format!("VACUUM INTO {tmp0}"))],
            vec![e("VACUUM INTO 'x0.db'")],
            vec![e("PRAGMA journal_mode = DELETE")],
            vec![e("CREATE TABLE q(a); ALTER TABLE q RENAME TO _wasmkeep_q")],
            vec![e("CREATE TEMP TABLE q(a); ALTER TABLE temp.q RENAME TO _wasmkeep_meta")],
            vec![e("DELETE FROM _wasmkeep_meta")],
            vec![e("SELECT load_extension('/nonexistent')")],
            vec![
                e("CREATE VIRTUAL TABLE f USING fts5(key, value, content='_wasmkeep_meta')"),
                e("INSERT INTO f(f) VALUES('rebuild')"),
            ],
            vec![e("UPDATE sqlite_dbpage SET data = zeroblob(4096) WHERE pgno = 2")],
        ]
    }

    fn run(&mut self, input: &Vec<Op>) -> Verdict {
        self.execs += 1;
        if self.execs % RESET_EVERY == 0
            && let Err(why) = self.reset()
        {
            return Verdict::Fail(why);
        }
        let mut ops: Vec<Value> = input.iter().map(Op::json).collect();
        ops.push(json!({"op": "query", "sql": PROBE}));
        let answer = match crate::send_ops_answer(&self.rt, &self.key, &Value::Array(ops)) {
            Ok(r) => r,
            Err(e) => return Verdict::Fail(format!("the runtime refused the request: {e:#}")),
        };
        let (status, body) = (answer.status, answer.text());
        let mut classes = BTreeSet::new();
        if status == 200 {
            let Ok(v) = serde_json::from_str::<Value>(&body) else {
                return Verdict::Fail(format!("the testee's answer is not JSON: {body}"));
            };
            let outcomes = v["outcomes"].as_array().cloned().unwrap_or_default();
            for (op, outcome) in input.iter().zip(&outcomes) {
                classes.insert(outcome_class(&op.op, outcome));
            }
            if let Some(probe) = outcomes.get(input.len()) {
                let rows = probe["ok"]["rows"].as_array().cloned().unwrap_or_default();
                let cell = |row: &Value, i: usize| row[i]["text"].as_str().unwrap_or("").to_owned();
                // A temp table of the host table's name (made by a rename) is
                // not the host's: what is on it is harmless (the host writes main.).
                let temp_namesake = rows.iter().any(|r| {
                    cell(r, 0) == "temp" && cell(r, 1) == "table" && cell(r, 2).eq_ignore_ascii_case("_wasmkeep_meta")
                });
                for row in &rows {
                    let (schema, kind, name, on) = (cell(row, 0), cell(row, 1), cell(row, 2), cell(row, 3));
                    let hosts_own =
                        schema == "main" && (name == "_wasmkeep_meta" || name == "sqlite_autoindex__wasmkeep_meta_1");
                    if hosts_own {
                        continue;
                    }
                    let on_host_table = on.eq_ignore_ascii_case("_wasmkeep_meta")
                        && !(kind == "table" && name.eq_ignore_ascii_case("_wasmkeep_meta"))
                        && (schema == "main" || !temp_namesake);
                    if on_host_table {
                        return Verdict::Fail(format!(
                            "the guest made {schema} {kind} {name} on the host's table (it would run when the host writes)"
                        ));
                    }
                    let sqls: Vec<&str> = input.iter().filter_map(|o| o.sql.as_deref()).collect();
                    let example: String = format!("{schema} {kind} {name} after {sqls:?}")
                        .chars()
                        .take(400)
                        .collect();
                    self.note(
                        "the guest made an object named like the host's (_wasmkeep…), which the guard refuses to \
                         create by that name; the admin API's tables listing hides such tables",
                        example,
                    );
                }
            }
        } else if crate::ordinary_guest_failure(&answer) {
            classes.insert(format!(
                "event: {}",
                error_class(&body).chars().take(40).collect::<String>()
            ));
        } else {
            return Verdict::Fail(format!("the host answered {status}: {body}"));
        }
        if let Err(why) = self.check_files() {
            return Verdict::Fail(why);
        }
        match self.read_meta() {
            Ok(meta) if Some(&meta) == self.meta.as_ref() => {}
            Ok(meta) => {
                return Verdict::Fail(format!(
                    "the host table changed: before\n{}after\n{meta}",
                    self.meta.clone().unwrap_or_default()
                ));
            }
            Err(e) => return Verdict::Fail(format!("the host table cannot be read: {e:#}")),
        }
        Verdict::Pass(classes.into_iter().collect::<Vec<_>>().join("\n"))
    }

    fn notes(&self) -> Vec<String> {
        self.notes
            .iter()
            .map(|(kind, example)| format!("{kind} (e.g. {example})"))
            .collect()
    }
}

impl SqlGuardTarget {
    fn note(&mut self, kind: &'static str, example: String) {
        self.notes.entry(kind).or_insert(example);
    }
}
