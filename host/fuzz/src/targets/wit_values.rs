//! WIT value conversion both ways (guest → host as parameters, host → guest
//! as rows): random SQL values bound by the testee as `params` of
//! `SELECT ?1, typeof(?1)`, of one `SELECT ?1, ?2, …` with all of them, and
//! stored and read back through a column without affinity; and values only
//! SQL can make (infinities, NaN, invalid UTF-8 text) read back.
//!
//! Equality: null, integer, text and blob exactly; a real bit for bit, the
//! sign of zero included, read from the testee's JSON as written (serde_json
//! writes the shortest text that reads back to the same bits), whenever the
//! real's text is one every decimal parser reads exactly (digits under 2^53,
//! a power of ten within ±22). Other reals only within 4 ulps, because the
//! testee's JSON parser (serde_json without `float_roundtrip`) may read them
//! an ulp off before the host sees them; everywhere, the same value must come
//! back the same from every place (a bound parameter, a column, one of many
//! parameters) and of the same type. The testee's JSON cannot carry a NaN or
//! an infinity as a parameter; the host side of those is checked through SQL
//! that makes them: an infinity is a real (the testee writes it as
//! `{"real": null}`), a NaN is NULL (SQLite turns a NaN result into NULL).
//! Invalid UTF-8 that SQL makes comes to the guest with U+FFFD in its place.

use crate::engine::{Target, Verdict, pick};
use proptest::prelude::*;
use serde_json::{Value, json};
use wasmkeep_host::{ActorKey, Runtime};

/// One value.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    /// NULL.
    Null,
    /// An integer, sent as a decimal string or (true) as a JSON number.
    Int(i64, bool),
    /// A finite real.
    Real(f64),
    /// Text.
    Text(String),
    /// A blob.
    Blob(Vec<u8>),
    /// A value only SQL makes: the index of an expression in [`SPECIALS`].
    Sql(usize),
}

/// Expressions, the value the testee must show, and the type.
pub const SPECIALS: &[(&str, &str, &str)] = &[
    ("9e999", r#"{"real":null}"#, "real"),
    ("-9e999", r#"{"real":null}"#, "real"),
    ("1e308 * 10", r#"{"real":null}"#, "real"),
    ("9e999 - 9e999", r#"{"null":true}"#, "null"),
    ("9e999 * 0", r#"{"null":true}"#, "null"),
    ("-0.0", r#"{"real":-0.0}"#, "real"),
    ("0.0 * -1", r#"{"real":-0.0}"#, "real"),
    ("CAST('nan' AS REAL)", r#"{"real":0.0}"#, "real"),
    ("CAST(x'ff' AS TEXT)", r#"{"text":"\ufffd"}"#, "text"),
    ("CAST(x'c3' AS TEXT)", r#"{"text":"\ufffd"}"#, "text"),
    ("CAST(x'616200' AS TEXT)", r#"{"text":"ab\u0000"}"#, "text"),
    ("CAST(x'eda080' AS TEXT)", r#"{"text":"\ufffd\ufffd\ufffd"}"#, "text"),
    ("char(0, 65)", r#"{"text":"\u0000A"}"#, "text"),
    ("zeroblob(0)", r#"{"blob":""}"#, "blob"),
    ("x''", r#"{"blob":""}"#, "blob"),
    (
        "-9223372036854775808",
        r#"{"integer":"-9223372036854775808"}"#,
        "integer",
    ),
    ("9223372036854775807", r#"{"integer":"9223372036854775807"}"#, "integer"),
    ("9223372036854775808", r#"{"real":9.223372036854776e18}"#, "real"),
    ("5e-324", r#"{"real":5e-324}"#, "real"),
];

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl Val {
    fn json(&self) -> Value {
        match self {
            Val::Null => json!({"null": true}),
            Val::Int(i, false) => json!({"integer": i.to_string()}),
            Val::Int(i, true) => json!({"integer": i}),
            Val::Real(r) => json!({"real": r}),
            Val::Text(s) => json!({"text": s}),
            Val::Blob(b) => json!({"blob": hex(b)}),
            Val::Sql(i) => json!({"sql": SPECIALS.get(*i).map_or("NULL", |s| s.0)}),
        }
    }

    fn from_json(v: &Value) -> Option<Self> {
        let (k, inner) = v.as_object()?.iter().next()?;
        Some(match k.as_str() {
            "null" => Val::Null,
            "integer" => match inner {
                Value::String(s) => Val::Int(s.parse().ok()?, false),
                n => Val::Int(n.as_i64()?, true),
            },
            // The exact text (see `decode`): serde_json may read a number an ulp off.
            "real_text" => Val::Real(inner.as_str()?.parse::<f64>().ok().filter(|r| r.is_finite())?),
            "real" => Val::Real(inner.as_f64().filter(|r| r.is_finite())?),
            "text" => Val::Text(inner.as_str()?.to_owned()),
            "blob" => {
                let s = inner.as_str()?;
                if s.len() % 2 != 0 || !s.is_ascii() {
                    return None;
                }
                let bytes = (0..s.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
                    .collect::<Option<Vec<u8>>>()?;
                Val::Blob(bytes)
            }
            "sql" => Val::Sql(SPECIALS.iter().position(|s| s.0 == inner.as_str().unwrap_or(""))?),
            _ => return None,
        })
    }

    /// What the testee must show for the value bound as a parameter, and its type.
    fn expected(&self) -> (Value, &'static str) {
        match self {
            Val::Null => (json!({"null": true}), "null"),
            Val::Int(i, _) => (json!({"integer": i.to_string()}), "integer"),
            Val::Real(r) => (json!({"real": r}), "real"),
            Val::Text(s) => (json!({"text": s}), "text"),
            Val::Blob(b) => (json!({"blob": hex(b)}), "blob"),
            Val::Sql(i) => {
                let (_, v, t) = SPECIALS[*i % SPECIALS.len()];
                (serde_json::from_str(v).unwrap_or(Value::Null), t)
            }
        }
    }

    fn feature(&self) -> String {
        match self {
            Val::Null => "null".into(),
            Val::Int(i, n) => format!(
                "integer{}{}",
                if *n { " as number" } else { "" },
                if *i == i64::MIN || *i == i64::MAX { " bound" } else { "" }
            ),
            Val::Real(r) => format!(
                "real{}{}{}",
                if *r == 0.0 && r.is_sign_negative() { " -0" } else { "" },
                if r.is_subnormal() { " subnormal" } else { "" },
                if r.fract() == 0.0 { " integral" } else { "" }
            ),
            Val::Text(s) => format!(
                "text{}{}{}",
                if s.contains('\0') { " nul" } else { "" },
                if s.is_ascii() { "" } else { " unicode" },
                if s.len() > 4096 { " long" } else { "" }
            ),
            Val::Blob(b) => format!("blob{}", if b.is_empty() { " empty" } else { "" }),
            Val::Sql(i) => format!("sql {}", SPECIALS[*i % SPECIALS.len()].0),
        }
    }
}

/// Whether every decimal parser reads `text` (a JSON number) exactly: its
/// digits fit 53 bits and its power of ten is at most 22 either way, so one
/// multiplication or division of exact operands makes it (Clinger's fast
/// path, which serde_json without `float_roundtrip` takes too). Other numbers
/// such a parser may read an ulp or so off.
pub fn parsed_exactly_anywhere(text: &str) -> bool {
    let t = text.trim_start_matches('-');
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i32>().unwrap_or(i32::MAX)),
        None => (t, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    // Every digit written counts, a fraction's trailing zeros too: a parser
    // that reads "7342997889553193.0" as 73429978895531930 / 10 rounds twice.
    let digits = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    let exp10 = i64::from(exp) - frac.len() as i64;
    digits.is_empty() || (digits.parse::<u64>().is_ok_and(|d| d < 1 << 53) && exp10.abs() <= 22)
}

/// How many representable doubles lie between `a` and `b`.
fn ulps(a: f64, b: f64) -> u128 {
    let ordered = |x: f64| {
        let bits = i128::from(x.to_bits() as i64);
        if bits < 0 { i128::from(i64::MIN) - bits } else { bits }
    };
    (ordered(a) - ordered(b)).unsigned_abs()
}

/// The number tokens of the reals in an answer, in order, as the testee wrote them.
fn real_tokens(body: &str) -> Vec<String> {
    // Inside a JSON string a quote is always escaped, so `{"real":` is structural.
    body.match_indices("{\"real\":")
        .map(|(at, m)| {
            let rest = &body[at + m.len()..];
            let end = rest.find(['}', ',']).unwrap_or(rest.len());
            rest[..end].trim().to_owned()
        })
        .collect()
}

/// Replaces every `{"real": n}` in `v` (depth first, the order the testee
/// wrote them in) by `{"real_text": token}`, so that reals compare as
/// written, bit for bit, not after a lossy parse.
fn exact_reals(v: &mut Value, tokens: &mut std::vec::IntoIter<String>) {
    match v {
        Value::Object(o) if o.len() == 1 && o.contains_key("real") => {
            let t = tokens.next().unwrap_or_default();
            *v = json!({ "real_text": t });
        }
        Value::Object(o) => o.values_mut().for_each(|x| exact_reals(x, tokens)),
        Value::Array(a) => a.iter_mut().for_each(|x| exact_reals(x, tokens)),
        _ => {}
    }
}

/// An expected value in the same form: reals as serde_json writes them.
fn exact_expected(v: &Value) -> Value {
    match v.get("real") {
        Some(Value::Null) => json!({"real_text": "null"}),
        Some(n) => json!({"real_text": serde_json::to_string(n).unwrap_or_default()}),
        None => v.clone(),
    }
}

fn real() -> BoxedStrategy<f64> {
    prop_oneof![
        3 => pick(vec![
            -0.0, 0.0, 1.0, -1.0, 0.1, 0.2, 1.0 / 3.0, f64::MIN_POSITIVE, 5e-324, -5e-324, f64::MAX, f64::MIN,
            f64::EPSILON, 1e308, 9_007_199_254_740_992.0, 9_007_199_254_740_993.0, 9.223_372_036_854_776e18, 3.0,
            -3.0, 1e-7, 123_456_789.123_456_79, 2.225_073_858_507_201e-308,
        ]),
        3 => any::<u64>().prop_map(f64::from_bits).prop_filter("finite", |r| r.is_finite()),
        2 => any::<f64>().prop_filter("finite", |r| r.is_finite()),
        3 => (0u64..(1 << 53), -22i32..=22, any::<bool>())
            .prop_map(|(m, k, neg)| format!("{}{m}e{k}", if neg { "-" } else { "" }).parse().unwrap_or(0.0)),
    ]
    .boxed()
}

fn value() -> BoxedStrategy<Val> {
    prop_oneof![
        1 => Just(Val::Null),
        3 => (
            prop_oneof![
                pick(vec![i64::MIN, i64::MAX, 0, -1, 1, i64::MIN + 1, i64::MAX - 1, 1 << 53, (1 << 53) + 1, -(1 << 53) - 1, i64::from(i32::MAX) + 1]),
                any::<i64>(),
            ],
            proptest::bool::weighted(0.2),
        )
            .prop_map(|(i, n)| Val::Int(i, n)),
        4 => real().prop_map(Val::Real),
        3 => prop_oneof![
            3 => any::<String>(),
            2 => proptest::string::string_regex("[a-z\u{0}\u{1}\u{7f}\u{80}é\u{2028}\u{feff}\u{fffd}😀\u{10ffff}'\"\\\\%]{0,16}").expect("regex"),
            1 => (proptest::string::string_regex(".{1,4}").expect("regex"), 1000usize..20_000).prop_map(|(s, n)| s.repeat(n)),
        ]
        .prop_map(Val::Text),
        2 => prop_oneof![
            4 => proptest::collection::vec(any::<u8>(), 0..64),
            1 => proptest::collection::vec(any::<u8>(), 0..20_000),
        ]
        .prop_map(Val::Blob),
        1 => (0..SPECIALS.len()).prop_map(Val::Sql),
    ]
    .boxed()
}

/// The target.
pub struct WitValuesTarget {
    _dir: tempfile::TempDir,
    rt: Runtime,
    key: ActorKey,
    exact_reals: u64,
    other_reals: u64,
    moved: u64,
    moved_example: Option<(f64, f64)>,
}

impl WitValuesTarget {
    /// A runtime with the testee and a table without affinity.
    ///
    /// # Errors
    /// The testee is missing, does not load, or the table cannot be made.
    pub fn new() -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let rt = crate::testee_runtime(dir.path(), std::time::Duration::from_secs(5))?;
        let key = ActorKey::new(crate::APP, "testee", "values");
        let (status, body) = crate::send_ops(
            &rt,
            &key,
            &json!([{"op": "exec", "sql": "CREATE TABLE IF NOT EXISTS wv(x)"}]),
        )?;
        anyhow::ensure!(status == 200 && body.contains("\"ok\""), "setting up: {status} {body}");
        Ok(Self {
            _dir: dir,
            rt,
            key,
            exact_reals: 0,
            other_reals: 0,
            moved: 0,
            moved_example: None,
        })
    }
}

impl Drop for WitValuesTarget {
    fn drop(&mut self) {
        self.rt.shutdown();
    }
}

impl Target for WitValuesTarget {
    type Input = Vec<Val>;

    fn name(&self) -> &'static str {
        "wit_values"
    }

    fn strategy(&self) -> BoxedStrategy<Vec<Val>> {
        proptest::collection::vec(value(), 1..8).boxed()
    }

    fn encode(&self, input: &Vec<Val>) -> Vec<u8> {
        // One compact value a line: `{"real":…}` as serde_json writes it, read back exactly.
        let lines: Vec<String> = input.iter().map(|v| v.json().to_string()).collect();
        format!("[\n{}\n]\n", lines.join(",\n")).into_bytes()
    }

    fn decode(&self, bytes: &[u8]) -> Option<Vec<Val>> {
        let text = std::str::from_utf8(bytes).ok()?;
        let mut v: Value = serde_json::from_str(text).ok()?;
        exact_reals(&mut v, &mut real_tokens(text).into_iter());
        let vals: Vec<Val> = v.as_array()?.iter().map(Val::from_json).collect::<Option<_>>()?;
        (!vals.is_empty()).then_some(vals)
    }

    fn seeds(&self) -> Vec<Vec<Val>> {
        vec![
            (0..SPECIALS.len()).map(Val::Sql).collect(),
            vec![
                Val::Int(i64::MIN, false),
                Val::Int(i64::MAX, true),
                Val::Real(-0.0),
                Val::Real(5e-324),
                Val::Real(f64::MAX),
                Val::Text("a\0b".into()),
                Val::Text(String::new()),
                Val::Blob(Vec::new()),
                Val::Null,
            ],
        ]
    }

    fn run(&mut self, input: &Vec<Val>) -> Verdict {
        let mut ops = Vec::new();
        // (op index, column, the value, how it got there)
        let mut checks: Vec<(usize, usize, &Val, &'static str)> = Vec::new();
        let bound: Vec<&Val> = input.iter().filter(|v| !matches!(v, Val::Sql(_))).collect();
        for v in input {
            if let Val::Sql(i) = v {
                let expr = SPECIALS[*i % SPECIALS.len()].0;
                checks.push((ops.len(), 0, v, "SELECT <expression>"));
                ops.push(json!({"op": "query", "sql": format!("SELECT {expr}, typeof({expr})")}));
                continue;
            }
            let p = json!([v.json()]);
            checks.push((ops.len(), 0, v, "SELECT ?1"));
            ops.push(json!({"op": "query", "sql": "SELECT ?1, typeof(?1)", "params": p}));
            ops.push(json!({"op": "exec", "sql": "INSERT INTO wv(x) VALUES(?1)", "params": p}));
            checks.push((ops.len(), 0, v, "a column without affinity"));
            ops.push(json!({"op": "query", "sql": "SELECT x, typeof(x) FROM wv WHERE rowid = last_insert_rowid()"}));
        }
        if !bound.is_empty() {
            let cols: Vec<String> = (1..=bound.len()).map(|i| format!("?{i}, typeof(?{i})")).collect();
            let params: Vec<Value> = bound.iter().map(|v| v.json()).collect();
            for (i, b) in bound.iter().enumerate() {
                checks.push((ops.len(), 2 * i, b, "SELECT ?1, ?2, …"));
            }
            ops.push(json!({"op": "query", "sql": format!("SELECT {}", cols.join(", ")), "params": params}));
        }
        ops.push(json!({"op": "exec", "sql": "DELETE FROM wv"}));
        let (status, body) = match crate::send_ops(&self.rt, &self.key, &Value::Array(ops)) {
            Ok(r) => r,
            Err(e) => return Verdict::Fail(format!("the runtime refused the request: {e:#}")),
        };
        if status != 200 {
            return Verdict::Fail(format!("the testee answered {status}: {body}"));
        }
        let Ok(mut v) = serde_json::from_str::<Value>(&body) else {
            return Verdict::Fail(format!("the answer is not JSON: {body}"));
        };
        exact_reals(&mut v, &mut real_tokens(&body).into_iter());
        let outcomes = &v["outcomes"];
        // Every place a value came back must show the same thing (the host is deterministic).
        let mut shown: Vec<(*const Val, Value)> = Vec::new();
        for (at, col, val, how) in &checks {
            let row = &outcomes[*at]["ok"]["rows"][0];
            let (got, got_type) = (&row[*col], &row[*col + 1]);
            let (expected, ty) = val.expected();
            let fail = |why: String| {
                Verdict::Fail(format!(
                    "{how}: {why}: sent {}, expected type {ty}, the testee got {got} of type {got_type} (outcome {})",
                    val.json(),
                    outcomes[*at]
                ))
            };
            if *got_type != json!({"text": ty}) {
                return fail("the type changed".into());
            }
            if let Some(prev) = shown.iter().find(|(p, _)| std::ptr::eq(*p, *val)).map(|(_, g)| g)
                && prev != got
            {
                return fail(format!("another place showed {prev}"));
            }
            shown.push((std::ptr::from_ref(*val), got.clone()));
            if let Val::Real(r) = val {
                let sent = serde_json::to_string(r).unwrap_or_default();
                let Some(back) = got["real_text"].as_str().and_then(|t| t.parse::<f64>().ok()) else {
                    return fail("not a real".into());
                };
                if parsed_exactly_anywhere(&sent) {
                    self.exact_reals += 1;
                    if back.to_bits() != r.to_bits() {
                        return fail("not the same bits".into());
                    }
                } else {
                    self.other_reals += 1;
                    if back.to_bits() != r.to_bits() {
                        self.moved += 1;
                        self.moved_example.get_or_insert((*r, back));
                    }
                    if ulps(back, *r) > 4 || back.is_sign_negative() != r.is_sign_negative() {
                        return fail(format!("{} ulps away", ulps(back, *r)));
                    }
                }
            } else if *got != exact_expected(&expected) {
                return fail(format!("expected {expected}"));
            }
        }
        Verdict::Pass(input.iter().map(Val::feature).collect::<Vec<_>>().join("\n"))
    }

    fn notes(&self) -> Vec<String> {
        let mut notes = vec![format!(
            "{} reals every parser reads exactly came back bit for bit; {} others came back within 4 ulps",
            self.exact_reals, self.other_reals
        )];
        if let Some((r, back)) = self.moved_example {
            notes.push(format!(
                "{} of those {} others came back moved by an ulp or so (e.g. {r:e} → {back:e}): the testee's JSON \
                 parser (serde_json without float_roundtrip) reads such a number off before the host sees it; the \
                 reals that parse exactly everywhere show the host keeps every bit",
                self.moved, self.other_reals
            ));
        }
        notes
    }
}
