//! `wasmkeep-shim new`'s refusals: each says what is wrong and what to do.
//! (What it makes is exercised per language by scripts/new-project-trial.sh:
//! build, test, serve, a first request.)

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
