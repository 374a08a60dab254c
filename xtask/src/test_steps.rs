//! `cargo xtask test`: every step of the test command, in order (the
//! README's `bash scripts/test.sh` runs setup, then this). Formatting, lints,
//! the WIT copies and generated bindings, the host's and SDKs' tests, the
//! examples, and the conformance matrix.

use std::path::Path;

use anyhow::{Context, Result};

use crate::bucket_servers;
use crate::setup::{self, For};
use crate::step_runner::{Runner, Selection};

#[derive(clap::Args)]
pub struct TestArgs {
    /// Run only the steps whose name contains this (any case; may be given
    /// more than once). `--list` prints the names.
    #[arg(long, value_name = "SUBSTRING", conflicts_with = "from")]
    only: Vec<String>,
    /// Run the first step whose name contains this (any case), and every step after it.
    #[arg(long, value_name = "SUBSTRING")]
    from: Option<String>,
    /// Print every step's name and run nothing.
    #[arg(long, conflicts_with_all = ["only", "from"])]
    list: bool,
    /// Setup has run already (`bash scripts/test.sh` runs it before cargo
    /// can be used): it is not run again.
    #[arg(long)]
    setup_done: bool,
    /// When the run began, in seconds since the epoch (the start of
    /// scripts/test.sh, before its setup): the clock of "==> [at N min]"
    /// and the setup's row of the table count from it.
    #[arg(long, value_name = "UNIX_SECONDS", requires = "setup_done")]
    clock_from: Option<u64>,
}

const SETUP: &str = "set up what is missing (scripts/setup.sh)";

/// Runs the chosen steps, then prints what each took; a failure prints the
/// whole output of the command that failed, then the table.
///
/// # Errors
/// A step failed (the error names it and its command).
pub fn test(root: &Path, args: TestArgs) -> Result<()> {
    let selection = Selection {
        only: args.only,
        from: args.from,
        list: args.list,
    };
    let mut r = Runner::new(root, selection, args.clock_from);
    r.set_env("CARGO_TERM_COLOR", "never");
    // A CI run builds once: incremental caches only cost disk (several GB) and time there.
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        r.set_env("CARGO_INCREMENTAL", "0");
    }
    // The examples' chaos tests run 100 seeds by default (a quick inner loop
    // for a project made from them); the test command holds them to 1,000.
    if std::env::var_os("WASMKEEP_CHAOS_SEEDS").is_none_or(|v| v.is_empty()) {
        r.set_env("WASMKEEP_CHAOS_SEEDS", "1000");
    }
    // The bootstrap's setup ran in this run: it has its row.
    if args.clock_from.is_some() && !args.list {
        r.record_before(SETUP);
    }
    let outcome = steps(&mut r, args.setup_done);
    r.finish(outcome)
}

/// Every step, in the order of the test command.
#[allow(clippy::too_many_lines)] // one list, read top to bottom
fn steps(r: &mut Runner, setup_done: bool) -> Result<()> {
    // The script installs; then xtask builds what needs it (the C adapter,
    // the QuickJS parts, the other languages' guests, the Python harness).
    // When the script ran in this run (the bootstrap's, or the step above),
    // that second step runs whatever steps were chosen: later steps need it.
    let mut script_ran = setup_done;
    if !setup_done && r.step(SETUP) {
        setup::script(r.root(), For::Test)?;
        script_ran = true;
    }
    let builds = if script_ran {
        r.required_step(setup::BUILDS_STEP)
    } else {
        r.step(setup::BUILDS_STEP)
    };
    if builds {
        setup::builds(r.root(), For::Test)?;
    }
    if r.step("format (cargo fmt --check)") {
        r.run("cargo", &["fmt", "--all", "--check"])?;
    }
    if r.step("WIT copies and generated bindings of every SDK match wit/ (cargo xtask gen --check)") {
        crate::gen_all(r.root(), true)?;
    }
    if r.step("one feature set of every shared dependency, so wasmtime compiles once per profile (cargo hakari generate --diff, manage-deps --dry-run)") {
        r.run("cargo", &["hakari", "generate", "--diff"])
            .context("host/workspace-hack is out of date: run cargo hakari generate")?;
        r.run("cargo", &["hakari", "manage-deps", "--dry-run"])
            .context("a crate lacks the workspace-hack dependency: run cargo hakari manage-deps")?;
    }
    if r.step("one version in every package, and a CHANGELOG section for it (cargo xtask versions --check)") {
        crate::versions::versions(r.root(), true, None)?;
    }
    if r.step("every language's test harness has every verb, or says why not (cargo xtask parity --check)") {
        crate::parity::parity(r.root(), true)?;
    }
    if r.step("build the guests: examples and testees (cargo xtask guests)") {
        crate::guests(r.root())?;
    }
    if r.step("no import cycle among the host crates' modules, and every arrow docs/architecture.md draws exists in the code (scripts/module-cycles.sh: text checks, no build); no hand-written source file over 700 lines (scripts/file_lengths.py)") {
        r.run("bash", &["scripts/module-cycles.sh"])?;
        r.run("python3", &["scripts/adr_index.py"])?;
        r.run("python3", &["scripts/readme_wit_versions.py"])?;
        r.run("python3", &["scripts/packaged_readmes.py"])?;
        r.run("python3", &["scripts/file_lengths.py"])?;
    }
    if r.step("lints (cargo clippy -D warnings)") {
        r.run(
            "cargo",
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--quiet",
                "--",
                "-D",
                "warnings",
            ],
        )?;
    }
    if r.step("tests (cargo test; first the C harness library, which the Rust harness's prebuilt driver loads in its contract test and cargo test does not build)") {
        r.run("cargo", &["build", "--quiet", "-p", "wasmkeep-c-harness"])?;
        r.run("cargo", &["test", "--workspace", "--quiet"])?;
    }
    if r.step("the bucket on real servers: moto (S3) and Azurite on 127.0.0.1 (scripts/s3-server.sh, scripts/azurite-server.sh), the bucket contract, bucket check's probes and 16 racing creates over each, then wasmkeep-shim bucket check, two then three node processes over each (kill -9 of the holder), the purge, the process simulation (kill -9, SIGSTOP, durable, operator and app deletes), and the cluster conformance cases on two and three node processes over file://, moto and Azurite, and over TLS; the node processes' tests and the cluster cases two at a time (ADR 087)") {
        bucket_servers::on_real_servers(r)?;
    }
    // From here on every command sees the TypeScript examples' components,
    // also when the step that names them is not chosen.
    for (name, file) in [
        ("COUNTER_WASM", "counter-ts.wasm"),
        ("CHAT_WASM", "chat-ts.wasm"),
        ("BANK_WASM", "bank-ts.wasm"),
        ("BANK_BROKEN_WASM", "bank-ts-broken.wasm"),
    ] {
        let path = r.root().join("target/components").join(file);
        r.set_env(name, path.to_string_lossy());
    }
    if r.step("TypeScript tests (the harness addon, then npm test in sdk-ts and examples/*-ts)") {
        r.run("cargo", &["build", "--quiet", "-p", "wasmkeep-node-harness"])?;
        for dir in ["sdk-ts", "examples/counter-ts", "examples/chat-ts", "examples/bank-ts"] {
            if r.root().join(dir).join("package.json").is_file() {
                let mut npm = r.command("npm", &["test", "--silent"]);
                npm.current_dir(r.root().join(dir));
                r.run_command(npm)?;
            }
        }
    }
    if r.step("TypeScript: the new-user trial (pack, npm install into an empty folder, the README's actor and test, build, node --test, npx wasmkeep-shim serve)") {
        r.run("cargo", &["build", "--quiet", "-p", "wasmkeep-shim"])?;
        r.run("node", &["sdk-ts/scripts/new-user-trial.js", "--profile", "debug"])?;
    }
    for sdk in ["sdk-c", "sdk-python"] {
        let script = format!("{sdk}/scripts/test.sh");
        if r.root().join(&script).is_file() && r.step(&format!("{sdk} tests ({script})")) {
            r.run("bash", &[&script])?;
        }
    }
    if r.step("wasmkeep-shim new: a project per language, from new through its build and its test to a first response (scripts/new-project-trial.sh)") {
        r.run("bash", &["scripts/new-project-trial.sh"])?;
    }
    if r.step("the registry trial: every package of a debug-profile release published to verdaccio, pypiserver and scripts/cargo-registry.py on 127.0.0.1, then per language with the checkout hidden: install, new, build, test, serve, a first response, Rust's beside the others (scripts/registry-trial.sh; ADR 032, ADR 089)") {
        r.summarised(unittest_lines, r.command("python3", &["-m", "unittest", "discover", "-s", "scripts/tests"]))?;
        // A process of its own: its output, and that of every tool it runs,
        // is shown only when it fails (the trial's is what this step shows).
        r.summarised(
            |_| false,
            r.command("cargo", &["xtask", "release", "--profile", "debug", "--allow-dirty"]),
        )?;
        // The registries are stopped by the PIDs the script records, also when a step fails.
        r.run("bash", &["scripts/registry-trial.sh"])?;
    }
    if r.step("the dashboard in headless chromium over WebDriver: list, open, alarm, deletes, a fault, another origin, 10,000 actors (screenshots in target/dashboard-screenshots/)") {
        r.run("cargo", &["build", "--quiet", "-p", "wasmkeep-shim"])?;
        r.run("target/py-venv/bin/python", &["host/shim/tests/dashboard_browser.py"])?;
    }
    if r.step("cluster simulation (seeds and steps run, broken variants caught)") {
        let cmd = r.command(
            "cargo",
            &[
                "test",
                "--quiet",
                "-p",
                "wasmkeep-host",
                "--test",
                "simulation",
                "--",
                "--nocapture",
            ],
        );
        r.summarised(simulation_lines, cmd)?;
    }
    if r.step("hostile load against serve (wasmkeep-load: 20,000 names over 32 connections, the same under 256 descriptors, a 1 GiB WebSocket flood)") {
        r.run("cargo", &["build", "--quiet", "-p", "wasmkeep-bench", "--bin", "wasmkeep-load"])?;
        let load = "target/debug/wasmkeep-load";
        let shim = "target/debug/wasmkeep-shim";
        let names = r.command(load, &["names", "--shim", shim, "--names", "20000", "--connections", "32"]);
        r.summarised(names_lines, names)?;
        let nofile = r.command(load, &["names", "--shim", shim, "--names", "2000", "--connections", "32", "--nofile", "256"]);
        r.summarised(names_lines, nofile)?;
        let flood = r.command(load, &["ws-flood", "--shim", shim, "--mib", "1024"]);
        r.summarised(ws_flood_lines, flood)?;
    }
    if r.step("fuzz targets of the host's boundaries, 10 s each (wasmkeep-fuzz; the corpus is host/fuzz/corpus)") {
        r.run(
            "cargo",
            &[
                "run",
                "--quiet",
                "-p",
                "wasmkeep-fuzz",
                "--",
                "--target",
                "all",
                "--seconds",
                "10",
                "--no-extend",
            ],
        )?;
    }
    if r.step("conformance matrix") {
        r.run(
            "cargo",
            &["run", "--quiet", "-p", "conformance-runner", "--", "--no-build"],
        )?;
    }
    Ok(())
}

/// `^(Ran |OK|FAILED)`: unittest's summary.
fn unittest_lines(line: &str) -> bool {
    ["Ran ", "OK", "FAILED"].iter().any(|p| line.starts_with(p))
}

/// `simulation:|broken variant|test result`
fn simulation_lines(line: &str) -> bool {
    ["simulation:", "broken variant", "test result"]
        .iter()
        .any(|p| line.contains(p))
}

/// `^names:|FAILED`
fn names_lines(line: &str) -> bool {
    line.starts_with("names:") || line.contains("FAILED")
}

/// `^ws-flood:|FAILED`
fn ws_flood_lines(line: &str) -> bool {
    line.starts_with("ws-flood:") || line.contains("FAILED")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summaries_keep_the_lines_the_script_kept() {
        assert!(unittest_lines("Ran 12 tests in 0.3s"));
        assert!(unittest_lines("OK"));
        assert!(!unittest_lines("test_x (tests.T) ... ok"));
        assert!(simulation_lines("simulation: 200 seeds"));
        assert!(names_lines("names: 20000 answered"));
        assert!(names_lines("a step FAILED"));
        assert!(!names_lines("the names: none"));
        assert!(ws_flood_lines("ws-flood: 1024 MiB"));
    }
}
