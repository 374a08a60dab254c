//! The Miniflare side: `bench/miniflare/serve.mjs` in a node process of our own.

use std::io::{BufRead as _, BufReader};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The oldest node the pinned Miniflare runs on (its `engines`).
const MIN_NODE: u32 = 18;

/// A running Miniflare.
pub struct Miniflare {
    child: Child,
    stdin: Option<ChildStdin>,
    /// The port it listens on (127.0.0.1).
    pub port: u16,
    /// The version of node it runs on.
    pub node: String,
    /// The version of Miniflare.
    pub version: String,
    _persist: tempfile::TempDir,
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(6)..].join(" / ")
}

fn node_version() -> Result<(String, u32), String> {
    let out = Command::new("node")
        .arg("--version")
        .output()
        .map_err(|e| format!("node is not installed or not on PATH ({e})"))?;
    if !out.status.success() {
        return Err(format!(
            "`node --version` failed: {}",
            tail(&String::from_utf8_lossy(&out.stderr))
        ));
    }
    let v = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let major = v
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .ok_or_else(|| format!("cannot read node's version from {v:?}"))?;
    Ok((v, major))
}

/// `npm ci` (or `npm install` without a lock file) if node_modules is missing.
fn install(dir: &Path) -> Result<(), String> {
    if dir.join("node_modules/miniflare/package.json").exists() {
        return Ok(());
    }
    let verb = if dir.join("package-lock.json").exists() {
        "ci"
    } else {
        "install"
    };
    eprintln!("  bench/miniflare has no node_modules: npm {verb}");
    let out = Command::new("npm")
        .args([verb, "--no-audit", "--no-fund"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("npm is not installed or not on PATH ({e})"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`npm {verb}` in bench/miniflare failed: {}",
            tail(&String::from_utf8_lossy(&out.stderr))
        ))
    }
}

fn miniflare_version(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("node_modules/miniflare/package.json"))
        .ok()
        .and_then(|s| {
            let i = s.find("\"version\"")?;
            let rest = &s[i + 9..];
            let start = rest.find('"')? + 1;
            let end = start + rest[start..].find('"')?;
            Some(rest[start..end].to_owned())
        })
        .unwrap_or_else(|| "?".into())
}

/// Signals the process group `pgid` (our node and the workerd it started).
fn signal_group(pgid: u32, signal: &str) {
    let _ = Command::new("kill")
        .args([signal, "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

fn group_alive(pgid: u32) -> bool {
    Command::new("kill")
        .args(["-0", "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Starts Miniflare, or says why it cannot run.
pub fn start(root: &Path) -> Result<Miniflare, String> {
    let (node, major) = node_version()?;
    if major < MIN_NODE {
        return Err(format!(
            "node {node} is too old: the pinned Miniflare needs node ≥ {MIN_NODE}"
        ));
    }
    let dir: PathBuf = root.join("bench/miniflare");
    install(&dir)?;
    let persist = tempfile::Builder::new()
        .prefix("wasmkeep-bench-miniflare-")
        .tempdir()
        .map_err(|e| format!("creating a temporary directory: {e}"))?;
    let log = persist.path().join("serve.log");
    let log_file = std::fs::File::create(&log).map_err(|e| format!("creating {}: {e}", log.display()))?;
    let mut child = Command::new("node")
        .arg("serve.mjs")
        .arg("--persist")
        .arg(persist.path().join("do"))
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(log_file)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("starting node serve.mjs: {e}"))?;
    let stdin = child.stdin.take();
    let Some(stdout) = child.stdout.take() else {
        return Err("node's stdout was not captured".into());
    };
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            // Once nobody listens, keep draining so that node never blocks on its output.
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let failed = |child: &mut Child, why: String| -> String {
        signal_group(child.id(), "-KILL");
        let _ = child.wait();
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        format!("{why}; its output: {}", tail(&log))
    };
    loop {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(line) => {
                if let Some(port) = line.strip_prefix("PORT ").and_then(|p| p.trim().parse().ok()) {
                    return Ok(Miniflare {
                        child,
                        stdin,
                        port,
                        node,
                        version: miniflare_version(&dir),
                        _persist: persist,
                    });
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Ok(Some(status)) = child.try_wait() {
                    return Err(failed(
                        &mut child,
                        format!("Miniflare exited before listening ({status})"),
                    ));
                }
                if Instant::now() > deadline {
                    return Err(failed(&mut child, "Miniflare did not listen within 60 s".into()));
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let _ = child.try_wait();
                return Err(failed(
                    &mut child,
                    "Miniflare closed its output before listening".into(),
                ));
            }
        }
    }
}

impl Miniflare {
    /// Stops the node process (closing its stdin lets serve.mjs dispose of
    /// Miniflare and workerd; signals to its process group if that does not
    /// end it). Says how it ended.
    pub fn stop(mut self) -> String {
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> String {
        let pid = self.child.id();
        drop(self.stdin.take());
        let wait = |child: &mut Child, secs: u64| -> bool {
            let until = Instant::now() + Duration::from_secs(secs);
            while Instant::now() < until {
                if let Ok(Some(_)) = child.try_wait() {
                    return true;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            false
        };
        let how = if wait(&mut self.child, 10) {
            "exited when its stdin closed"
        } else {
            signal_group(pid, "-TERM");
            if wait(&mut self.child, 5) {
                "stopped by SIGTERM"
            } else {
                signal_group(pid, "-KILL");
                let _ = self.child.wait();
                "killed (SIGKILL)"
            }
        };
        // workerd runs in the same process group: make sure nothing is left.
        if group_alive(pid) {
            signal_group(pid, "-TERM");
        }
        format!("node (pid {pid}) {how}")
    }
}

impl Drop for Miniflare {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.stop_inner();
        }
    }
}
