//! `wasmkeep-shim serve` as a process, the one way a test starts one
//! (docs/adr/084-one-step-interpreter-and-one-spawner-of-served-hosts.md):
//! [`Serve`] says how (the binary, the manifest, the data directory, a
//! cluster node's id, bucket and lease, TLS, where its log goes), starts it
//! on a free port of 127.0.0.1 and reads the base URL off its first line;
//! [`NodeProcess`] is a node of a cluster that keeps its log and is killed,
//! by its own id, when dropped. The conformance runner's node-process mode
//! and every shim test that starts `serve` start theirs here: a host that
//! serves, a process of several nodes ([`Serve::spawn_nodes`]), and one
//! that must refuse to start ([`ServeError::NotStarted`] says how it ended
//! and what it wrote).

use std::ffi::OsString;
use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long [`Serve::spawn`] waits for the lines that say it listens,
/// unless [`Serve::start_timeout`] says otherwise: a debug build compiling
/// its components on a busy machine takes seconds, not minutes.
pub const START_TIMEOUT: Duration = Duration::from_secs(120);

/// Why a served host did not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The file its log was to go to ([`Serve::log_to`]) could not be made.
    #[error("making the log file {} for {}", path.display(), shim.display())]
    LogFile {
        /// The binary.
        shim: PathBuf,
        /// The log file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The binary could not be run.
    #[error("running {}", shim.display())]
    Spawn {
        /// The binary.
        shim: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// Its output could not be read (its first lines, or what it wrote
    /// after it was stopped).
    #[error("reading the output of {}", shim.display())]
    Output {
        /// The binary.
        shim: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// It said nothing that ended its lines within the time
    /// ([`Serve::start_timeout`]): it was killed, by its id.
    #[error(
        "{} did not say it listens within {} ms (killed){}; the lines it did say: {said:?}{}",
        shim.display(),
        waited.as_millis(),
        its_log(log.as_deref()),
        its_stderr(stderr)
    )]
    Silent {
        /// The binary.
        shim: PathBuf,
        /// How long it was given.
        waited: Duration,
        /// The `listening on` lines it did write (fewer than its nodes).
        said: Vec<String>,
        /// The file its stderr went to ([`Serve::log_to`]), to read.
        log: Option<PathBuf>,
        /// What it wrote to stderr, when that was a pipe (empty otherwise).
        stderr: String,
    },
    /// Its first line was not `listening on http://…`.
    #[error("serve did not start ({status}): {line:?}{}{}", its_log(log.as_deref()), its_stderr(stderr))]
    NotStarted {
        /// How it ended (killed if it still ran).
        status: ExitStatus,
        /// The line it wrote instead.
        line: String,
        /// The file its stderr went to ([`Serve::log_to`]), to read.
        log: Option<PathBuf>,
        /// What it wrote to stderr, when that was a pipe (empty otherwise).
        stderr: String,
    },
}

fn its_log(log: Option<&Path>) -> String {
    log.map(|path| format!("; its log: {}", path.display()))
        .unwrap_or_default()
}

fn its_stderr(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!("; its stderr:\n{stderr}")
    }
}

/// Where a served host's stderr goes.
enum Log {
    /// A pipe: left to the caller by [`Serve::spawn`], read into memory by
    /// [`Serve::start_node`].
    Piped,
    /// A file, kept for a failure's message.
    File(PathBuf),
    /// Nowhere: `/dev/null`.
    Null,
}

/// How to start `wasmkeep-shim serve`: `serve --listen 127.0.0.1:0
/// <args> --manifest <manifest> --data-dir <data dir>`.
pub struct Serve {
    shim: PathBuf,
    manifest: PathBuf,
    data_dir: PathBuf,
    args: Vec<OsString>,
    envs: Vec<(OsString, OsString)>,
    log: Log,
    start_timeout: Duration,
}

impl Serve {
    /// `shim serve` of `manifest` on the data directory `data_dir`.
    pub fn new(shim: impl Into<PathBuf>, manifest: impl Into<PathBuf>, data_dir: impl Into<PathBuf>) -> Self {
        Self {
            shim: shim.into(),
            manifest: manifest.into(),
            data_dir: data_dir.into(),
            args: Vec::new(),
            envs: Vec::new(),
            log: Log::Piped,
            start_timeout: START_TIMEOUT,
        }
    }

    /// One more argument to `serve`.
    #[must_use]
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// More arguments to `serve`.
    #[must_use]
    pub fn args<S: Into<OsString>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// A variable of its environment.
    #[must_use]
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.envs.push((key.into(), value.into()));
        self
    }

    /// Variables of its environment.
    #[must_use]
    pub fn envs<K: Into<OsString>, V: Into<OsString>>(mut self, vars: impl IntoIterator<Item = (K, V)>) -> Self {
        self.envs.extend(vars.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// A node of a cluster: `--mode cluster --node-id <id> --bucket <bucket>
    /// --lease-ms <lease_ms>`.
    #[must_use]
    pub fn cluster_node(self, id: &str, bucket: &str, lease_ms: u64) -> Self {
        self.args(["--mode", "cluster", "--node-id", id, "--bucket", bucket])
            .args(["--lease-ms".to_owned(), lease_ms.to_string()])
    }

    /// Mutual TLS between the nodes (ADR 074), with the files `wasmkeep-shim
    /// cluster certs --out <certs>` wrote: `<id>.crt`, `<id>.key`, `ca.crt`.
    #[must_use]
    pub fn tls(self, certs: &Path, id: &str) -> Self {
        self.arg("--tls-cert")
            .arg(certs.join(format!("{id}.crt")))
            .arg("--tls-key")
            .arg(certs.join(format!("{id}.key")))
            .arg("--tls-ca")
            .arg(certs.join("ca.crt"))
    }

    /// Its stderr into the file `path` instead of a pipe.
    #[must_use]
    pub fn log_to(mut self, path: impl Into<PathBuf>) -> Self {
        self.log = Log::File(path.into());
        self
    }

    /// How long [`Serve::spawn`] waits for it to say it listens
    /// ([`START_TIMEOUT`] unless set).
    #[must_use]
    pub fn start_timeout(mut self, timeout: Duration) -> Self {
        self.start_timeout = timeout;
        self
    }

    /// Its stderr to nowhere (a test that reads only answers).
    #[must_use]
    pub fn quiet(mut self) -> Self {
        self.log = Log::Null;
        self
    }

    /// Starts it and waits for its first line: the process (its stderr a
    /// pipe unless [`Serve::log_to`] or [`Serve::quiet`] said otherwise) and
    /// its base URL, `http://127.0.0.1:PORT`. The caller ends the process,
    /// by its id.
    ///
    /// # Errors
    /// [`ServeError`]: its log file could not be made
    /// ([`ServeError::LogFile`]), it could not be run
    /// ([`ServeError::Spawn`]) or its output read ([`ServeError::Output`]),
    /// it said nothing in time ([`ServeError::Silent`], after
    /// [`Serve::start_timeout`]), or it said something else or exited
    /// ([`ServeError::NotStarted`]).
    pub fn spawn(self) -> Result<(Child, String), ServeError> {
        let (child, mut bases) = self.spawn_nodes(1)?;
        Ok((child, bases.remove(0)))
    }

    /// [`Serve::spawn`] of a process that serves `nodes` nodes (`--mode
    /// cluster --nodes <nodes>` among its arguments): it waits for their
    /// `nodes` lines (at least one), and answers their base URLs in order.
    ///
    /// # Errors
    /// As [`Serve::spawn`]: [`ServeError::LogFile`], [`ServeError::Spawn`]
    /// or [`ServeError::Output`] when the system refused;
    /// [`ServeError::Silent`] when the lines did not come in time;
    /// [`ServeError::NotStarted`] when a line is not `listening on` (the one
    /// the error names) or its output closed first.
    pub fn spawn_nodes(self, nodes: usize) -> Result<(Child, Vec<String>), ServeError> {
        let nodes = nodes.max(1);
        let log_file = match &self.log {
            Log::File(path) => Some(path.clone()),
            Log::Piped | Log::Null => None,
        };
        let stderr = match &log_file {
            None if matches!(self.log, Log::Null) => Stdio::null(),
            None => Stdio::piped(),
            Some(path) => Stdio::from(std::fs::File::create(path).map_err(|source| ServeError::LogFile {
                shim: self.shim.clone(),
                path: path.clone(),
                source,
            })?),
        };
        let mut child = Command::new(&self.shim)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(&self.args)
            .arg("--manifest")
            .arg(&self.manifest)
            .arg("--data-dir")
            .arg(&self.data_dir)
            .envs(self.envs.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|source| ServeError::Spawn {
                shim: self.shim.clone(),
                source,
            })?;
        let output = |source| ServeError::Output {
            shim: self.shim.clone(),
            source,
        };
        let lines = first_lines(child.stdout.take(), nodes);
        let deadline = Instant::now() + self.start_timeout;
        let mut bases = Vec::new();
        let mut line = String::new();
        let mut read = Ok(());
        let mut timed_out = false;
        while bases.len() < nodes {
            match lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(Ok(next)) => line = next,
                Ok(Err(e)) => {
                    read = Err(e);
                    break;
                }
                Err(RecvTimeoutError::Timeout) => {
                    timed_out = true;
                    break;
                }
                // Its output closed (or there was none).
                Err(RecvTimeoutError::Disconnected) => {
                    line.clear();
                    break;
                }
            }
            // "listening on http://127.0.0.1:PORT", with " (n1)" for a node.
            match line
                .strip_prefix("listening on ")
                .and_then(|l| l.split_whitespace().next())
            {
                Some(base) => bases.push(base.to_owned()),
                None => break,
            }
        }
        if read.is_ok() && bases.len() == nodes {
            return Ok((child, bases));
        }
        if line.is_empty() && !timed_out {
            // Its output closed: it is exiting (a refusal); its own status,
            // not the kill's, when it ends in time.
            let until = Instant::now() + Duration::from_secs(10);
            while matches!(child.try_wait(), Ok(None)) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        // Only the process started here, by its id.
        let _ = child.kill();
        let out = child.wait_with_output().map_err(output)?;
        read.map_err(output)?;
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        if timed_out {
            return Err(ServeError::Silent {
                shim: self.shim,
                waited: self.start_timeout,
                said: bases,
                log: log_file,
                stderr,
            });
        }
        Err(ServeError::NotStarted {
            status: out.status,
            line,
            log: log_file,
            stderr,
        })
    }

    /// Starts it as the node `id` of a cluster (see [`Serve::cluster_node`]),
    /// its log kept: in the file [`Serve::log_to`] named, or read into memory
    /// as it comes (a pipe nobody reads fills, and then blocks the node).
    ///
    /// # Errors
    /// As [`Serve::spawn`].
    pub fn start_node(self, id: &str) -> Result<NodeProcess, ServeError> {
        let file = match &self.log {
            Log::File(path) => Some(path.clone()),
            Log::Piped | Log::Null => None,
        };
        let (mut child, base) = self.spawn()?;
        let log = match (file, child.stderr.take()) {
            (Some(path), _) => NodeLog::File(path),
            (None, pipe) => {
                let text = Arc::new(Mutex::new(String::new()));
                let sink = text.clone();
                let reader = pipe.map(|pipe| {
                    std::thread::spawn(move || {
                        for line in std::io::BufReader::new(pipe).lines().map_while(Result::ok) {
                            if let Ok(mut s) = sink.lock() {
                                s.push_str(&line);
                                s.push('\n');
                            }
                        }
                    })
                });
                NodeLog::Memory { text, reader }
            }
        };
        Ok(NodeProcess {
            id: id.to_owned(),
            child,
            base,
            log,
        })
    }
}

/// The first lines of `stdout`, read on a thread of their own so that a
/// process that never writes one cannot hold up its caller: up to `nodes`
/// lines, stopping after the first that is not `listening on` or at the
/// end; the pipe is closed after them, as it was when they were read here.
fn first_lines(stdout: Option<ChildStdout>, nodes: usize) -> Receiver<std::io::Result<String>> {
    let (send, lines) = mpsc::channel();
    if let Some(stdout) = stdout {
        // The thread ends with the pipe: at the line it stops at, or when the
        // process, killed after a timeout, closes it.
        std::thread::spawn(move || {
            let mut stdout = std::io::BufReader::new(stdout);
            for _ in 0..nodes {
                let mut line = String::new();
                match stdout.read_line(&mut line) {
                    Ok(0) => return,
                    Ok(_) => {
                        let listens = line.starts_with("listening on ");
                        if send.send(Ok(line)).is_err() || !listens {
                            return;
                        }
                    }
                    Err(e) => {
                        let _ = send.send(Err(e));
                        return;
                    }
                }
            }
        });
    }
    lines
}

/// Where a node process's log is kept.
enum NodeLog {
    Memory {
        text: Arc<Mutex<String>>,
        reader: Option<JoinHandle<()>>,
    },
    File(PathBuf),
}

/// One `wasmkeep-shim serve --node-id` process; killed (by its id) when
/// dropped, as a crashed node would be.
pub struct NodeProcess {
    /// Its node id.
    pub id: String,
    /// The process.
    pub child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    log: NodeLog,
}

impl NodeProcess {
    /// What it wrote to stderr so far.
    pub fn log(&self) -> String {
        match &self.log {
            NodeLog::Memory { text, .. } => text.lock().map(|s| s.clone()).unwrap_or_default(),
            NodeLog::File(path) => std::fs::read_to_string(path).unwrap_or_default(),
        }
    }

    /// Kills it (by its id) and waits for it: everything it wrote to stderr.
    pub fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let NodeLog::Memory { reader, .. } = &mut self.log
            && let Some(reader) = reader.take()
        {
            let _ = reader.join();
        }
        self.log()
    }
}

impl Drop for NodeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::{Serve, ServeError};

    /// `echo` says its arguments instead of `listening on`: the error names
    /// the line, and the line shows the arguments in order.
    #[test]
    fn a_binary_that_does_not_say_it_listens_did_not_start() {
        let dir = tempfile::tempdir().expect("tempdir");
        let err = Serve::new("echo", "m.toml", "data")
            .cluster_node("n1", "file:///b", 2000)
            .log_to(dir.path().join("n1.log"))
            .start_node("n1")
            .err()
            .expect("echo does not listen");
        let ServeError::NotStarted { line, stderr, log, .. } = &err else {
            panic!("not NotStarted: {err}");
        };
        assert_eq!(
            line.trim_end(),
            "serve --listen 127.0.0.1:0 --mode cluster --node-id n1 --bucket file:///b --lease-ms 2000 \
             --manifest m.toml --data-dir data"
        );
        assert!(stderr.is_empty(), "stderr went to the file");
        assert_eq!(
            log.as_deref(),
            Some(dir.path().join("n1.log").as_path()),
            "the file to read"
        );
        assert!(err.to_string().starts_with("serve did not start ("), "{err}");
        assert!(err.to_string().contains("n1.log"), "the message names the log: {err}");
    }

    /// A binary that never writes a line: it is given the start timeout,
    /// then killed, and the error says so by its kind, with the log to read
    /// (before, the test waited for the process's end, forever for a host).
    #[test]
    fn a_binary_that_says_nothing_times_out() {
        let dir = tempfile::tempdir().expect("tempdir");
        let shim = script(dir.path(), "silent", "echo 'compiling' >&2\nexec sleep 30");
        let log = dir.path().join("silent.log");
        let started = std::time::Instant::now();
        let err = spawn_nodes(
            || {
                Serve::new(&shim, "m.toml", "data")
                    .log_to(&log)
                    .start_timeout(std::time::Duration::from_millis(300))
            },
            1,
        )
        .expect_err("it never listens");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
        let ServeError::Silent {
            waited,
            said,
            log: named,
            ..
        } = &err
        else {
            panic!("not Silent: {err}");
        };
        assert_eq!((waited.as_millis(), said.len()), (300, 0));
        assert_eq!(named.as_deref(), Some(log.as_path()));
        assert!(err.to_string().contains("silent.log"), "{err}");
    }

    /// A log file that cannot be made is a kind of its own, naming it.
    #[test]
    fn a_log_file_that_cannot_be_made_is_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("no-such-dir").join("n1.log");
        let err = Serve::new("echo", "m.toml", "data")
            .log_to(&path)
            .spawn()
            .expect_err("no log file");
        let ServeError::LogFile { path: named, .. } = &err else {
            panic!("not LogFile: {err}");
        };
        assert_eq!(named, &path);
    }

    /// A script in `dir` named `name` that runs `body` (the arguments
    /// `serve --listen …` are its own, unread).
    fn script(dir: &std::path::Path, name: &str, body: &str) -> std::path::PathBuf {
        use std::os::unix::fs::PermissionsExt as _;
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("script");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path
    }

    /// `Serve::spawn` of `serve`, tried again while the script is still
    /// being written by another thread's fork (ETXTBSY).
    fn spawn_nodes(serve: impl Fn() -> Serve, nodes: usize) -> Result<(std::process::Child, Vec<String>), ServeError> {
        for _ in 0..50 {
            match serve().spawn_nodes(nodes) {
                Err(ServeError::Spawn { source, .. }) if source.raw_os_error() == Some(26) => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                other => return other,
            }
        }
        serve().spawn_nodes(nodes)
    }

    /// A process of two nodes says two lines: both base URLs, in order.
    #[test]
    fn a_process_of_two_nodes_answers_both_bases() {
        let dir = tempfile::tempdir().expect("tempdir");
        let shim = script(
            dir.path(),
            "two",
            "echo 'listening on http://127.0.0.1:1 (n1)'\necho 'listening on http://127.0.0.1:2 (n2)'\nexec sleep 30",
        );
        let (mut child, bases) = spawn_nodes(|| Serve::new(&shim, "m.toml", "data").quiet(), 2).expect("started");
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(bases, ["http://127.0.0.1:1", "http://127.0.0.1:2"]);
    }

    /// A refusal: its own exit status and what it wrote to stderr; with
    /// `quiet`, nothing of stderr.
    #[test]
    fn a_refusal_keeps_its_exit_status_and_stderr() {
        let dir = tempfile::tempdir().expect("tempdir");
        let shim = script(dir.path(), "refuses", "echo 'no such manifest' >&2\nexit 3");
        for (quiet, said) in [(false, "no such manifest\n"), (true, "")] {
            let err = spawn_nodes(
                || {
                    let serve = Serve::new(&shim, "m.toml", "data");
                    if quiet { serve.quiet() } else { serve }
                },
                1,
            )
            .expect_err("refused");
            let ServeError::NotStarted {
                status, line, stderr, ..
            } = &err
            else {
                panic!("not NotStarted: {err}");
            };
            assert_eq!((status.code(), line.as_str(), stderr.as_str()), (Some(3), "", said));
        }
    }

    /// One node of two that does not say it listens: the line it wrote.
    #[test]
    fn a_second_node_that_does_not_listen_is_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let shim = script(
            dir.path(),
            "one",
            "echo 'listening on http://127.0.0.1:1 (n1)'\necho 'n2 failed'\nexec sleep 30",
        );
        let err = spawn_nodes(|| Serve::new(&shim, "m.toml", "data"), 2).expect_err("one node only");
        let ServeError::NotStarted { line, .. } = &err else {
            panic!("not NotStarted: {err}");
        };
        assert_eq!(line, "n2 failed\n");
    }

    #[test]
    fn a_binary_that_is_not_there_is_named() {
        let err = Serve::new("/no/such/wasmkeep-shim", "m.toml", "data")
            .spawn()
            .expect_err("no binary");
        assert!(matches!(err, ServeError::Spawn { .. }), "{err}");
        assert_eq!(err.to_string(), "running /no/such/wasmkeep-shim");
    }
}
