//! The admin API's JSON: random JSON (structured for each call, and any
//! JSON) and random bytes as bodies of every admin POST (and the DELETE),
//! with `Content-Type: application/json`, from a loopback peer, through the
//! dev server's router in-process. It must never answer 5xx or panic, and
//! the host must still answer: `GET /_shim/clock` after every input, and a
//! request to the testee (clock, alarm, SQL) after every eighth.

use crate::engine::{Target, Verdict, pick};
use axum::body::Body;
use axum::extract::ConnectInfo;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::net::SocketAddr;

/// The admin calls that take a body.
pub const CALLS: &[(&str, &str)] = &[
    ("POST", "/_shim/clock/advance"),
    ("POST", "/_shim/faults"),
    ("POST", "/_shim/alarms/run"),
    ("POST", "/_shim/hibernate"),
    ("POST", "/_shim/cluster/cut-off"),
    ("DELETE", "/_shim/faults"),
];

/// Inputs between fresh hosts.
const RENEW_EVERY: u64 = 3000;

/// One input: which call, the content type, the body.
#[derive(Debug, Clone, PartialEq)]
pub struct AdminInput {
    /// Index into [`CALLS`].
    pub call: usize,
    /// The `Content-Type` (always JSON, in one spelling or another).
    pub content_type: String,
    /// The body.
    pub body: Vec<u8>,
}

/// The target.
pub struct AdminJsonTarget {
    served: super::ServedRouter,
    count: u64,
    notes: BTreeMap<&'static str, String>,
}

impl AdminJsonTarget {
    /// A runtime (virtual clock) with the testee, and the router over it.
    ///
    /// # Errors
    /// The testee is missing or does not load.
    pub fn new() -> anyhow::Result<Self> {
        Ok(Self {
            served: super::ServedRouter::new()?,
            count: 0,
            notes: BTreeMap::new(),
        })
    }

    fn send(
        &self,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        body: Vec<u8>,
    ) -> Result<(u16, String), String> {
        let mut b = axum::http::Request::builder()
            .method(method)
            .uri(path)
            .header("host", "127.0.0.1:8787");
        if let Some(ct) = content_type {
            b = b.header("content-type", ct);
        }
        let mut req = b
            .body(Body::from(body))
            .map_err(|e| format!("building the request: {e}"))?;
        req.extensions_mut()
            .insert(ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 50_000))));
        Ok(self.served.send(req, 4 << 20))
    }

    /// The host still answers: its clock, and now and then an actor.
    fn still_answers(&mut self) -> Result<(), String> {
        let (status, body) = self.send("GET", "/_shim/clock", None, Vec::new())?;
        if status != 200 || serde_json::from_str::<Value>(&body).map_or(true, |v| v.get("now").is_none()) {
            return Err(format!("GET /_shim/clock afterwards answered {status}: {body}"));
        }
        if self.count % 8 != 0 {
            return Ok(());
        }
        let ops = json!({"ops": [
            {"op": "now"},
            {"op": "set-alarm", "in": "1000"},
            {"op": "get-alarm"},
            {"op": "exec", "sql": "CREATE TABLE IF NOT EXISTS seen(n)"},
            {"op": "exec", "sql": "INSERT INTO seen VALUES(1)"},
            {"op": "query", "sql": "SELECT count(*) FROM seen"},
        ]});
        let (status, body) = self.send("POST", "/testee/steady", None, ops.to_string().into_bytes())?;
        let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        let all_ok = v["outcomes"]
            .as_array()
            .is_some_and(|o| o.len() == 6 && o.iter().all(|x| x.get("ok").is_some()));
        if status != 200 || !all_ok {
            return Err(format!("a request to an actor afterwards answered {status}: {body}"));
        }
        Ok(())
    }
}

fn number() -> BoxedStrategy<Value> {
    prop_oneof![
        pick(vec![
            "0",
            "1",
            "-1",
            "1000",
            "18446744073709551615",
            "18446744073709551616",
            "9223372036854775807",
            "-9223372036854775808",
            "4294967295",
            "4294967296",
            "1.5",
            "-0",
            "-0.0",
            "1e3",
            "1e400",
            "-1e400",
            "1E-400",
            "0.0000001",
            "123456789012345678901234567890",
        ])
        .prop_map(|n| serde_json::from_str(n).unwrap_or(Value::Null)),
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
    ]
    .boxed()
}

fn any_json() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        any::<String>().prop_map(Value::String),
        pick(vec![
            "fail-removal",
            "fail-upload",
            "lose-hold",
            "cut-off-after-answer",
            "fail-erase",
            "upload-lands-but-fails",
            "",
            "FAIL-REMOVAL"
        ])
        .prop_map(|s| Value::String(s.into())),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map(
                prop_oneof![
                    pick(vec!["ms", "kind", "count", "MS", "", "ms ", "\u{0}"]).prop_map(String::from),
                    any::<String>()
                ],
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
    .boxed()
}

fn structured_body() -> BoxedStrategy<Vec<u8>> {
    let kind = prop_oneof![
        3 => pick(vec!["fail-removal", "fail-upload", "upload-lands-but-fails", "lose-hold", "cut-off-after-answer", "fail-erase"])
            .prop_map(|s| json!(s)),
        1 => any_json(),
    ];
    let advance = (number(), proptest::option::of(any_json())).prop_map(|(ms, extra)| {
        let mut o = serde_json::Map::new();
        o.insert("ms".into(), ms);
        if let Some(e) = extra {
            o.insert("extra".into(), e);
        }
        Value::Object(o)
    });
    let faults = (kind, proptest::option::of(number())).prop_map(|(k, c)| {
        let mut o = serde_json::Map::new();
        o.insert("kind".into(), k);
        if let Some(c) = c {
            o.insert("count".into(), c);
        }
        Value::Object(o)
    });
    prop_oneof![
        3 => advance.prop_map(|v| v.to_string().into_bytes()),
        3 => faults.prop_map(|v| v.to_string().into_bytes()),
        2 => any_json().prop_map(|v| v.to_string().into_bytes()),
    ]
    .boxed()
}

fn raw_body() -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        3 => proptest::collection::vec(any::<u8>(), 0..64),
        2 => pick(vec![
            "", " ", "{", "}", "[", "null", "{}", "{\"ms\": 1} trailing", "\u{feff}{}", "{\"ms\": 1, \"ms\": 2}",
            "{\"kind\": \"\\ud800\"}", "{\"kind\": \"fail-removal\u{0}\"}", "{\"ms\": NaN}", "{\"ms\": Infinity}",
            "{\"ms\": 0x10}", "{\"ms\": 01}", "{'ms': 1}", "{\"ms\":1}\n{\"ms\":2}", "\"ms\"", "1", "-", "tru",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
        1 => (1usize..200_000, pick(vec!["[", "{\"a\":"])).prop_map(|(n, open)| {
            let close = if open == "[" { "]" } else { "}" };
            format!("{}{}", open.repeat(n), close.repeat(n)).into_bytes()
        }),
        1 => (1usize..4, any::<u8>()).prop_map(|(n, b)| {
            // Around the 1 MiB body limit.
            let mut v = b"{\"ms\": 1, \"pad\": \"".to_vec();
            v.resize((1 << 20) + n * 100 - 50, b'a'.max(b % 26 + b'a'));
            v.extend_from_slice(b"\"}");
            v
        }),
    ]
    .boxed()
}

impl Target for AdminJsonTarget {
    type Input = AdminInput;

    fn name(&self) -> &'static str {
        "admin_json"
    }

    fn strategy(&self) -> BoxedStrategy<AdminInput> {
        (
            0..CALLS.len(),
            pick(vec![
                "application/json",
                "application/json",
                "application/json",
                "application/json; charset=utf-8",
                "APPLICATION/JSON",
                " application/json ;x=y",
                "application/json;",
            ]),
            prop_oneof![3 => structured_body(), 1 => raw_body()],
        )
            .prop_map(|(call, ct, body)| AdminInput {
                call,
                content_type: ct.to_owned(),
                body,
            })
            .boxed()
    }

    fn encode(&self, input: &AdminInput) -> Vec<u8> {
        let (method, path) = CALLS[input.call % CALLS.len()];
        let mut out = format!("{method} {path}\ncontent-type: {}\n\n", input.content_type).into_bytes();
        out.extend_from_slice(&input.body);
        out
    }

    fn decode(&self, bytes: &[u8]) -> Option<AdminInput> {
        let first = bytes.iter().position(|b| *b == b'\n')?;
        let line = std::str::from_utf8(&bytes[..first]).ok()?;
        let call = CALLS.iter().position(|(m, p)| format!("{m} {p}") == line)?;
        let rest = &bytes[first + 1..];
        let second = rest.iter().position(|b| *b == b'\n')?;
        let ct = std::str::from_utf8(&rest[..second])
            .ok()?
            .strip_prefix("content-type: ")?;
        let body = rest[second + 1..].strip_prefix(b"\n")?;
        Some(AdminInput {
            call,
            content_type: ct.to_owned(),
            body: body.to_vec(),
        })
    }

    fn seeds(&self) -> Vec<AdminInput> {
        let s = |call: usize, body: &str| AdminInput {
            call,
            content_type: "application/json".into(),
            body: body.as_bytes().to_vec(),
        };
        vec![
            s(0, "{\"ms\": 18446744073709551615}"),
            s(0, "{\"ms\": 18446744073709551615}"),
            s(2, "{}"),
            s(1, "{\"kind\": \"fail-removal\", \"count\": 18446744073709551615}"),
            s(1, "{\"kind\": \"lose-hold\", \"count\": 0}"),
            s(5, ""),
            s(3, "not json"),
            s(4, "{}"),
        ]
    }

    fn run(&mut self, input: &AdminInput) -> Verdict {
        self.count += 1;
        if self.count % RENEW_EVERY == 0
            && let Err(why) = self.served.renew()
        {
            return Verdict::Fail(why);
        }
        let (method, path) = CALLS[input.call % CALLS.len()];
        if axum::http::HeaderValue::from_str(&input.content_type).is_err() {
            // No client can send it (a mutation made it): nothing to try.
            return Verdict::Pass("content type not a header value".into());
        }
        let (status, body) = match self.send(method, path, Some(&input.content_type), input.body.clone()) {
            Ok(r) => r,
            Err(why) => return Verdict::Fail(why),
        };
        if status >= 500 {
            return Verdict::Fail(format!("{method} {path} answered {status}: {body}"));
        }
        if serde_json::from_str::<Value>(&body).is_err() {
            self.notes
                .entry("an admin answer that is not JSON")
                .or_insert_with(|| format!("{method} {path} → {status} {body:?}"));
        }
        if let Err(why) = self.still_answers() {
            return Verdict::Fail(why);
        }
        let class = serde_json::from_str::<Value>(&body)
            .ok()
            .and_then(|v| {
                v.get("error")
                    .and_then(Value::as_str)
                    .map(crate::targets::manifest::error_class)
            })
            .map_or_else(String::new, |e| e.chars().take(50).collect());
        Verdict::Pass(format!("{method} {path} {status} {class}"))
    }

    fn notes(&self) -> Vec<String> {
        self.notes.iter().map(|(k, v)| format!("{k}: {v}")).collect()
    }
}
