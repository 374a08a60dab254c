//! A `wasmkeep-shim serve` child process serving the Rust counter and the
//! Rust conformance testee, and what
//! the kernel says about its memory.

use std::io::BufRead as _;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context as _, Result};

use crate::Target;

/// The serving host; ended when dropped (it is this process's child).
pub struct Served {
    child: Child,
    pub addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Served {
    /// Starts `serve` on a free port with a fresh data directory.
    pub async fn start(target: &Target) -> Result<Self> {
        let dir = tempfile::tempdir()?;
        let counter = std::fs::canonicalize(&target.counter)
            .with_context(|| format!("{}: build it with `cargo xtask guests`", target.counter.display()))?;
        let testee = std::fs::canonicalize(&target.testee)
            .with_context(|| format!("{}: build it with `cargo xtask guests`", target.testee.display()))?;
        let manifest = dir.path().join("wasmkeep.toml");
        std::fs::write(
            &manifest,
            format!(
                "app = \"load/app\"\n[classes.counter]\ncomponent = {:?}\naccess = \"open\"\n\
                 [classes.testee]\ncomponent = {:?}\naccess = \"open\"\n",
                counter.display().to_string(),
                testee.display().to_string()
            ),
        )?;
        let shim = std::fs::canonicalize(&target.shim).with_context(|| {
            format!(
                "{}: build it with `cargo build --release -p wasmkeep-shim`",
                target.shim.display()
            )
        })?;
        let mut serve_args: Vec<String> = vec![
            "serve".into(),
            "--manifest".into(),
            manifest.display().to_string(),
            "--listen".into(),
            "127.0.0.1:0".into(),
            "--data-dir".into(),
            dir.path().join("data").display().to_string(),
        ];
        serve_args.extend(target.serve_args.iter().cloned());
        let mut command = match target.nofile {
            Some(n) => {
                let mut c = Command::new("sh");
                c.arg("-c")
                    .arg(format!("ulimit -n {n} && exec \"$0\" \"$@\""))
                    .arg(&shim)
                    .args(&serve_args);
                c
            }
            None => {
                let mut c = Command::new(&shim);
                c.args(&serve_args);
                c
            }
        };
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting serve")?;
        let stdout = child.stdout.take().context("serve's stdout")?;
        let (tx, rx) = std::sync::mpsc::channel();
        // Reads everything it prints, so that it never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix("listening on http://") {
                    let _ = tx.send(rest.trim().parse::<SocketAddr>());
                }
            }
        });
        let addr = match rx.recv_timeout(Duration::from_secs(120)) {
            Ok(addr) => addr.context("the listening address")?,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                anyhow::bail!("serve did not print `listening on` within 120 s");
            }
        };
        Ok(Self { child, addr, _dir: dir })
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    fn status_kib(&self, field: &str) -> Result<u64> {
        let pid = self.child.id();
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .with_context(|| format!("no {field} in /proc/{pid}/status"))
    }

    /// Resident memory now (MiB).
    pub fn rss_mib(&self) -> Result<u64> {
        Ok(self.status_kib("VmRSS:")? / 1024)
    }

    /// Peak resident memory so far (MiB).
    pub fn peak_rss_mib(&self) -> Result<u64> {
        Ok(self.status_kib("VmHWM:")? / 1024)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
