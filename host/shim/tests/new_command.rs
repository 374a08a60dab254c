//! `wasmkeep-shim new`'s refusals: each says what is wrong and what to do;
//! and what it writes, per language and template. (Building and testing what
//! it makes is scripts/new-project-trial.sh's: per language the counter, and
//! the bank in C: build, test, serve, a first request.)

fn new(args: &[&str]) -> (bool, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_wasmkeep-shim"))
        .arg("new")
        .args(args)
        .output()
        .expect("run wasmkeep-shim new");
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

#[test]
fn new_writes_a_project_and_refuses_what_it_cannot_do() {
    let dir = tempfile::tempdir().expect("tempdir");
    let at = dir.path().join("My Actor");
    let at = at.to_str().expect("utf-8");
    let (ok, out) = new(&[at, "--lang", "ts"]);
    assert!(ok, "{out}");
    assert!(
        out.contains("a TypeScript actor \"my-actor\""),
        "the name comes from the folder: {out}"
    );
    for f in [
        "package.json",
        "src/actor.ts",
        "test/actor.test.js",
        "wasmkeep.toml",
        "README.md",
        ".gitignore",
    ] {
        assert!(dir.path().join("My Actor").join(f).is_file(), "{f} written");
    }
    let manifest = std::fs::read_to_string(dir.path().join("My Actor/wasmkeep.toml")).expect("manifest");
    assert!(
        manifest.contains("[classes.my-actor]") && manifest.contains("build = \"npm run build --silent\""),
        "{manifest}"
    );

    let (ok, out) = new(&[at, "--lang", "rust"]);
    assert!(
        !ok && out.contains("exists and is not empty"),
        "never over an existing project: {out}"
    );

    let other = dir.path().join("b");
    let (ok, out) = new(&[other.to_str().expect("utf-8"), "--lang", "c", "--name", "Bad_Name"]);
    assert!(
        !ok && out.contains("cannot be a package name") && out.contains("--name my-actor"),
        "{out}"
    );

    let (ok, out) = new(&[
        other.to_str().expect("utf-8"),
        "--lang",
        "python",
        "--sdk",
        dir.path().to_str().expect("utf-8"),
    ]);
    assert!(
        !ok && out.contains("is not the wasmkeep repository") && out.contains("pass --sdk"),
        "{out}"
    );
    assert!(!other.exists(), "nothing written when refused");
}

/// Every file `new` wrote under `dir`, by path relative to it.
fn files(dir: &std::path::Path) -> std::collections::BTreeMap<String, String> {
    fn walk(base: &std::path::Path, dir: &std::path::Path, out: &mut std::collections::BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                let rel = path.strip_prefix(base).expect("under base").display().to_string();
                out.insert(rel, std::fs::read_to_string(&path).expect("utf-8 file"));
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn checkout() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the checkout")
}

/// By default a project names versions of the published SDKs, and nothing of
/// this checkout: it builds wherever its author works.
#[test]
fn new_without_sdk_writes_version_requirements() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = checkout().display().to_string();
    let next = format!(
        "0.{}",
        VERSION
            .split('.')
            .nth(1)
            .and_then(|m| m.parse::<u64>().ok())
            .expect("minor")
            + 1
    );
    for lang in ["rust", "ts", "python", "c"] {
        let at = dir.path().join(lang);
        let (ok, out) = new(&[at.to_str().expect("utf-8"), "--lang", lang, "--name", "hello"]);
        assert!(ok, "{lang}: {out}");
        let written = files(&at);
        for (path, text) in &written {
            assert!(!text.contains(&repo), "{lang}: {path} names the checkout:\n{text}");
        }
        match lang {
            "rust" => {
                let manifest: toml::Table = written["Cargo.toml"].parse().expect("Cargo.toml is TOML");
                assert_eq!(manifest["dependencies"]["wasmkeep-actor"].as_str(), Some(VERSION));
                assert_eq!(
                    manifest["dev-dependencies"]["wasmkeep-actor-testing"].as_str(),
                    Some(VERSION)
                );
                assert!(
                    manifest["profile"]["guest"].is_table(),
                    "the guest profile builds the component"
                );
                assert!(
                    !written.contains_key(".cargo/config.toml") && !written.contains_key("Cargo.lock"),
                    "its own target/ and lock file: {:?}",
                    written.keys()
                );
            }
            "ts" => {
                let package: serde_json::Value = serde_json::from_str(&written["package.json"]).expect("JSON");
                assert_eq!(package["dependencies"]["@wasmkeep/actor"], format!("^{VERSION}"));
            }
            "python" => {
                let pyproject: toml::Table = written["pyproject.toml"].parse().expect("TOML");
                let deps = pyproject["project"]["dependencies"].as_array().expect("dependencies");
                // [testing] brings the harness and the host (ADR 032): one requirement.
                let want = [format!("wasmkeep-actor[testing]>={VERSION},<{next}")];
                let have: Vec<&str> = deps.iter().filter_map(|d| d.as_str()).collect();
                assert_eq!(have, want);
                assert!(
                    written["README.md"].contains(".venv/bin/pip install"),
                    "{}",
                    written["README.md"]
                );
                assert!(written["wasmkeep.toml"].contains("\".venv/bin/python -m wasmkeep_actor build"));
            }
            _ => {
                let makefile = &written["Makefile"];
                for want in [
                    format!("pkg-config --atleast-version={VERSION} wasmkeep"),
                    "pkg-config --variable=sdk wasmkeep".to_owned(),
                    "pkg-config --variable=libdir wasmkeep-harness".to_owned(),
                    "WK_NAME := hello".to_owned(),
                ] {
                    assert!(makefile.contains(&want), "{want}:\n{makefile}");
                }
                assert!(!makefile.contains("../../sdk-c"), "{makefile}");
            }
        }
    }
}

/// `--sdk <checkout>`: the project uses that checkout's SDKs by path (and a
/// Rust project its target directory), for working on the SDKs.
#[test]
fn new_with_sdk_points_at_the_checkout() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = checkout();
    let sdk = repo.to_str().expect("utf-8");
    for lang in ["rust", "ts", "python", "c"] {
        let at = dir.path().join(lang);
        let (ok, out) = new(&[at.to_str().expect("utf-8"), "--lang", lang, "--sdk", sdk]);
        assert!(ok, "{lang}: {out}");
        let written = files(&at);
        match lang {
            "rust" => {
                let manifest: toml::Table = written["Cargo.toml"].parse().expect("Cargo.toml is TOML");
                assert_eq!(
                    manifest["dependencies"]["wasmkeep-actor"]["path"].as_str(),
                    Some(format!("{sdk}/sdk-rust").as_str())
                );
                assert!(manifest["dev-dependencies"]["wasmkeep-workspace-hack"]["path"].is_str());
                assert!(written[".cargo/config.toml"].contains(&format!("target-dir = \"{sdk}/target\"")));
                assert!(written.contains_key("Cargo.lock"));
            }
            "ts" => {
                let package: serde_json::Value = serde_json::from_str(&written["package.json"]).expect("JSON");
                assert_eq!(package["dependencies"]["@wasmkeep/actor"], format!("file:{sdk}/sdk-ts"));
            }
            "python" => {
                assert!(written["wasmkeep.toml"].contains(&format!("{sdk}/target/py-venv/bin/python")));
                assert!(written["pyproject.toml"].contains(&format!("wasmkeep-actor=={VERSION}")));
            }
            _ => assert!(written["Makefile"].contains(&format!("WASMKEEP_C_SDK ?= {sdk}/sdk-c"))),
        }
    }
}

/// The absolute paths in `text`: each `/`-rooted word (at the start, or
/// after a space, a quote, `=`, `(`, `:` or a backtick) whose first folder
/// exists on this machine (`/hello/<actor>`, a request's path, is not one).
fn absolute_paths(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut prev = ' ';
    for (i, ch) in text.char_indices() {
        if ch == '/' && matches!(prev, ' ' | '\t' | '\n' | '"' | '\'' | '=' | '(' | ':' | '`') {
            let word: String = text[i..]
                .chars()
                .take_while(|c| !c.is_whitespace() && !matches!(c, '"' | '\'' | '`' | ')'))
                .collect();
            let first = std::path::Path::new(&word).components().find_map(|c| match c {
                std::path::Component::Normal(n) => Some(n.to_owned()),
                _ => None,
            });
            if first.is_some_and(|f| std::path::Path::new("/").join(f).exists()) {
                found.push(word);
            }
        }
        prev = ch;
    }
    found
}

/// A project from the registries names no path of the machine that made it
/// (not the folder it was made in, not the wasmkeep-shim that ran `new`):
/// a teammate who clones it runs the same commands. The host runs as each
/// language's package runs it: `wasmkeep-shim` on PATH (the C archive's
/// `bin/`, which Rust uses too), `npx wasmkeep-shim`, `python -m wasmkeep_actor`.
#[test]
fn new_writes_no_absolute_path() {
    assert_eq!(
        absolute_paths("run /usr/bin/x and GET /hello/a, PATH=a:/usr/bin \"/tmp/x\" http://127.0.0.1:1/a"),
        ["/usr/bin/x", "/usr/bin", "/tmp/x"],
        "the check finds absolute paths"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let shim = std::path::Path::new(env!("CARGO_BIN_EXE_wasmkeep-shim"));
    for lang in ["rust", "ts", "python", "c"] {
        let at = dir.path().join(lang);
        let (ok, out) = new(&[at.to_str().expect("utf-8"), "--lang", lang, "--name", "hello"]);
        assert!(ok, "{lang}: {out}");
        let written = files(&at);
        for (path, text) in &written {
            for never in [dir.path(), shim, shim.parent().expect("its folder")] {
                let never = never.display().to_string();
                assert!(!text.contains(&never), "{lang}: {path} names {never}:\n{text}");
            }
            let found = absolute_paths(text);
            assert!(found.is_empty(), "{lang}: {path} names {found:?}:\n{text}");
        }
        if lang == "c" {
            // The example's Makefile speaks of the checkout; the project's does not.
            let makefile = &written["Makefile"];
            for never in ["target/debug", "sdk-c", "repository"] {
                assert!(
                    !makefile.contains(never),
                    "c: the Makefile names {never:?}:\n{makefile}"
                );
            }
        }
        let readme = &written["README.md"];
        let manifest: toml::Table = written["wasmkeep.toml"].parse().expect("wasmkeep.toml is TOML");
        let build = manifest["classes"]["hello"]["build"].as_str().expect("build");
        let serve = match lang {
            "rust" => {
                assert_eq!(build, "wasmkeep-shim build");
                // The component `cargo test` builds (<target dir>/components/<package>.wasm,
                // the project's own target/), so that serve serves what was tested.
                assert_eq!(
                    manifest["classes"]["hello"]["component"].as_str(),
                    Some("target/components/hello.wasm")
                );
                let cargo: toml::Table = written["Cargo.toml"].parse().expect("Cargo.toml is TOML");
                assert_eq!(cargo["package"]["name"].as_str(), Some("hello"));
                assert!(!written.contains_key(".cargo/config.toml"), "no other target dir");
                "\nwasmkeep-shim serve"
            }
            "ts" => "\nnpx wasmkeep-shim serve",
            "python" => "\n.venv/bin/python -m wasmkeep_actor serve",
            _ => "\nwasmkeep-shim serve",
        };
        assert!(
            readme.contains(serve),
            "{lang}: the README serves with {serve:?}:\n{readme}"
        );
    }
}

/// With `--sdk`, the project names the checkout; the host it names is
/// `wasmkeep-shim` when that is the one on PATH.
#[test]
fn new_with_sdk_names_the_shim_on_path_by_its_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let shim = std::path::Path::new(env!("CARGO_BIN_EXE_wasmkeep-shim"));
    let path = std::env::join_paths(
        std::iter::once(shim.parent().expect("its folder").to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .expect("PATH");
    let at = dir.path().join("p");
    let out = std::process::Command::new(shim)
        .arg("new")
        .arg(&at)
        .args(["--lang", "rust", "--sdk"])
        .arg(checkout())
        .env("PATH", path)
        .output()
        .expect("run wasmkeep-shim new");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let written = files(&at);
    let manifest: toml::Table = written["wasmkeep.toml"].parse().expect("TOML");
    assert_eq!(manifest["classes"]["p"]["build"].as_str(), Some("wasmkeep-shim build"));
}

#[test]
fn a_reader_that_goes_away_ends_new_without_a_panic() {
    // `wasmkeep-shim new … | head -1`: the reader closes the pipe before
    // `new` prints its summary. That used to panic (exit 101).
    let dir = tempfile::tempdir().expect("tempdir");
    let at = dir.path().join("p");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_wasmkeep-shim"))
        .arg("new")
        .arg(&at)
        .args(["--lang", "rust"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run wasmkeep-shim new");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    assert_ne!(
        out.status.code(),
        Some(101),
        "a panic: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(at.join("Cargo.toml").is_file(), "the project was written");
}

/// `new` with `args`: its exit code and what it printed.
fn new_code(args: &[&str]) -> (Option<i32>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_wasmkeep-shim"))
        .arg("new")
        .args(args)
        .output()
        .expect("run wasmkeep-shim new");
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.code(), text)
}

/// `--template`: every template in every language that has it writes the
/// example's sources and tests (under the project's name), a manifest that
/// builds and serves it, and a README that says what the actor answers and
/// where the dashboard is; chat in another language, or a template that does
/// not exist, is a usage error (exit 2) that names what there is, and writes
/// nothing. Without `--template` the project is the counter.
#[test]
fn new_writes_every_template_and_refuses_one_a_language_has_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases: &[(&str, &str, &[&str])] = &[
        ("counter", "rust", &["src/lib.rs", "tests/actor.rs"]),
        ("counter", "ts", &["src/actor.ts", "test/actor.test.js"]),
        (
            "counter",
            "python",
            &["actor.py", "tests/conftest.py", "tests/test_actor.py"],
        ),
        ("counter", "c", &["actor.c", "test/actor_test.c"]),
        ("bank", "rust", &["src/lib.rs", "tests/bank.rs", "tests/chaos.rs"]),
        (
            "bank",
            "ts",
            &[
                "src/actor.ts",
                "src/bank.ts",
                "src/broken.ts",
                "test/bank.test.js",
                "test/chaos.test.js",
            ],
        ),
        (
            "bank",
            "python",
            &[
                "bank.py",
                "bank_broken.py",
                "tests/conftest.py",
                "tests/test_bank.py",
                "tests/test_chaos.py",
            ],
        ),
        ("bank", "c", &["actor.c", "test/bank_test.c"]),
        ("chat", "ts", &["src/actor.ts", "test/chat.test.js"]),
    ];
    let repo = checkout().display().to_string();
    for (template, lang, sources) in cases {
        let at = dir.path().join(format!("{template}-{lang}"));
        let (code, out) = new_code(&[
            at.to_str().expect("utf-8"),
            "--lang",
            lang,
            "--template",
            template,
            "--name",
            "acct",
        ]);
        assert_eq!(code, Some(0), "{template} in {lang}: {out}");
        assert!(out.contains(&format!("from the {template} template")), "{out}");
        let written = files(&at);
        let manifest = match *lang {
            "rust" => "Cargo.toml",
            "ts" => "package.json",
            "python" => "pyproject.toml",
            _ => "Makefile",
        };
        let mut want: Vec<&str> = vec![manifest, "wasmkeep.toml", "README.md", ".gitignore"];
        if *lang == "ts" {
            want.push("tsconfig.json");
        }
        want.extend(sources.iter());
        want.sort_unstable();
        let have: Vec<&str> = written.keys().map(String::as_str).collect();
        assert_eq!(have, want, "{template} in {lang}: the files");
        for (path, text) in &written {
            assert!(!text.contains(&repo), "{template} in {lang}: {path} names the checkout");
            let found = absolute_paths(text);
            assert!(found.is_empty(), "{template} in {lang}: {path} names {found:?}");
            // The app is the project's, not the example's.
            assert!(
                !text.contains("\"examples/"),
                "{template} in {lang}: {path} names an example's app:\n{text}"
            );
        }
        let served: toml::Table = written["wasmkeep.toml"].parse().expect("wasmkeep.toml is TOML");
        assert!(served["classes"]["acct"]["build"].is_str(), "{template} in {lang}");
        let readme = &written["README.md"];
        assert!(
            readme.contains("http://127.0.0.1:8787/_shim/ui"),
            "{template} in {lang}: the README names the dashboard:\n{readme}"
        );
        let first = match *template {
            "counter" => "curl -X POST http://127.0.0.1:8787/acct/a` answers `1`",
            "bank" => "/acct/ada/deposit?op=d1&amount=100'` answers `100`",
            _ => "/acct/lobby/messages?name=me'",
        };
        assert!(readme.contains(first), "{template} in {lang}: {first:?} in\n{readme}");
        match (*template, *lang) {
            ("bank", "rust") => {
                let cargo: toml::Table = written["Cargo.toml"].parse().expect("Cargo.toml is TOML");
                assert!(
                    cargo["features"]["broken-idempotency"].is_array(),
                    "tests/chaos.rs builds the broken variant: {cargo:?}"
                );
            }
            ("bank", "ts") => {
                let package: serde_json::Value = serde_json::from_str(&written["package.json"]).expect("JSON");
                assert_eq!(package["scripts"]["build"], "wasmkeep-build src/actor.ts -o acct.wasm");
                assert_eq!(
                    package["scripts"]["pretest"],
                    "wasmkeep-build src/broken.ts -o acct-broken.wasm"
                );
                let chaos = &written["test/chaos.test.js"];
                assert!(
                    chaos.contains("\"../acct.wasm\"") && chaos.contains("\"../acct-broken.wasm\""),
                    "{chaos}"
                );
                assert!(!chaos.contains("process.env.BANK"), "{chaos}");
            }
            ("bank", "python") => {
                assert!(
                    served["classes"]["acct"]["build"]
                        .as_str()
                        .is_some_and(|b| b.ends_with("-m wasmkeep_actor build bank.py -o acct.wasm"))
                );
                assert!(readme.contains("build bank.py -o acct.wasm"), "{readme}");
            }
            ("bank", "c") => {
                let makefile = &written["Makefile"];
                for want in [
                    "WK_NAME := acct\n",
                    "acct-broken.wasm",
                    "pkg-config --variable=sdk wasmkeep",
                ] {
                    assert!(makefile.contains(want), "{want:?} in\n{makefile}");
                }
                for never in ["target/debug", "sdk-c", "repository", "bank-c"] {
                    assert!(!makefile.contains(never), "{never:?} in\n{makefile}");
                }
                assert!(written["test/bank_test.c"].contains("\"local/acct\""));
            }
            ("chat", _) => {
                let test = &written["test/chat.test.js"];
                assert!(
                    test.contains("\"../acct.wasm\"") && !test.contains("process.env"),
                    "{test}"
                );
            }
            _ => {}
        }
    }

    // The default is the counter, file for file.
    let plain = dir.path().join("plain");
    let (code, out) = new_code(&[plain.to_str().expect("utf-8"), "--lang", "c", "--name", "acct"]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(files(&plain), files(&dir.path().join("counter-c")));

    for lang in ["rust", "python", "c"] {
        let at = dir.path().join(format!("chat-{lang}"));
        let (code, out) = new_code(&[at.to_str().expect("utf-8"), "--lang", lang, "--template", "chat"]);
        assert_eq!(code, Some(2), "chat in {lang} is a usage error: {out}");
        for want in [
            "'chat' is written in ts only",
            "--lang ts",
            "counter (rust, ts, python, c)",
            "bank (rust, ts, python, c)",
            "chat (ts)",
        ] {
            assert!(out.contains(want), "chat in {lang}: {want:?} in {out}");
        }
        assert!(!at.exists(), "nothing written when refused");
    }
    let at = dir.path().join("nope");
    let (code, out) = new_code(&[at.to_str().expect("utf-8"), "--lang", "ts", "--template", "shop"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("'shop'") && out.contains("[possible values: counter, bank, chat]"),
        "an unknown template names the known ones: {out}"
    );
    assert!(!at.exists(), "nothing written when refused");
}
