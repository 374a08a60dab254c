//! The host as every language's test harness sees it: one node with a
//! virtual clock and alarms that run when the test says so, its own data
//! directory (a temporary one unless given), and each socket the test opened
//! kept with what the actor sent it. The TypeScript (napi), Python (pyo3) and
//! C harnesses wrap this, so each of them only converts types.

mod chaos_applied;
mod clock;
mod cluster;
mod error;
mod events;
mod failure_explanation;
mod history;
mod inspect;

pub use chaos_applied::LOST_ANSWER_HEADER;
pub use clock::Advanced;
pub use error::{TestHostError, TestHostErrorKind, UnknownTestHostErrorKind};
pub use events::TestAnswer;
pub use failure_explanation::QUIET_VAR;
pub use history::{HistoryPosition, RestoreTo};
pub use inspect::sql_value_json;

use crate::chaos::{ChaosRecord, ChaosStep};
use chaos_applied::ChaosUnderWay;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use wasmkeep_host::clock::VirtualClock;
use wasmkeep_host::{
    Access, ActorInfo, ActorKey, CallFailure, ClassSpec, Cluster, FaultKind, HttpRequest, HttpResponse, LogLine,
    Outbound, QueryResult, Runtime, RuntimeConfig, SocketHandle, SocketMessage, SqlValue,
};

/// The most nodes a test host runs: each is a whole runtime with its threads.
pub const MOST_NODES: usize = 16;

/// Options of a [`TestHost`]; every field has a default.
#[derive(Debug, Clone, Default)]
pub struct TestHostOptions {
    /// The data directory; none: a fresh temporary one (in `/dev/shm` where
    /// there is one with 1 GiB free), removed when the host closes.
    pub data_dir: Option<PathBuf>,
    /// Where compiled components are cached; none: the one cache `serve` uses
    /// too (`$WASMKEEP_CACHE_DIR`, else the user's cache directory).
    pub cache_dir: Option<PathBuf>,
    /// An event's time limit; none: 5 s.
    pub event_timeout: Option<Duration>,
    /// Idle time before an actor hibernates; none: 30 s.
    pub idle_timeout: Option<Duration>,
    /// How many nodes: none or 1, a single node; 2 or more, a local cluster
    /// sharing a bucket (in the data directory) and the virtual clock, whose
    /// passes (operator deletes, app tombstones, idle expiry) run as the
    /// clock moves, at a real clock's cadence.
    pub nodes: Option<usize>,
    /// A single node keeps its actors' history (ADR 064), every state
    /// restorable: [`TestHost::history`], [`TestHost::restore`]. A cluster
    /// keeps it in its bucket whatever this says. Off by default: each
    /// write then also writes a file.
    pub history: bool,
}

impl TestHostOptions {
    /// The configuration each node of a test host starts from, on
    /// `data_dir`: the library's for tests (a virtual clock) with this cache,
    /// event time limit and idle time. The fuzz targets start their runtime
    /// from it too.
    pub fn node_config(&self, data_dir: &Path) -> RuntimeConfig {
        let mut config = RuntimeConfig::for_tests(data_dir);
        if let Some(c) = &self.cache_dir {
            config.cache_dir.clone_from(c);
        }
        if let Some(t) = self.event_timeout {
            config.event_timeout = t;
        }
        if let Some(t) = self.idle_timeout {
            config.idle_timeout = t;
        }
        config
    }
}

/// A test's host. Closing it (or dropping it) hibernates its actors and
/// removes its temporary data directory.
pub struct TestHost {
    /// Node 1 (the only one on a single node).
    rt: Option<Runtime>,
    /// Nodes 2 to N of a cluster.
    others: Vec<Runtime>,
    cluster: Option<Arc<Cluster>>,
    /// What it was started with, and the apps added, for [`TestHost::reset`].
    options: TestHostOptions,
    loaded: Mutex<Vec<Loaded>>,
    sockets: Mutex<HashMap<u64, SocketHandle>>,
    /// The seeded schedule applied before each event, between
    /// [`TestHost::start_chaos`] and [`TestHost::end_chaos`], with what
    /// explains each answer of 500 or more meanwhile.
    chaos: Mutex<Option<ChaosUnderWay>>,
    /// When (virtual ms) the cluster's control and expiry passes last ran
    /// ([`TestHost::advance_clock`] runs them).
    passes_ran_at: Mutex<(u64, u64)>,
    /// [`TestHost::close`] ran: a reset does not start it again (a host that
    /// only a failed reset stopped does start again).
    closed: bool,
    // Dropped after the runtime (field order): the data directory goes last.
    temp: Option<tempfile::TempDir>,
}

/// A started host: node 1, nodes 2 to N, the cluster, the temporary directory.
type Started = (Runtime, Vec<Runtime>, Option<Arc<Cluster>>, Option<tempfile::TempDir>);

/// The nodes of a host: node 1, nodes 2 to N, and their cluster (if more than one).
type Nodes = (Runtime, Vec<Runtime>, Option<Arc<Cluster>>);

/// What a [`TestHost`] loaded, in order, to load again at a reset.
enum Loaded {
    App { app: String, classes: Vec<ClassSpec> },
    Manifest(PathBuf),
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A fresh temporary data directory: in `/dev/shm` where there is one with
/// 1 GiB free (memory), else in the system's temporary directory. A test host syncs
/// what a node syncs (every durable write and delete), and on a busy disk
/// that made 1,000 chaos seeds take minutes; in memory the syncs cost
/// nothing and everything else behaves the same.
fn temp_data_dir() -> std::io::Result<tempfile::TempDir> {
    let builder = {
        let mut b = tempfile::Builder::new();
        b.prefix("wasmkeep-test-");
        b
    };
    let shm = Path::new("/dev/shm");
    // Only a roomy one: a container's is often 64 MiB, too small for a test
    // that writes much.
    let roomy = rustix::fs::statvfs(shm).is_ok_and(|v| v.f_bavail.saturating_mul(v.f_frsize) >= 1 << 30);
    if roomy && let Ok(t) = builder.tempdir_in(shm) {
        return Ok(t);
    }
    builder.tempdir()
}

/// Parses a class's access as manifests spell it.
///
/// # Errors
/// Not `open`, `existing` or `internal`.
pub fn parse_access(class: &str, access: &str) -> Result<Access, TestHostError> {
    access.parse().map_err(|_| TestHostError::UnknownAccess {
        class: class.to_owned(),
        access: access.to_owned(),
    })
}

impl TestHost {
    /// Starts a host.
    ///
    /// # Errors
    /// The data directory or the engine cannot be set up.
    pub fn new(options: TestHostOptions) -> Result<Self, TestHostError> {
        let (rt, others, cluster, temp) = Self::start(&options)?;
        Ok(Self {
            rt: Some(rt),
            others,
            cluster,
            options,
            loaded: Mutex::new(Vec::new()),
            sockets: Mutex::new(HashMap::new()),
            chaos: Mutex::new(None),
            passes_ran_at: Mutex::new((0, 0)),
            closed: false,
            temp,
        })
    }

    pub(super) fn start(options: &TestHostOptions) -> Result<Started, TestHostError> {
        let (data_dir, temp) = match &options.data_dir {
            Some(d) => (d.clone(), None),
            None => {
                let t = temp_data_dir().map_err(TestHostError::TempDir)?;
                (t.path().to_owned(), Some(t))
            }
        };
        let (rt, others, cluster) = Self::start_in(options, &data_dir, None)?;
        Ok((rt, others, cluster, temp))
    }

    /// Node 1, nodes 2 to N and the cluster, on `data_dir`; in an existing
    /// `cluster` (a restart) rather than a new one.
    pub(super) fn start_in(
        options: &TestHostOptions,
        data_dir: &Path,
        cluster: Option<Arc<Cluster>>,
    ) -> Result<Nodes, TestHostError> {
        let options = options.clone();
        let config_for = |dir: &Path| options.node_config(dir);
        let nodes = options.nodes.unwrap_or(1);
        if !(1..=MOST_NODES).contains(&nodes) {
            return Err(TestHostError::BadNodes(nodes));
        }
        if nodes == 1 {
            let mut config = config_for(data_dir);
            if options.history {
                config.history = Some(wasmkeep_host::HistoryConfig {
                    dir: data_dir.join("history"),
                    every: Duration::ZERO,
                });
            }
            // The index a node keeps on disk, so that a restart of the host
            // finds the alarms of actors it has not opened since.
            config.memory_alarm_index = false;
            return Ok((Runtime::new(config)?, Vec::new(), None));
        }
        let cluster = cluster
            .unwrap_or_else(|| Cluster::over_local_dir(data_dir.join("bucket"), Arc::new(VirtualClock::default())));
        let mut runtimes = cluster.start_nodes(nodes, |i| {
            let mut config = config_for(&data_dir.join(format!("node-{i}")));
            // No pass thread: the test host runs the passes inside
            // advance_clock, so that what they write to the bucket (and
            // the faults they meet) comes at the same point of every run.
            config.passes_on_virtual_clock = false;
            config
        })?;
        let first = runtimes.remove(0);
        Ok((first, runtimes, Some(cluster)))
    }

    /// Every node, node 1 first.
    pub(super) fn all_nodes(&self) -> Result<impl Iterator<Item = &Runtime>, TestHostError> {
        Ok(std::iter::once(self.runtime()?).chain(self.others.iter()))
    }

    /// Node `n` (1-based) of a cluster; node 1 is [`TestHost::runtime`].
    ///
    /// # Errors
    /// No such node (a single node has only node 1), or the host is closed.
    pub fn node(&self, n: usize) -> Result<&Runtime, TestHostError> {
        match n {
            1 => self.runtime(),
            n => self.others.get(n.wrapping_sub(2)).ok_or(TestHostError::NoSuchNode {
                node: n,
                nodes: self.others.len() + 1,
            }),
        }
    }

    /// How many nodes the host runs.
    pub fn node_count(&self) -> usize {
        self.others.len() + 1
    }

    /// Starts over, for the next test: every actor, socket, alarm, fault and
    /// log line is gone, the clock is back at its start, and the same apps
    /// are loaded again (their components are compiled already). Sockets are
    /// dropped without close events. A data directory given in the options
    /// is emptied; a temporary one is replaced.
    ///
    /// # Errors
    /// [`TestHostError::Closed`] after [`TestHost::close`]; the data directory
    /// cannot be emptied, or the host cannot start again.
    pub fn reset(&mut self) -> Result<(), TestHostError> {
        if self.closed {
            return Err(TestHostError::Closed);
        }
        lock(&self.sockets).clear();
        *lock(&self.chaos) = None;
        *lock(&self.passes_ran_at) = (0, 0);
        if let Some(rt) = self.rt.take() {
            rt.shutdown();
        }
        for rt in self.others.drain(..) {
            rt.shutdown();
        }
        self.cluster = None;
        self.temp = None;
        if let Some(dir) = &self.options.data_dir {
            match std::fs::remove_dir_all(dir) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(TestHostError::TempDir(e)),
                _ => {}
            }
        }
        let (rt, others, cluster, temp) = Self::start(&self.options)?;
        self.load_apps(std::iter::once(&rt).chain(others.iter()))?;
        self.rt = Some(rt);
        self.others = others;
        self.cluster = cluster;
        self.temp = temp;
        Ok(())
    }

    /// Restarts the whole host, as its process would stop and start again on
    /// the same data: every node stops as a process does (its open sockets
    /// closed with 1001 "going away" and forgotten here, each resident actor
    /// released and its open transaction rolled back), then starts again on
    /// the same data directory (and a cluster's bucket), at the same virtual
    /// time, with the same apps loaded. Alarms stay indexed (a single node's
    /// index is a file in the data directory; a cluster's is the cluster's),
    /// and a node that was cut off is live again. Chaos, if running, goes on.
    ///
    /// # Errors
    /// [`TestHostError::Closed`]; a node cannot start again.
    pub fn restart_host(&mut self) -> Result<(), TestHostError> {
        if self.closed {
            return Err(TestHostError::Closed);
        }
        let now = self.now_ms()?;
        let data_dir = self.data_dir()?.to_owned();
        lock(&self.sockets).clear();
        if let Some(rt) = self.rt.take() {
            rt.shutdown();
        }
        for rt in self.others.drain(..) {
            rt.shutdown();
        }
        let (rt, others, cluster) = Self::start_in(&self.options, &data_dir, self.cluster.take())?;
        if cluster.is_none() {
            // A single node's clock starts again at its epoch: move it to where it was.
            let started = rt.dev().now_ms();
            if now > started {
                rt.dev().advance_clock(now - started)?;
            }
        }
        self.load_apps(std::iter::once(&rt).chain(others.iter()))?;
        self.rt = Some(rt);
        self.others = others;
        self.cluster = cluster;
        Ok(())
    }

    /// Loads what this host loaded (apps and manifests, in order) into `nodes`.
    pub(super) fn load_apps<'a>(&self, nodes: impl Iterator<Item = &'a Runtime>) -> Result<(), TestHostError> {
        for node in nodes {
            for loaded in lock(&self.loaded).iter() {
                match loaded {
                    Loaded::App { app, classes } => node.add_app(app, classes)?,
                    Loaded::Manifest(path) => {
                        node.load_manifest(path)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Restarts one actor as a crash and recovery would ([`wasmkeep_host::DevControls::restart_actor`]).
    ///
    /// # Errors
    /// The host is closed.
    pub fn restart(&self, key: &ActorKey) -> Result<(), TestHostError> {
        // In a cluster only its holder has it resident; the others do nothing.
        for rt in self.all_nodes()? {
            rt.dev().restart_actor(key);
        }
        Ok(())
    }

    /// The runtime, for what this façade does not cover.
    ///
    /// # Errors
    /// The host is closed.
    pub fn runtime(&self) -> Result<&Runtime, TestHostError> {
        self.rt.as_ref().ok_or(TestHostError::Closed)
    }

    /// The data directory.
    ///
    /// # Errors
    /// The host is closed.
    pub fn data_dir(&self) -> Result<&Path, TestHostError> {
        Ok(&self.runtime()?.config().data_dir)
    }

    /// Adds (or replaces) an app with its classes, compiling their components.
    ///
    /// # Errors
    /// A bad name, or a component that cannot be read, compiled or linked.
    pub fn add_app(&self, app: &str, classes: &[ClassSpec]) -> Result<(), TestHostError> {
        for rt in self.all_nodes()? {
            rt.add_app(app, classes)?;
        }
        lock(&self.loaded).push(Loaded::App {
            app: app.to_owned(),
            classes: classes.to_vec(),
        });
        Ok(())
    }

    /// Loads an app manifest; returns the app's name.
    ///
    /// # Errors
    /// As [`Runtime::load_manifest`].
    pub fn load_manifest(&self, path: &Path) -> Result<String, TestHostError> {
        let mut app = String::new();
        for rt in self.all_nodes()? {
            app = rt.load_manifest(path)?.app;
        }
        lock(&self.loaded).push(Loaded::Manifest(path.to_path_buf()));
        Ok(app)
    }

    /// Hibernates every resident actor (on every node of a cluster): node by
    /// node, and on each one actor after another in the order of their keys,
    /// so that what their releases write meets the armed faults in the same
    /// order every time (a seed replays exactly, ADR 080).
    ///
    /// # Errors
    /// The host is closed.
    pub fn hibernate_all(&self) -> Result<(), TestHostError> {
        for rt in self.all_nodes()? {
            rt.dev().hibernate_all_in_turn();
        }
        Ok(())
    }

    /// Stops the host: its actors hibernate, its sockets are dropped, its
    /// temporary data directory is removed. Closing again does nothing.
    pub fn close(&mut self) {
        self.closed = true;
        if let Some(rt) = self.rt.take() {
            rt.dev().hibernate_all();
        }
        for rt in self.others.drain(..) {
            rt.dev().hibernate_all();
        }
        self.cluster = None;
        lock(&self.sockets).clear();
        self.temp = None;
    }
}

impl Drop for TestHost {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_host_is_not_started_again_by_a_reset() {
        let mut host = TestHost::new(TestHostOptions::default()).expect("a host");
        host.reset().expect("an open host resets");
        host.close();
        assert!(
            matches!(host.reset(), Err(TestHostError::Closed)),
            "reset after close is refused (close would then not stop what it started)"
        );
        assert!(matches!(host.now_ms(), Err(TestHostError::Closed)), "still closed");
    }
}
