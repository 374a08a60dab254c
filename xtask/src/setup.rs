//! `cargo xtask setup`: `scripts/setup.sh` installs what must exist before
//! cargo and xtask can run (toolchains, Debian packages, the Python venv and
//! its tools, npm packages, cargo-hakari); then xtask builds, in its own
//! process, what needs it or a cargo build: the C SDK's WASI adapter, the
//! QuickJS backend's parts, the TypeScript, C and Python guests and the
//! Python test harness (ADR 082). Nothing under `scripts/` calls back into
//! xtask: the two bootstraps (`scripts/test.sh`, `scripts/main.sh`) run the
//! script, then `cargo xtask test|serve --setup-done`, which begin with
//! [`builds`].

use std::fs;
use std::path::Path;
use std::process::Stdio;

use anyhow::{Context, Result, bail};

use crate::step_runner::{outer_command, run_command, shown};

/// Where the C SDK's build finds the WASI preview-1 reactor adapter.
pub const C_ADAPTER: &str = "sdk-c/lib/wasi_snapshot_preview1.reactor.wasm";

/// The name of [`builds`]' step in the test command's table.
pub const BUILDS_STEP: &str = "build what setup needs xtask for (the C SDK's WASI adapter, the QuickJS backend's parts, the TypeScript, C and Python guests, the Python harness)";

/// What is set up: everything the test command needs, or only what serving
/// the examples needs (`--serve`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum For {
    Test,
    Serve,
}

/// `bash scripts/setup.sh [--serve]`, with the environment the bootstraps
/// give it.
///
/// # Errors
/// It failed (its output says why).
pub fn script(root: &Path, purpose: For) -> Result<()> {
    let mut cmd = outer_command(root, "bash");
    cmd.arg("scripts/setup.sh");
    if purpose == For::Serve {
        cmd.arg("--serve");
    }
    run_command(&mut cmd)
}

/// `cargo xtask setup`: the script, then [`builds`].
///
/// # Errors
/// Either failed.
pub fn setup(root: &Path, purpose: For) -> Result<()> {
    script(root, purpose)?;
    builds(root, purpose)
}

fn say(what: &str) {
    println!("setup: {what}");
}

/// What setup builds once the script has run; each part skips what is
/// current (a second run takes seconds).
///
/// # Errors
/// A build failed (its output says which).
pub fn builds(root: &Path, purpose: For) -> Result<()> {
    let serve = purpose == For::Serve;
    // The adapter's bytes come from the crate registry (pinned by
    // Cargo.lock); the C SDK's scripts only check that it is there.
    crate::c_adapter::write(&root.join(C_ADAPTER))?;
    say(&format!("{C_ADAPTER} is current"));
    // The QuickJS backend's native parts, then the TypeScript guests (the
    // SDK's script only checks the parts; cached by content hash).
    crate::ts_quickjs::build(root, false)?;
    say("the QuickJS backend's parts are current; building the TypeScript guests");
    let only_ts: &[&str] = if serve {
        &["--only", "counter-ts", "--only", "chat-ts"]
    } else {
        &[]
    };
    run_command(
        outer_command(root, "node")
            .args(["sdk-ts/scripts/build-guests.js", "--quiet"])
            .args(only_ts),
    )?;
    say("building the C guests (sdk-c/scripts/build-guests.sh)");
    let only_c: &[&str] = if serve { &["--only", "counter-c"] } else { &[] };
    run_command(
        outer_command(root, "bash")
            .args(["sdk-c/scripts/build-guests.sh", "--quiet"])
            .args(only_c),
    )?;
    if !serve {
        python_harness(root)?;
    }
    say("building the Python guests (sdk-python/scripts/build-guests.sh)");
    let only_py: &[&str] = if serve {
        &["--only", "counter-py", "--only", "account-py", "--only", "billing-py"]
    } else {
        &[]
    };
    run_command(
        outer_command(root, "bash")
            .arg("sdk-python/scripts/build-guests.sh")
            .args(only_py),
    )?;
    say("built");
    Ok(())
}

/// The Python test harness's wheel (`sdk-python/scripts/harness-wheel.sh`:
/// cargo rebuilds only what changed, a few seconds when nothing did),
/// installed into the venv only when its contents changed (see
/// [`wheel_contents_sum`]). A debug build unless
/// `WASMKEEP_PY_HARNESS_PROFILE=release` (it reuses the workspace's debug
/// artifacts; ADR 065 for the wheel's tags).
fn python_harness(root: &Path) -> Result<()> {
    let profile = std::env::var("WASMKEEP_PY_HARNESS_PROFILE")
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "dev".into());
    let mut wheel_cmd = outer_command(root, "bash");
    wheel_cmd
        .args(["sdk-python/scripts/harness-wheel.sh", "--profile", &profile])
        .stderr(Stdio::inherit());
    let out = wheel_cmd
        .output()
        .with_context(|| format!("cannot run `{}`", shown(&wheel_cmd)))?;
    if !out.status.success() {
        bail!("`{}` failed ({})", shown(&wheel_cmd), out.status);
    }
    // The script prints the wheel's path last.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let Some(wheel) = stdout.lines().rev().find(|l| !l.trim().is_empty()) else {
        bail!("`{}` printed no wheel", shown(&wheel_cmd));
    };
    let wheel = root.join(wheel.trim());
    let venv = root.join("target/py-venv");
    let python = venv.join("bin/python");
    let sum = wheel_contents_sum(root, &python, &wheel)?;
    let stamp = venv.join(".harness-wheel.sha256");
    let installed = fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == sum)
        && outer_command(root, &python)
            .args(["-c", "import wasmkeep_actor_harness"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    if installed {
        say("the Python harness is installed and current");
        return Ok(());
    }
    say(&format!("installing the Python harness ({})", wheel.display()));
    run_command(
        outer_command(root, &python)
            .args([
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "--no-deps",
                "--force-reinstall",
            ])
            .arg(&wheel),
    )?;
    fs::write(&stamp, format!("{sum}\n")).with_context(|| format!("writing {}", stamp.display()))
}

/// What a wheel installs, as one SHA-256: every file's name and bytes but
/// its SBOM and RECORD. maturin writes a new CycloneDX SBOM into each wheel
/// it builds (a timestamp and a random serial number), so the wheel's own
/// bytes differ at every build of the same harness, and RECORD holds the
/// SBOM's hash; the files that are installed and run do not differ.
fn wheel_contents_sum(root: &Path, python: &Path, wheel: &Path) -> Result<String> {
    const SUM: &str = r#"
import hashlib, sys, zipfile
total = hashlib.sha256()
with zipfile.ZipFile(sys.argv[1]) as z:
    for name in sorted(z.namelist()):
        info = name.split("/")
        if info[0].endswith(".dist-info") and (info[1:2] == ["sboms"] or info[1:] == ["RECORD"]):
            continue
        total.update(b"%d:%s:" % (len(name), name.encode()))
        total.update(hashlib.sha256(z.read(name)).digest())
print(total.hexdigest())
"#;
    let mut cmd = outer_command(root, python);
    cmd.args(["-c", SUM]).arg(wheel).stderr(Stdio::inherit());
    let out = cmd.output().with_context(|| format!("cannot run `{}`", shown(&cmd)))?;
    if !out.status.success() {
        bail!("reading the contents of {} failed ({})", wheel.display(), out.status);
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}
