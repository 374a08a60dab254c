//! The dev server's request routing: `/<class>/<name>/<path>?<query>` split
//! and percent-decoded by `wasmkeep_shim::route::actor_route`. It must never
//! panic; a decoded name, encoded again (fully or minimally), routes to the
//! same actor; nothing after the class (`..`, `%2F`, more slashes) changes
//! the class or the name; the path the guest sees is the rest as sent. Every
//! eighth input that is a valid request target (and the first 64) also goes
//! through the real router to the testee, whose `self` must name the same
//! class and name; the server must not answer 5xx, nor another status than
//! the route's own error or its no-route 404.

use crate::engine::{Target, Verdict, pick};
use axum::body::Body;
use proptest::prelude::*;
use std::collections::BTreeMap;
use wasmkeep_shim::route::{RouteError, actor_route, percent_decode};

/// The target.
pub struct RoutingTarget {
    served: super::ServedRouter,
    count: u64,
    notes: BTreeMap<&'static str, String>,
}

impl RoutingTarget {
    /// A runtime with the testee app and the dev server's router over it.
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
}

fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// Every byte but the unreserved ones as `%XX`.
pub fn encode_all(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if unreserved(b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Only what a path segment cannot hold as it is, as `%xx`.
pub fn encode_minimal(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if unreserved(b) || b"!$&'()*+,;=:@".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02x}")
            }
        })
        .collect()
}

/// RFC 3986 decoding: `%` must be followed by two hex digits.
fn strict_decode(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = |c: u8| (c as char).to_digit(16);
            let (Some(h), Some(l)) = (b.get(i + 1).and_then(|c| hex(*c)), b.get(i + 2).and_then(|c| hex(*c))) else {
                return None;
            };
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(out)
}

/// The class segment, the name segment and the rest of a path as sent.
fn segments(path: &str) -> (&str, Option<&str>, Option<&str>) {
    let mut parts = path.trim_start_matches('/').splitn(3, '/');
    let class = parts.next().unwrap_or("");
    (class, parts.next(), parts.next())
}

fn class_segment() -> BoxedStrategy<String> {
    prop_oneof![
        6 => Just("testee".to_owned()),
        3 => pick(vec![
            "TESTEE", "tes%74ee", "%74estee", "..", ".", "%2e%2e", "%2E", "_shim", "testee%2F..", "testee%2f", "a%2Fb",
            "", "testee%00", "testee%", "metrics", "testee.", "testee%20", "%", "%zz", "%ff", "%c3%a9", "nope",
        ])
        .prop_map(String::from),
        1 => proptest::string::string_regex("[a-z%0-9.]{0,12}").expect("regex"),
    ]
    .boxed()
}

fn name_segment() -> BoxedStrategy<String> {
    let tricky = pick(vec![
        "..",
        ".",
        "%2e%2e",
        "%2E%2E",
        "%2F",
        "%2f..%2f",
        "..%2F..%2F_shim",
        "%",
        "%%",
        "%+1",
        "%+A",
        "%-1",
        "%zz",
        "%4",
        "a%4",
        "a%",
        "%e9",
        "%c3%a9",
        "%c0%af",
        "%00",
        "%ff%fe",
        "%F0%9F%92%A9",
        "%ed%a0%80",
        "a%2",
        "%%41",
        "+",
        "%20",
        "~",
        "%7E",
        "%25",
        "%2525",
        "%u0041",
        "%0",
        "%0g",
        "%g0",
        "%%%",
    ])
    .prop_map(String::from);
    let text = prop_oneof![
        3 => proptest::string::string_regex("[a-z0-9 ./%?#é😀\u{0}-]{0,12}").expect("regex"),
        2 => any::<String>(),
        1 => proptest::string::string_regex(".{100,200}").expect("regex"),
    ];
    let encoded = (text, 0u8..3).prop_map(|(s, how)| match how {
        0 => encode_all(&s),
        1 => encode_minimal(&s),
        _ => s,
    });
    prop_oneof![3 => encoded, 2 => tricky].boxed()
}

fn structured() -> BoxedStrategy<String> {
    let rest_segment = prop_oneof![
        pick(vec![
            "..", ".", "", "x", "%2F", "%2e%2e", "_shim", "testee", "a b", "%", "é"
        ])
        .prop_map(String::from),
        proptest::string::string_regex("[a-z0-9%.]{0,8}").expect("regex"),
    ];
    (
        pick(vec!["/", "/", "/", "/", "", "//", "///"]),
        class_segment(),
        proptest::option::weighted(0.95, name_segment()),
        proptest::option::of(proptest::collection::vec(rest_segment, 0..4)),
        proptest::option::of(proptest::string::string_regex("[a-z0-9=&%./?+#é]{0,16}").expect("regex")),
    )
        .prop_map(|(lead, class, name, rest, query)| {
            let mut t = format!("{lead}{class}");
            if let Some(n) = name {
                t.push('/');
                t.push_str(&n);
            }
            if let Some(rest) = rest {
                t.push('/');
                t.push_str(&rest.join("/"));
            }
            if let Some(q) = query {
                t.push('?');
                t.push_str(&q);
            }
            t
        })
        .boxed()
}

/// A request target's path and query: as `http::Uri` splits it when it is
/// one, else at the first `?` (a path never holds one).
fn split_target(target: &str) -> (String, Option<String>, bool) {
    if let Ok(uri) = target.parse::<axum::http::Uri>()
        && uri.scheme().is_none()
        && uri.authority().is_none()
        && target.starts_with('/')
    {
        return (uri.path().to_owned(), uri.query().map(str::to_owned), true);
    }
    match target.split_once('?') {
        Some((p, q)) => (p.to_owned(), Some(q.to_owned()), false),
        None => (target.to_owned(), None, false),
    }
}

impl RoutingTarget {
    fn note(&mut self, kind: &'static str, example: &str) {
        self.notes.entry(kind).or_insert_with(|| example.to_owned());
    }

    /// The percent-decoding of one segment against RFC 3986.
    fn check_decoding(&mut self, seg: &str) -> Result<(), String> {
        let host = percent_decode(seg);
        match strict_decode(seg) {
            Some(bytes) => {
                let expected = String::from_utf8(bytes).ok();
                if host != expected {
                    return Err(format!(
                        "segment {seg:?} decodes to {host:?}, RFC 3986 says {expected:?}"
                    ));
                }
            }
            None => match host {
                Some(_) if seg.contains("%+") => self.note(
                    "a '%' followed by '+' and one hex digit is decoded as hex (u8::from_str_radix takes a sign), \
                     so two paths name one actor",
                    seg,
                ),
                Some(_) => self.note(
                    "a '%' with fewer than two characters after it is kept as it is, while '%' with two non-hex \
                     characters is refused (400)",
                    seg,
                ),
                None => {}
            },
        }
        Ok(())
    }

    fn check_pure(&mut self, path: &str, query: Option<&str>) -> Result<String, String> {
        let (class_seg, name_seg, rest_seg) = segments(path);
        for seg in [Some(class_seg), name_seg].into_iter().flatten() {
            self.check_decoding(seg)?;
        }
        let got = actor_route(path, query);
        let expected_err = match name_seg {
            None => Some(RouteError::NoRoute),
            Some(n) => match (percent_decode(class_seg), percent_decode(n)) {
                (Some(_), Some(n)) if n.is_empty() => Some(RouteError::EmptyName),
                (Some(_), Some(_)) => None,
                _ => Some(RouteError::NotUtf8),
            },
        };
        let route = match (got, expected_err) {
            (Err(e), Some(x)) if e == x => return Ok(format!("err {e:?}")),
            (Ok(route), None) => route,
            (got, x) => return Err(format!("routed to {got:?}, expected the error {x:?}")),
        };
        let class = percent_decode(class_seg).unwrap_or_default();
        let name = name_seg.and_then(percent_decode).unwrap_or_default();
        let mut rest = rest_seg.map_or_else(|| "/".to_owned(), |r| format!("/{r}"));
        if let Some(q) = query {
            rest = format!("{rest}?{q}");
        }
        if route.class != class || route.name != name || route.rest != rest {
            return Err(format!(
                "routed to {route:?}, expected class {class:?}, name {name:?}, rest {rest:?}"
            ));
        }
        // The name round-trips: encoded again, fully or minimally, it is the same actor.
        let tail = rest_seg.map_or_else(String::new, |r| format!("/{r}"));
        for enc in [encode_all(&route.name), encode_minimal(&route.name)] {
            let again = actor_route(&format!("/{class_seg}/{enc}{tail}"), query);
            if again.as_ref() != Ok(&route) {
                return Err(format!(
                    "the name encoded again as {enc:?} routes to {again:?}, not {route:?}"
                ));
            }
        }
        // Nothing after the class segment changes the class.
        for trick in [
            "/../../other",
            "/..%2F..%2Fother",
            "//..",
            "/%2e%2e/%2e%2e/_shim/faults",
        ] {
            let p = format!("/{class_seg}/{}{trick}", name_seg.unwrap_or(""));
            match actor_route(&p, None) {
                Ok(r) if r.class == route.class && r.name == route.name => {}
                other => return Err(format!("{p:?} routes to {other:?}: the class or name changed")),
            }
        }
        let shape = if route.class == "testee" { "testee" } else { "other" };
        Ok(format!(
            "ok {shape} name={}{}{} rest={}",
            match route.name.len() {
                0..=8 => "short",
                9..=124 => "long",
                _ => "very-long",
            },
            if route.name.contains('/') { "+slash" } else { "" },
            if route.name.is_ascii() { "" } else { "+unicode" },
            if route.rest.contains('?') { "query" } else { "path" },
        ))
    }

    /// The same target through the dev server to the testee.
    fn check_served(&mut self, target: &str, path: &str, query: Option<&str>) -> Result<String, String> {
        let admin = path.starts_with("/_shim") || path == "/metrics";
        if admin {
            return Ok("served: admin path".into());
        }
        let body = serde_json::json!({"ops": [{"op": "self"}]}).to_string();
        let Ok(req) = axum::http::Request::builder()
            .method("POST")
            .uri(target)
            .header("host", "127.0.0.1:8787")
            .body(Body::from(body))
        else {
            return Ok("served: not a request".into());
        };
        let (status, body) = self.served.send(req, 1 << 20);
        if status >= 500 {
            return Err(format!("the dev server answered {status}: {body}"));
        }
        let route = actor_route(path, query);
        match route {
            Ok(route) if route.class == "testee" => {
                if status == 404 && body.contains("no route") {
                    return Ok("served: the router sends it elsewhere".into());
                }
                if status != 200 {
                    return Err(format!("the testee did not answer: {status} {body}"));
                }
                let v: serde_json::Value = serde_json::from_str(&body).map_err(|e| format!("{e}: {body}"))?;
                let me = &v["outcomes"][0]["ok"];
                if me["class"] != "testee" || me["name"].as_str() != Some(route.name.as_str()) {
                    return Err(format!("the testee says it is {me}, the route says {route:?}"));
                }
                Ok("served: testee".into())
            }
            Ok(_) => Ok(format!("served: {status}")),
            Err(e) if status == e.status().as_u16() || status == 404 => Ok(format!("served: {status}")),
            Err(e) => Err(format!(
                "the dev server answered {status} where the route says {e:?}: {body}"
            )),
        }
    }
}

impl Target for RoutingTarget {
    type Input = String;

    fn name(&self) -> &'static str {
        "routing"
    }

    fn strategy(&self) -> BoxedStrategy<String> {
        prop_oneof![
            8 => structured(),
            1 => any::<String>(),
            1 => proptest::string::string_regex("[/%?.a-zA-Z0-9+#\\-]{0,40}").expect("regex"),
        ]
        .boxed()
    }

    fn encode(&self, input: &String) -> Vec<u8> {
        input.as_bytes().to_vec()
    }

    fn decode(&self, bytes: &[u8]) -> Option<String> {
        Some(String::from_utf8_lossy(bytes).into_owned())
    }

    fn seeds(&self) -> Vec<String> {
        [
            "/testee/a",
            "/testee/a/",
            "/testee/a/items?page=2",
            "/testee/%2e%2e/%2e%2e/_shim/faults",
            "/testee/..%2F_shim",
            "/testee/%2Fetc%2Fpasswd",
            "/testee/%+A",
            "/testee/a%4",
            "/testee/%c0%af",
            "/testee/%00",
            "//testee/x",
            "/testee/",
            "/%74estee/x",
        ]
        .into_iter()
        .map(String::from)
        .collect()
    }

    fn run(&mut self, target: &String) -> Verdict {
        let (path, query, is_uri) = split_target(target);
        let pure = match self.check_pure(&path, query.as_deref()) {
            Ok(sig) => sig,
            Err(why) => return Verdict::Fail(why),
        };
        self.count += 1;
        // The first inputs (the seeds and the corpus, mostly) all go through
        // the server, then every eighth.
        if is_uri && (self.count <= 64 || self.count % 8 == 1) {
            return match self.check_served(target, &path, query.as_deref()) {
                Ok(served) => Verdict::Pass(format!("{pure}; {served}")),
                Err(why) => Verdict::Fail(why),
            };
        }
        Verdict::Pass(pure)
    }

    fn notes(&self) -> Vec<String> {
        self.notes
            .iter()
            .map(|(kind, example)| format!("{kind} (e.g. {example:?})"))
            .collect()
    }
}
