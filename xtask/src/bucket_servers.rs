//! The test command's step on real bucket servers: moto (S3) and Azurite on
//! 127.0.0.1, started and stopped by their scripts (scripts/s3-server.sh,
//! scripts/azurite-server.sh), which print the variables that reach them.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt as _;
use std::process::{Child, Stdio};

use anyhow::{Context, Result, bail};

use crate::step_runner::{Job, Runner, shown};

/// The servers' scripts, each with `start` (prints `export NAME=VALUE`
/// lines) and `stop` (stops the server it started, by its PID).
const SCRIPTS: [&str; 2] = ["scripts/s3-server.sh", "scripts/azurite-server.sh"];

/// The shim's tests of node processes over the servers (their tests named
/// `_over_moto_` and `_over_azurite_`), built before they run.
const NODE_PROCESS_TESTS: [&str; 6] = [
    "operator_delete_outcomes",
    "process_simulation",
    "lost_answers",
    "node_processes",
    "node_process_purge",
    "verify",
];

/// Lines of the `cargo test`s: `test result|panicked|skipped`.
fn test_lines(line: &str) -> bool {
    ["test result", "panicked", "skipped"].iter().any(|p| line.contains(p))
}

/// `test result|panicked|skipped|took over|process simulation|purged|lost .* answers`
fn node_process_lines(line: &str) -> bool {
    test_lines(line)
        || ["took over", "process simulation", "purged"]
            .iter()
            .any(|p| line.contains(p))
        || line.find("lost ").is_some_and(|at| line[at + 5..].contains(" answers"))
}

/// The conformance runner's: `^(FAIL|XPASS|  rule:|  n[0-9]+'s log:|    |conformance:)`.
fn conformance_lines(line: &str) -> bool {
    ["FAIL", "XPASS", "  rule:", "    ", "conformance:"]
        .iter()
        .any(|p| line.starts_with(p))
        || line.strip_prefix("  n").is_some_and(|rest| {
            let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            digits > 0 && rest[digits..].starts_with("'s log:")
        })
}

/// Starts both servers, runs every test on them, and stops them, also when
/// a test fails or xtask is interrupted.
///
/// # Errors
/// A server did not start or a test failed.
pub fn on_real_servers(r: &Runner) -> Result<()> {
    let servers = Servers::watch(r)?;
    let mut env = BTreeMap::new();
    for script in SCRIPTS {
        env.extend(start(r, script)?);
    }
    let outcome = tests(r, &env);
    servers.stop();
    outcome
}

fn tests(r: &Runner, env: &BTreeMap<String, String>) -> Result<()> {
    let command = |program: &str, args: &[&str]| {
        let mut cmd = r.command(program, args);
        cmd.envs(env);
        cmd
    };
    let bucket = |name: &str| {
        env.get(name)
            .cloned()
            .with_context(|| format!("the servers' scripts printed no {name}"))
    };
    let (s3, azure) = (bucket("WASMKEEP_TEST_S3")?, bucket("WASMKEEP_TEST_AZURE")?);
    r.summarised(
        test_lines,
        command(
            "cargo",
            &[
                "test",
                "--quiet",
                "-p",
                "wasmkeep-store",
                "--features",
                "contract-tests",
                "--",
                "_server_meets_the_contract",
                "--nocapture",
            ],
        ),
    )?;
    r.summarised(
        test_lines,
        command(
            "cargo",
            &["test", "--quiet", "-p", "wasmkeep-shim", "--test", "bucket_check"],
        ),
    )?;
    // What the jobs below run, built first: then no two cargo commands
    // compile at once, and each job's cargo test only runs its binary.
    let shim_tests = NODE_PROCESS_TESTS.iter().flat_map(|t| ["--test", t]);
    let mut build = command("cargo", &["test", "--quiet", "--no-run", "-p", "wasmkeep-shim"]);
    build.args(shim_tests);
    r.run_command(build)?;
    r.run_command(command(
        "cargo",
        &["build", "--quiet", "-p", "wasmkeep-shim", "-p", "conformance-runner"],
    ))?;
    // The node processes' tests, one cargo test a binary, and the cluster
    // cases over node processes: each mostly waits (on leases, kills,
    // sleeps and the servers), so two run at once (ADR 087). The operator
    // deletes (76 s, mostly sleeping, on moto) and the process simulation
    // (28-76 s, a core and more of it moto's and Azurite's) never run
    // beside each other: together, once, an outcome was found left behind.
    let shim_test = |test: &str| {
        let mut cmd = command("cargo", &["test", "--quiet", "-p", "wasmkeep-shim", "--test", test]);
        cmd.args([
            "--",
            "_over_moto_",
            "_over_azurite_",
            "--nocapture",
            "--test-threads",
            "2",
        ]);
        Job::new(node_process_lines, cmd)
    };
    let runner = "target/debug/conformance-runner";
    let cluster = |nodes: &str, bucket: &str| {
        let title = format!(
            "cluster cases on {nodes} node processes over {}",
            if bucket.is_empty() { "file://" } else { bucket }
        );
        let mut args = vec!["--no-build", "--lang", "rust", "--node-processes", nodes];
        if !bucket.is_empty() {
            args.extend(["--bucket", bucket]);
        }
        Job::titled(title, conformance_lines, command(runner, &args))
    };
    let tls = |nodes: &str| {
        let title =
            format!("cluster cases on {nodes} node processes over file://, over mutual TLS between them (ADR 074)");
        let args = ["--no-build", "--lang", "rust", "--node-processes", nodes, "--tls"];
        Job::titled(title, conformance_lines, command(runner, &args))
    };
    let jobs = vec![
        shim_test("operator_delete_outcomes").never_beside("heavy on the servers"),
        shim_test("lost_answers"),
        shim_test("node_processes"),
        shim_test("node_process_purge"),
        shim_test("verify"),
        cluster("3", &s3),
        cluster("2", &s3),
        cluster("3", &azure),
        shim_test("process_simulation").never_beside("heavy on the servers"),
        cluster("2", &azure),
        tls("3"),
        tls("2"),
        cluster("3", ""),
        cluster("2", ""),
    ];
    r.summarised_at_once(2, jobs)?;
    r.run_command(command("target/debug/wasmkeep-shim", &["bucket", "check", &s3]))?;
    r.run_command(command("target/debug/wasmkeep-shim", &["bucket", "check", &azure]))
}

/// Runs `script start` and reads the `export NAME=VALUE` lines it prints
/// (its messages go to stderr).
fn start(r: &Runner, script: &str) -> Result<BTreeMap<String, String>> {
    let mut cmd = r.command("bash", &[script, "start"]);
    let shown = shown(&cmd);
    let output = cmd
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("cannot run `{shown}`"))?;
    if !output.status.success() {
        bail!("`{shown}` failed ({})", output.status);
    }
    parse_exports(&String::from_utf8_lossy(&output.stdout)).with_context(|| format!("reading what `{shown}` printed"))
}

/// `export NAME=VALUE` lines (or `NAME=VALUE`), a value maybe quoted.
fn parse_exports(text: &str) -> Result<BTreeMap<String, String>> {
    let mut env = BTreeMap::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let assignment = line.strip_prefix("export ").unwrap_or(line);
        let Some((name, value)) = assignment.split_once('=') else {
            bail!("not NAME=VALUE: {line}");
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            bail!("not a variable's name: {line}");
        }
        let value = ['"', '\'']
            .iter()
            .find_map(|q| value.strip_prefix(*q).and_then(|v| v.strip_suffix(*q)))
            .unwrap_or(value);
        env.insert(name.to_owned(), value.to_owned());
    }
    Ok(env)
}

/// A watcher in a process group of its own that stops both servers when
/// xtask closes its stdin: at [`Servers::stop`], or when xtask ends in any
/// other way (a panic, Ctrl-C, a kill), as test.sh's `trap … EXIT` did. It
/// is started before the servers, so that a start that fails half-way is
/// stopped too. Each script stops only the server it started, by its PID.
struct Servers {
    watcher: Option<Child>,
}

impl Servers {
    fn watch(r: &Runner) -> Result<Self> {
        let stops = SCRIPTS.map(|s| format!("bash {s} stop")).join("; ");
        let mut cmd = r.command("bash", &["-c", &format!("cat >/dev/null; {stops}")]);
        // Not in xtask's process group: a Ctrl-C at the terminal ends
        // xtask, and the watcher then stops the servers.
        cmd.process_group(0).stdin(Stdio::piped()).stdout(Stdio::null());
        let watcher = cmd
            .spawn()
            .context("starting the watcher that stops the bucket servers")?;
        Ok(Self { watcher: Some(watcher) })
    }

    /// Stops both servers now and waits until they are.
    fn stop(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        if let Some(mut watcher) = self.watcher.take() {
            drop(watcher.stdin.take());
            let _ = watcher.wait();
        }
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        self.stop_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_scripts_exports() {
        let env = parse_exports(
            "export AWS_ENDPOINT_URL=http://127.0.0.1:4566\nexport WASMKEEP_TEST_S3=s3://wasmkeep-test\nX='a b'\n",
        )
        .expect("parses");
        assert_eq!(env["AWS_ENDPOINT_URL"], "http://127.0.0.1:4566");
        assert_eq!(env["WASMKEEP_TEST_S3"], "s3://wasmkeep-test");
        assert_eq!(env["X"], "a b");
        assert!(parse_exports("s3-server: started\n").is_err());
    }

    #[test]
    fn the_summaries_keep_the_lines_the_script_kept() {
        assert!(test_lines("test result: ok. 3 passed"));
        assert!(node_process_lines("n2 took over after 3 s"));
        assert!(node_process_lines("lost 0 of 40 answers"));
        assert!(!node_process_lines("lost track"));
        assert!(conformance_lines("  n12's log:"));
        assert!(conformance_lines("conformance: 40 passed"));
        assert!(conformance_lines("FAIL delete"));
        assert!(!conformance_lines("  ns's log:"));
        assert!(!conformance_lines("pass delete"));
    }
}
