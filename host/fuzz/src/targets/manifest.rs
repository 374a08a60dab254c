//! `Manifest::parse` on TOML text, structured (apps, modes, nodes, classes,
//! components, access, idle limits, in table and inline forms, with junk)
//! and raw. It must answer `Ok` or `Err`, never panic, and an `Ok` must be a
//! manifest the rest of the host can trust.

use crate::engine::{Target, Verdict, pick};
use proptest::prelude::*;
use std::path::PathBuf;
use wasmkeep_host::Manifest;
use wasmkeep_host::address::{validate_app_name, validate_class_name};

/// The target.
pub struct ManifestTarget {
    base: tempfile::TempDir,
    shown_as: PathBuf,
    real_component: String,
}

impl ManifestTarget {
    /// A base directory with component files (`a.wasm`, `b.wasm`,
    /// `sub/c.wasm`), a directory named like one (`dir.wasm`), and a copy of
    /// the real testee (`real.wasm`).
    ///
    /// # Errors
    /// The testee is missing, or the files cannot be written.
    pub fn new() -> anyhow::Result<Self> {
        let real = crate::component("conformance-testee-rust")?;
        let base = tempfile::tempdir()?;
        std::fs::write(base.path().join("a.wasm"), b"x")?;
        std::fs::write(base.path().join("b.wasm"), b"x")?;
        std::fs::create_dir_all(base.path().join("sub"))?;
        std::fs::write(base.path().join("sub/c.wasm"), b"x")?;
        std::fs::create_dir_all(base.path().join("dir.wasm"))?;
        // The real testee is copied in and named relatively: an input kept
        // in the corpus must not name this machine's paths.
        std::fs::copy(&real, base.path().join("real.wasm"))?;
        let shown_as = base.path().join("wasmkeep.toml");
        Ok(Self {
            base,
            shown_as,
            real_component: "real.wasm".to_owned(),
        })
    }
}

fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn string_or_raw(words: Vec<&'static str>, regex: &'static str) -> BoxedStrategy<String> {
    let words: Vec<String> = words.into_iter().map(String::from).collect();
    prop_oneof![
        12 => pick(words).prop_map(|w| toml_string(&w)),
        3 => proptest::string::string_regex(regex).expect("regex").prop_map(|w| toml_string(&w)),
        1 => any::<String>().prop_map(|w| toml_string(&w)),
        2 => pick(vec![
            "1", "-1", "0", "true", "[]", "{}", "1.5", "9223372036854775807", "9223372036854775808",
            "18446744073709551616", "-9223372036854775808", "inf", "nan", "1979-05-27T07:32:00Z", "'lit'",
            "'''multi\nline'''", "\"\"\"x\"\"\"", "[\"a\", 1]", "{ x = 1 }", "0x10", "1_000", "+1",
        ])
        .prop_map(String::from),
    ]
    .boxed()
}

fn app_value() -> BoxedStrategy<String> {
    string_or_raw(
        vec![
            "acme/shop",
            "t/app",
            "a/b",
            "",
            "/",
            "acme",
            "acme/shop/x",
            "Acme/Shop",
            "acme/",
            "/shop",
            "a b/c",
            "../etc",
            "acme/sh\u{0}op",
            "ä/b",
            "a/-",
            "_/_",
        ],
        "[a-z0-9_/\\-.A-Z]{0,70}",
    )
}

fn class_key() -> BoxedStrategy<String> {
    prop_oneof![
        4 => pick(vec!["cart", "counter", "a", "b-2", "x_y", "z9"]).prop_map(String::from),
        1 => pick(vec![
            "\"_shim\"", "\"_x\"", "\"\"", "\"A\"", "\"a b\"", "\"a/b\"", "\"..\"", "\"é\"", "\"a\\u0000\"",
            "'lit'", "\"metrics\"",
        ])
        .prop_map(String::from),
        1 => proptest::string::string_regex("[a-z0-9_\\-]{60,70}").expect("regex"),
        1 => any::<String>().prop_map(|s| toml_string(&s)),
    ]
    .boxed()
}

fn class_body(real: String) -> BoxedStrategy<String> {
    let component = string_or_raw(
        vec![
            "a.wasm",
            "b.wasm",
            "sub/c.wasm",
            "./a.wasm",
            "sub/../a.wasm",
            "dir.wasm",
            "missing.wasm",
            "",
            ".",
            "..",
            "/",
            "/etc/passwd",
            "a.wasm\u{0}",
            "A.WASM",
            "a.wasm/",
            "//a.wasm",
        ],
        "[a-z./]{0,20}",
    );
    let real = toml_string(&real);
    let component = prop_oneof![5 => component, 1 => Just(real)];
    let access = string_or_raw(
        vec!["open", "existing", "internal", "Open", "", "none"],
        "[a-z\\-]{0,10}",
    );
    let idle = string_or_raw(
        vec![
            "7d",
            "1h",
            "59m",
            "60m",
            "3600s",
            "3599s",
            "0d",
            "0h",
            "24h",
            "1d",
            " 1h ",
            "1H",
            "h",
            "",
            "-1h",
            "+1h",
            "1.5h",
            "18446744073709551615d",
            "99999999999999999999d",
            "1h1m",
            "１h",
            "1\u{0}h",
            "٣h",
        ],
        "[0-9]{0,22}[smhdx]?",
    );
    (
        component,
        proptest::option::of(access),
        proptest::option::of(idle),
        proptest::option::weighted(
            0.1,
            pick(vec![
                "extra = 1",
                "Component = \"a.wasm\"",
                "access = \"open\"\naccess = \"open\"",
            ]),
        ),
    )
        .prop_map(|(c, a, i, x)| {
            let mut fields = vec![format!("component = {c}")];
            if let Some(a) = a {
                fields.push(format!("access = {a}"));
            }
            if let Some(i) = i {
                fields.push(format!("expire-after-idle = {i}"));
            }
            if let Some(x) = x {
                fields.push(x.to_owned());
            }
            fields.join("\n")
        })
        .boxed()
}

fn structured(real: String) -> BoxedStrategy<String> {
    let mode = string_or_raw(vec!["single", "cluster", "Cluster", "", "multi"], "[a-z]{0,8}");
    let nodes = pick(vec![
        "0",
        "1",
        "2",
        "3",
        "16",
        "17",
        "-1",
        "9223372036854775807",
        "18446744073709551615",
        "99999999999999999999",
        "1.0",
        "\"2\"",
        "true",
        "[]",
    ]);
    let class = (class_key(), class_body(real), any::<u8>());
    (
        proptest::option::of(app_value()),
        proptest::option::of(mode),
        proptest::option::of(nodes),
        proptest::collection::vec(class, 0..4),
        proptest::option::weighted(
            0.2,
            pick(vec![
                "\n[extra]\nx = 1\n",
                "\nunknown = 1\n",
                "\n[[classes]]\ncomponent = \"a.wasm\"\n",
                "\nclasses = 5\n",
                "\n[classes]\n",
                "\n[classes.cart]\ncomponent = \"a.wasm\"\n",
                "\napp = \"again/app\"\n",
                "\n[classes.cart.nested]\nx = 1\n",
                "\n\u{feff}",
                "\n# comment\n",
                "\n[",
                "\n\"\"\"",
                "\n\u{0}",
            ]),
        ),
        proptest::option::weighted(
            0.1,
            proptest::string::string_regex("[\\[\\]=\"'a-z0-9 .\n{}#,_\\-]{0,20}").expect("regex"),
        ),
    )
        .prop_map(|(app, mode, nodes, classes, extra, junk)| {
            let mut t = String::new();
            if let Some(app) = app {
                t.push_str(&format!("app = {app}\n"));
            }
            if let Some(m) = mode {
                t.push_str(&format!("mode = {m}\n"));
            }
            if let Some(n) = nodes {
                t.push_str(&format!("nodes = {n}\n"));
            }
            for (key, body, form) in classes {
                if form % 4 == 0 {
                    let inline = body.replace('\n', ", ");
                    t.push_str(&format!("classes.{key} = {{ {inline} }}\n"));
                } else {
                    t.push_str(&format!("\n[classes.{key}]\n{body}\n"));
                }
            }
            if let Some(e) = extra {
                t.push_str(e);
            }
            if let Some(junk) = junk {
                t.push_str(&junk);
            }
            t
        })
        .boxed()
}

impl Target for ManifestTarget {
    type Input = String;

    fn name(&self) -> &'static str {
        "manifest"
    }

    fn strategy(&self) -> BoxedStrategy<String> {
        prop_oneof![
            8 => structured(self.real_component.clone()),
            1 => any::<String>(),
            1 => proptest::string::string_regex("[\\[\\]=\"'a-z0-9 .\n{}#,_\\-/\\\\]{0,120}").expect("regex"),
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
            "app = \"acme/shop\"\n[classes.cart]\ncomponent = \"a.wasm\"\n",
            "app = \"acme/shop\"\nmode = \"cluster\"\nnodes = 16\n[classes.cart]\ncomponent = \"sub/c.wasm\"\naccess = \"internal\"\nexpire-after-idle = \"18446744073709551615d\"\n",
            "app = \"acme/shop\"\nnodes = 18446744073709551615\n[classes.cart]\ncomponent = \"a.wasm\"\n",
            "app = \"acme/shop\"\n[classes.cart]\ncomponent = \"a.wasm\"\nexpire-after-idle = \"１h\"\n",
            "app = \"acme/shop\"\n[classes.cart]\ncomponent = \"dir.wasm\"\n",
            "",
        ]
        .into_iter()
        .map(String::from)
        .collect()
    }

    fn run(&mut self, text: &String) -> Verdict {
        let parsed = Manifest::parse(text, self.base.path(), &self.shown_as);
        let again = Manifest::parse(text, self.base.path(), &self.shown_as);
        match (&parsed, &again) {
            (Ok(a), Ok(b)) if a == b => {}
            (Err(a), Err(b)) if a.to_string() == b.to_string() => {}
            _ => return Verdict::Fail("parsing the same text twice gave two answers".into()),
        }
        match parsed {
            Ok(m) => match check(&m) {
                Ok(()) => Verdict::Pass(format!(
                    "ok {:?} nodes={} classes={} idle={}",
                    m.mode,
                    m.nodes,
                    m.classes.len(),
                    m.expire_after_idle.len()
                )),
                Err(why) => Verdict::Fail(format!("accepted a manifest the host cannot trust: {why}")),
            },
            Err(e) => {
                let base = self.base.path().display().to_string();
                let message = e
                    .to_string()
                    .replace(&base, "<base>")
                    .replace(&self.real_component, "<testee>");
                Verdict::Pass(format!("err {}", error_class(&message)))
            }
        }
    }
}

/// What an accepted manifest promises the rest of the host.
fn check(m: &Manifest) -> Result<(), String> {
    validate_app_name(&m.app)?;
    if m.classes.is_empty() {
        return Err("no class".into());
    }
    for c in &m.classes {
        validate_class_name(&c.name)?;
        if !c.component.is_file() {
            return Err(format!(
                "class {:?}: component {} is not a file",
                c.name,
                c.component.display()
            ));
        }
    }
    if !(1..=16).contains(&m.nodes) {
        return Err(format!("nodes = {}", m.nodes));
    }
    if m.mode == wasmkeep_host::Mode::Single && m.nodes != 1 {
        return Err(format!("single mode with nodes = {}", m.nodes));
    }
    for (class, d) in &m.expire_after_idle {
        if !m.classes.iter().any(|c| &c.name == class) {
            return Err(format!("expire-after-idle for {class:?}, which is not a class"));
        }
        if *d < std::time::Duration::from_secs(3600) {
            return Err(format!("expire-after-idle {d:?} for {class:?} is under an hour"));
        }
    }
    Ok(())
}

/// An error message's class: its first and last lines without quoted parts,
/// numbers and anything not ASCII.
pub fn error_class(message: &str) -> String {
    let lines: Vec<&str> = message.lines().filter(|l| !l.trim().is_empty()).collect();
    let first = lines.first().copied().unwrap_or("");
    let last = lines.last().copied().unwrap_or("");
    let both = if first == last {
        first.to_owned()
    } else {
        format!("{first} | {last}")
    };
    let mut out = String::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in both.chars() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' && q == '"' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '`' => {
                quote = Some(c);
                out.push('_');
            }
            c if c.is_ascii_digit() && !out.ends_with('#') => out.push('#'),
            c if c.is_ascii_digit() => {}
            c if c.is_ascii() && !c.is_ascii_control() => out.push(c),
            _ => {}
        }
    }
    out.chars().take(100).collect()
}
