//! The host as every language's test harness sees it: one node with a
//! virtual clock and alarms that run when the test says so, its own data
//! directory (a temporary one unless given), and each socket the test opened
//! kept with what the actor sent it. The TypeScript (napi), Python (pyo3) and
//! C harnesses wrap this, so each of them only converts types.

use crate::bucket::LocalDirBucket;
use crate::clock::VirtualClock;
use crate::cluster::Cluster;
use crate::test_chaos::{ChaosRecord, ChaosStep, Schedule};
use crate::{
    Access, ActorInfo, ActorKey, CallFailure, ClassSpec, FaultKind, HttpRequest, HttpResponse, LogLine, Outbound,
    QueryResult, Runtime, RuntimeConfig, RuntimeError, SocketHandle, SocketMessage, SqlValue,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

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
}

/// Why a harness operation failed.
#[derive(Debug, thiserror::Error)]
pub enum TestHostError {
    /// The host was closed.
    #[error("the host is closed: make a new one")]
    Closed,
    /// The runtime refused or failed.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// A fault name that is not one.
    #[error("unknown fault {0:?} (known: {known})", known = FaultKind::ALL.map(FaultKind::name).join(", "))]
    UnknownFault(String),
    /// An access that is not one.
    #[error("class {class}: access {access:?} is not open, existing or internal")]
    UnknownAccess {
        /// The class.
        class: String,
        /// What was given.
        access: String,
    },
    /// A socket this host did not open.
    #[error("no socket {0} was opened by this host")]
    NoSuchSocket(u64),
    /// A node the host does not run.
    #[error("no node {node}: the host runs {nodes} (nodes are numbered from 1)")]
    NoSuchNode {
        /// The node asked for.
        node: usize,
        /// How many there are.
        nodes: usize,
    },
    /// A node count a test host does not run.
    #[error("nodes = {0}: a test host runs 1 to {MOST_NODES} nodes (1 is a single node, 2 or more a local cluster)")]
    BadNodes(usize),
    /// A cluster verb on a single node.
    #[error("this needs a cluster: start the host with nodes = 2 or more")]
    NeedsCluster,
    /// The cluster's bucket refused or failed.
    #[error("{0}")]
    Cluster(String),
    /// The temporary data directory could not be made.
    #[error("creating a temporary data directory: {0}")]
    TempDir(#[source] std::io::Error),
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
    /// [`TestHost::start_chaos`] and [`TestHost::end_chaos`].
    chaos: Mutex<Option<Schedule>>,
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

/// What the client is told when chaos loses the answer of an event that ran.
const LOST_ANSWER: &str = "the answer was lost on the way (chaos: the event ran and kept its writes); retry";

/// The header of an answer chaos lost after the event ran (`ChaosStep::LoseAnswer`).
pub const LOST_ANSWER_HEADER: (&str, &str) = ("wasmkeep-chaos", "lost-answer");

/// Where an event goes, and whether chaos loses its answer.
struct Delivery {
    node: usize,
    answer_lost: bool,
}

impl Delivery {
    /// The answer the client sees: the real one, or a 503 when it was lost
    /// (marked with the header [`LOST_ANSWER_HEADER`], so a test can tell it
    /// from the actor's own 503; a real client cannot).
    fn answer(&self, real: HttpResponse) -> HttpResponse {
        if self.answer_lost {
            let mut lost = HttpResponse::host_text(503, LOST_ANSWER.to_owned());
            lost.headers
                .push((LOST_ANSWER_HEADER.0.into(), LOST_ANSWER_HEADER.1.into()));
            lost
        } else {
            real
        }
    }
}

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
    match access {
        "open" => Ok(Access::Open),
        "existing" => Ok(Access::Existing),
        "internal" => Ok(Access::Internal),
        other => Err(TestHostError::UnknownAccess {
            class: class.to_owned(),
            access: other.to_owned(),
        }),
    }
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

    fn start(options: &TestHostOptions) -> Result<Started, TestHostError> {
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
    fn start_in(
        options: &TestHostOptions,
        data_dir: &Path,
        cluster: Option<Arc<Cluster>>,
    ) -> Result<Nodes, TestHostError> {
        let options = options.clone();
        let config_for = |dir: &Path| {
            let mut config = RuntimeConfig::for_tests(dir);
            if let Some(c) = &options.cache_dir {
                config.cache_dir.clone_from(c);
            }
            if let Some(t) = options.event_timeout {
                config.event_timeout = t;
            }
            if let Some(t) = options.idle_timeout {
                config.idle_timeout = t;
            }
            config
        };
        let nodes = options.nodes.unwrap_or(1);
        if !(1..=MOST_NODES).contains(&nodes) {
            return Err(TestHostError::BadNodes(nodes));
        }
        if nodes == 1 {
            let mut config = config_for(data_dir);
            // The index a node keeps on disk, so that a restart of the host
            // finds the alarms of actors it has not opened since.
            config.memory_alarm_index = false;
            return Ok((Runtime::new(config)?, Vec::new(), None));
        }
        let cluster = cluster.unwrap_or_else(|| {
            let clock = Arc::new(VirtualClock::default());
            let bucket = Arc::new(LocalDirBucket::new(data_dir.join("bucket"), clock.clone()));
            Cluster::new(bucket, clock)
        });
        let mut runtimes = (1..=nodes)
            .map(|i| {
                let mut config = config_for(&data_dir.join(format!("node-{i}")));
                // No pass thread: the test host runs the passes inside
                // advance_clock, so that what they write to the bucket (and
                // the faults they meet) comes at the same point of every run.
                config.passes_on_virtual_clock = false;
                Runtime::new_node(config, cluster.clone(), &format!("node-{i}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let first = runtimes.remove(0);
        Ok((first, runtimes, Some(cluster)))
    }

    /// Every node, node 1 first.
    fn all_nodes(&self) -> Result<impl Iterator<Item = &Runtime>, TestHostError> {
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

    /// The node that acts for the whole host (due alarms, an actor's alarm):
    /// the lowest live one, as any live node of `serve --nodes N` would. A
    /// cut-off node holds nothing, so what it queued would never run.
    fn acting_node(&self) -> Result<&Runtime, TestHostError> {
        let Some(cluster) = &self.cluster else {
            return self.runtime();
        };
        for rt in self.all_nodes()? {
            if rt.node_id().is_some_and(|id| cluster.is_live(id)) {
                return Ok(rt);
            }
        }
        self.runtime() // every node is cut off: node 1 refuses as it should
    }

    /// How many nodes the host runs.
    pub fn node_count(&self) -> usize {
        self.others.len() + 1
    }

    fn bucket(&self) -> Result<&Arc<dyn crate::bucket::ObjectStore>, TestHostError> {
        self.cluster
            .as_ref()
            .map(|c| c.bucket())
            .ok_or(TestHostError::NeedsCluster)
    }

    /// Sends a request to node `n`, which serves it or forwards it to the
    /// actor's holder; waits for the answer and the event's end.
    ///
    /// # Errors
    /// No such node; as [`TestHost::request`].
    pub fn request_on(
        &self,
        n: usize,
        key: &ActorKey,
        method: &str,
        path: &str,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    ) -> Result<HttpResponse, TestHostError> {
        self.node(n)?;
        let to = self.before_event(key, Some(n))?;
        let mut req = HttpRequest::new(method, path, body);
        req.headers = headers;
        let answer = self.node(to.node)?.request_blocking(key, req)?;
        self.settle(key)?;
        Ok(to.answer(answer))
    }

    /// Cuts node `n` off from the cluster: it holds nothing from now on, and
    /// the others take its actors over from the bucket.
    ///
    /// # Errors
    /// No such node, or a single node.
    pub fn cut_off(&self, n: usize) -> Result<(), TestHostError> {
        if self.cluster.is_none() {
            return Err(TestHostError::NeedsCluster);
        }
        Ok(self.node(n)?.cut_off()?)
    }

    /// Asks for an operator delete of `key` as `wasmkeep-shim actor delete`
    /// does (a request in the bucket), and runs every node's control pass so
    /// that its holder carries it out; the request's id.
    ///
    /// # Errors
    /// A single node (use [`TestHost::delete_actor`]); no such actor.
    pub fn request_operator_delete(&self, key: &ActorKey) -> Result<String, TestHostError> {
        let req = crate::operator::request_delete(self.bucket()?.as_ref(), key)
            .map_err(|e| TestHostError::Cluster(e.to_string()))?;
        self.run_control_passes()?;
        for rt in self.all_nodes()? {
            rt.settle(key);
        }
        Ok(req.id)
    }

    /// Runs each node's control pass once (app tombstones, heartbeats,
    /// operator delete requests), as a moving clock does every second.
    ///
    /// # Errors
    /// The host is closed.
    pub fn run_control_passes(&self) -> Result<(), TestHostError> {
        for rt in self.all_nodes()? {
            rt.run_control_pass();
        }
        Ok(())
    }

    /// Sets `expire-after-idle` of a class on every node (at least an hour;
    /// `None` removes it), as a manifest or `serve --expire-after-idle` does.
    ///
    /// # Errors
    /// Below an hour, or an unknown class.
    pub fn set_expire_after_idle(&self, app: &str, class: &str, limit: Option<Duration>) -> Result<(), TestHostError> {
        for rt in self.all_nodes()? {
            rt.set_expire_after_idle(app, class, limit)?;
        }
        Ok(())
    }

    /// Runs each node's idle-expiry pass once; how many actors were expired.
    ///
    /// # Errors
    /// The host is closed.
    pub fn run_expiry_passes(&self) -> Result<usize, TestHostError> {
        Ok(self.all_nodes()?.map(|rt| rt.run_expiry_pass().expired).sum())
    }

    /// Deletes an app as `wasmkeep-shim app delete` does: its tombstone,
    /// every node stops serving it (control passes), then its data goes.
    ///
    /// # Errors
    /// A single node; the bucket failed.
    pub fn delete_app(&self, app: &str) -> Result<(), TestHostError> {
        let bucket = self.bucket()?;
        let now = self.now_ms()?;
        crate::app_delete::write_tombstone(bucket.as_ref(), app, "test", now)
            .map_err(|e| TestHostError::Cluster(e.to_string()))?;
        self.run_control_passes()?;
        crate::app_delete::remove_data(bucket.as_ref(), app).map_err(|e| TestHostError::Cluster(e.to_string()))?;
        Ok(())
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
            let started = rt.now_ms();
            if now > started {
                rt.advance_clock(now - started)?;
            }
        }
        self.load_apps(std::iter::once(&rt).chain(others.iter()))?;
        self.rt = Some(rt);
        self.others = others;
        self.cluster = cluster;
        Ok(())
    }

    /// Loads what this host loaded (apps and manifests, in order) into `nodes`.
    fn load_apps<'a>(&self, nodes: impl Iterator<Item = &'a Runtime>) -> Result<(), TestHostError> {
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

    /// Restarts one actor as a crash and recovery would ([`Runtime::restart_actor`]).
    ///
    /// # Errors
    /// The host is closed.
    pub fn restart(&self, key: &ActorKey) -> Result<(), TestHostError> {
        // In a cluster only its holder has it resident; the others do nothing.
        for rt in self.all_nodes()? {
            rt.restart_actor(key);
        }
        Ok(())
    }

    /// Starts seeded chaos: from now on, before each request, call and
    /// socket opening, the seed's schedule may fail the next removal, restart
    /// the actor, hibernate every actor or move the clock on and run the due
    /// alarms; in a cluster also fail an upload (or let it land and report
    /// failure), lose a hold, cut a node off, and send the event to any live
    /// node. The same seed and the same events draw the same schedule.
    /// Starting again replaces the schedule.
    pub fn start_chaos(&self, seed: u64) {
        *lock(&self.chaos) = Some(Schedule::new(seed, self.node_count()));
    }

    /// The seed of the chaos running now ([`TestHost::start_chaos`]), if any:
    /// a body that draws its own choices draws them from it, so that the
    /// seed replays them too.
    pub fn chaos_seed(&self) -> Option<u64> {
        lock(&self.chaos).as_ref().map(Schedule::seed)
    }

    /// Stops the chaos [`TestHost::start_chaos`] started; what its schedule
    /// did, in order (empty when none was running). Armed faults stay armed
    /// until used or reset.
    pub fn end_chaos(&self) -> Vec<ChaosRecord> {
        lock(&self.chaos).take().map(Schedule::into_records).unwrap_or_default()
    }

    /// Under chaos: applies what the schedule draws before an event to `key`
    /// and answers where to send it (`wanted`, else the drawn node) and
    /// whether its answer is lost. Without chaos: `wanted`, else node 1.
    fn before_event(&self, key: &ActorKey, wanted: Option<usize>) -> Result<Delivery, TestHostError> {
        let plan = match lock(&self.chaos).as_mut() {
            Some(schedule) => schedule.before_event(&key.to_string(), wanted),
            None => {
                return Ok(Delivery {
                    node: wanted.unwrap_or(1),
                    answer_lost: false,
                });
            }
        };
        let mut answer_lost = false;
        for step in &plan.steps {
            match step {
                ChaosStep::LoseAnswer => answer_lost = true,
                ChaosStep::FailRemoval => self.arm_everywhere(FaultKind::FailRemoval)?,
                ChaosStep::FailUpload => self.arm_everywhere(FaultKind::FailUpload)?,
                ChaosStep::UploadLandsButFails => self.arm_everywhere(FaultKind::UploadLandsButFails)?,
                ChaosStep::LoseHold => self.arm_everywhere(FaultKind::LoseHold)?,
                ChaosStep::Restart => self.restart(key)?,
                ChaosStep::Hibernate => self.hibernate_all()?,
                ChaosStep::LateAlarms(ms) => {
                    self.advance_clock(*ms)?;
                    self.run_due_alarms()?;
                }
                ChaosStep::CutOff(n) => self.cut_off(*n)?,
            }
        }
        Ok(Delivery {
            node: plan.node,
            answer_lost,
        })
    }

    /// Arms one occurrence of `kind` on every node: the event may be served
    /// by whichever node holds the actor.
    fn arm_everywhere(&self, kind: FaultKind) -> Result<(), TestHostError> {
        for rt in self.all_nodes()? {
            rt.faults().arm(kind, 1);
        }
        Ok(())
    }

    /// Deletes an actor as an operator would ([`Runtime::delete_actor`]).
    ///
    /// # Errors
    /// The delete failed (the message says why).
    pub fn delete_actor(&self, key: &ActorKey) -> Result<crate::AdminDeleted, TestHostError> {
        Ok(self.runtime()?.delete_actor(key)?)
    }

    /// Whether the actor was deleted, from positive evidence only
    /// ([`Runtime::deletion_status`]).
    ///
    /// # Errors
    /// The host is closed.
    pub fn deletion_status(&self, key: &ActorKey) -> Result<crate::deletion::DeletionStatus, TestHostError> {
        Ok(self.runtime()?.deletion_status(key))
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

    /// Sends a request event and waits for the answer and the event's end.
    ///
    /// # Errors
    /// Unknown app or class; the class's access refuses it.
    pub fn request(
        &self,
        key: &ActorKey,
        method: &str,
        path: &str,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    ) -> Result<HttpResponse, TestHostError> {
        let to = self.before_event(key, None)?;
        let mut req = HttpRequest::new(method, path, body);
        req.headers = headers;
        let answer = self.node(to.node)?.request_blocking(key, req)?;
        // The event's end (its removal; in a cluster the upload, on whichever
        // node ran it) comes after the answer: a test's next step sees it.
        self.settle(key)?;
        Ok(to.answer(answer))
    }

    /// Runs `on-call` as the host (caller none) and waits for its answer.
    ///
    /// # Errors
    /// Unknown app or class; the call's own failure is the inner result.
    pub fn call(&self, key: &ActorKey, payload: Vec<u8>) -> Result<Result<Vec<u8>, CallFailure>, TestHostError> {
        let to = self.before_event(key, None)?;
        let answer = self.node(to.node)?.call(key, payload)?;
        self.settle(key)?;
        Ok(if to.answer_lost {
            Err(CallFailure::Failed(LOST_ANSWER.into()))
        } else {
            answer
        })
    }

    /// Opens a WebSocket to an actor (its `on-socket-open` runs); the socket's id.
    ///
    /// # Errors
    /// Unknown app or class; the class's access refuses it.
    pub fn open_socket(&self, key: &ActorKey, path: &str) -> Result<u64, TestHostError> {
        // Sockets are opened on node 1 (their ids are node 1's).
        self.before_event(key, Some(1))?;
        let handle = self.runtime()?.open_socket(key, path)?;
        let id = handle.id;
        lock(&self.sockets).insert(id, handle);
        Ok(id)
    }

    /// A client message to the actor (its `on-socket-message` runs).
    ///
    /// # Errors
    /// The socket is not open.
    pub fn socket_send(&self, id: u64, msg: SocketMessage) -> Result<(), TestHostError> {
        Ok(self.runtime()?.socket_message(id, msg)?)
    }

    /// The client closes the socket (the actor's `on-socket-close` runs).
    ///
    /// # Errors
    /// The host is closed.
    pub fn socket_close(&self, id: u64, code: u16, reason: &str) -> Result<(), TestHostError> {
        self.runtime()?.socket_closed(id, code, reason);
        Ok(())
    }

    /// What the actor sent the socket's client since the last look, in order.
    ///
    /// # Errors
    /// This host did not open the socket.
    pub fn socket_take(&self, id: u64) -> Result<Vec<Outbound>, TestHostError> {
        let mut out = Vec::new();
        while let Some(o) = self.socket_next(id)? {
            out.push(o);
        }
        Ok(out)
    }

    /// The next thing the actor sent the socket's client, if anything is waiting.
    ///
    /// # Errors
    /// This host did not open the socket.
    pub fn socket_next(&self, id: u64) -> Result<Option<Outbound>, TestHostError> {
        let mut sockets = lock(&self.sockets);
        let handle = sockets.get_mut(&id).ok_or(TestHostError::NoSuchSocket(id))?;
        Ok(handle.outbound.try_recv().ok())
    }

    /// Waits until the actor's queued events have run.
    ///
    /// # Errors
    /// The host is closed.
    pub fn settle(&self, key: &ActorKey) -> Result<(), TestHostError> {
        // In a cluster the event may have run on another node (forwarded to
        // the holder), whose end uploads the writes after the answer went
        // out: every node's mailbox is waited on.
        for n in 1..=self.node_count() {
            self.node(n)?.settle(key);
        }
        Ok(())
    }

    /// The host's clock (ms since the epoch).
    ///
    /// # Errors
    /// The host is closed.
    pub fn now_ms(&self) -> Result<u64, TestHostError> {
        Ok(self.runtime()?.now_ms())
    }

    /// Moves the virtual clock forward; the new time.
    ///
    /// # Errors
    /// The host is closed.
    pub fn advance_clock(&self, ms: u64) -> Result<u64, TestHostError> {
        let now = self.runtime()?.advance_clock(ms)?;
        self.run_passes_due(now)?;
        Ok(now)
    }

    /// A cluster's passes whose interval of virtual time has gone by, at a
    /// real clock's cadence (a control pass each second, an expiry pass each
    /// ten minutes), on every node in order. They run here, on the test's
    /// thread, rather than on a thread of each node's: a pass writes to the
    /// bucket, and one that ran at a moment of its own would meet the faults
    /// armed for the test's events, so that a seed would not replay exactly.
    fn run_passes_due(&self, now: u64) -> Result<(), TestHostError> {
        if self.cluster.is_none() {
            return Ok(());
        }
        let (control, expiry) = {
            let mut last = lock(&self.passes_ran_at);
            let control = now.saturating_sub(last.0) >= crate::passes::CONTROL_PASS_EVERY_MS;
            let expiry = now.saturating_sub(last.1) >= crate::passes::EXPIRY_PASS_EVERY_MS;
            if control {
                last.0 = now;
            }
            if expiry {
                last.1 = now;
            }
            (control, expiry)
        };
        for rt in self.all_nodes()? {
            if control {
                rt.run_control_pass();
            }
            if expiry {
                rt.run_expiry_pass();
            }
        }
        Ok(())
    }

    /// Runs every due alarm; how many ran `on-alarm`.
    ///
    /// # Errors
    /// The host is closed.
    pub fn run_due_alarms(&self) -> Result<usize, TestHostError> {
        // The cluster's alarm index is shared: one live node queues each due
        // alarm, and forwards it to the actor's holder.
        Ok(self.acting_node()?.run_due_alarms())
    }

    /// Runs the actor's alarm if it is due; whether one ran. In a cluster it
    /// goes through the lowest live node, which forwards it to the holder.
    ///
    /// # Errors
    /// The host is closed.
    pub fn run_alarm(&self, key: &ActorKey) -> Result<bool, TestHostError> {
        Ok(self.acting_node()?.run_alarm(key))
    }

    /// Runs the actor's alarm through node `n` (which serves it or forwards it
    /// to the holder) if it is due; whether one ran. A cut-off node runs none.
    ///
    /// # Errors
    /// No such node, or the host is closed.
    pub fn run_alarm_on(&self, n: usize, key: &ActorKey) -> Result<bool, TestHostError> {
        Ok(self.node(n)?.run_alarm(key))
    }

    /// Arms a fault by its name (`fail-removal`, …) for the next `count` attempts.
    ///
    /// # Errors
    /// Not a fault's name.
    pub fn arm_fault(&self, name: &str, count: u32) -> Result<(), TestHostError> {
        self.arm_fault_on(1, name, count)
    }

    /// Arms a fault by its name on node `n` (1-based) for its next `count`
    /// attempts: the fault hits only events that node runs.
    ///
    /// # Errors
    /// Not a fault's name; no such node.
    pub fn arm_fault_on(&self, n: usize, name: &str, count: u32) -> Result<(), TestHostError> {
        let kind = FaultKind::from_name(name).ok_or_else(|| TestHostError::UnknownFault(name.to_owned()))?;
        self.node(n)?.faults().arm(kind, count);
        Ok(())
    }

    /// Clears every armed fault, on every node.
    ///
    /// # Errors
    /// The host is closed.
    pub fn clear_faults(&self) -> Result<(), TestHostError> {
        for rt in self.all_nodes()? {
            rt.faults().clear();
        }
        Ok(())
    }

    /// Whether the actor exists.
    ///
    /// # Errors
    /// The host is closed.
    pub fn exists(&self, key: &ActorKey) -> Result<bool, TestHostError> {
        Ok(self.runtime()?.exists(key))
    }

    /// The actor's tables and rows (the host's own table left out).
    ///
    /// # Errors
    /// The actor does not exist or its database cannot be read.
    pub fn tables(&self, key: &ActorKey) -> Result<Vec<(String, QueryResult)>, TestHostError> {
        Ok(self.runtime()?.tables(key)?)
    }

    /// The actor's tables as JSON, as the harnesses document them:
    /// `{table: {columns, rows}}`, integers `{"integer": "n"}` (exact beyond
    /// 2^53), reals `{"real": x}`, blobs `{"blob": hex}`, text and NULL as themselves.
    ///
    /// # Errors
    /// As [`TestHost::tables`].
    pub fn tables_json(&self, key: &ActorKey) -> Result<serde_json::Value, TestHostError> {
        let mut out = serde_json::Map::new();
        for (table, result) in self.tables(key)? {
            let rows: Vec<serde_json::Value> = result
                .rows
                .iter()
                .map(|row| serde_json::Value::Array(row.iter().map(sql_value_json).collect()))
                .collect();
            out.insert(table, serde_json::json!({ "columns": result.columns, "rows": rows }));
        }
        Ok(serde_json::Value::Object(out))
    }

    /// Every actor the host knows and its status.
    ///
    /// # Errors
    /// The host is closed.
    pub fn actors(&self) -> Result<Vec<ActorInfo>, TestHostError> {
        Ok(self.runtime()?.actors())
    }

    /// The lines actors logged (the last 1000 of each node), in a cluster
    /// every node's, in the order of their time (node 1's first at a tie).
    ///
    /// # Errors
    /// The host is closed.
    pub fn logs(&self) -> Result<Vec<LogLine>, TestHostError> {
        let mut lines: Vec<LogLine> = self.all_nodes()?.flat_map(Runtime::logs).collect();
        // Stable: each node's own lines keep their order.
        lines.sort_by_key(|l| l.at);
        Ok(lines)
    }

    /// What one actor logged, as [`TestHost::logs`] orders it. Filtered
    /// before the sort: the harnesses print it after every answer ≥ 500,
    /// many of them under chaos.
    ///
    /// # Errors
    /// The host is closed.
    pub fn logs_of(&self, key: &ActorKey) -> Result<Vec<LogLine>, TestHostError> {
        let actor = key.to_string();
        let mut lines: Vec<LogLine> = self
            .all_nodes()?
            .flat_map(Runtime::logs)
            .filter(|l| l.actor == actor)
            .collect();
        lines.sort_by_key(|l| l.at);
        Ok(lines)
    }

    /// The counters in Prometheus text.
    ///
    /// # Errors
    /// The host is closed.
    pub fn metrics(&self) -> Result<String, TestHostError> {
        Ok(self.runtime()?.metrics().render())
    }

    /// Hibernates every resident actor (on every node of a cluster).
    ///
    /// # Errors
    /// The host is closed.
    pub fn hibernate_all(&self) -> Result<(), TestHostError> {
        for rt in self.all_nodes()? {
            rt.hibernate_all();
        }
        Ok(())
    }

    /// Stops the host: its actors hibernate, its sockets are dropped, its
    /// temporary data directory is removed. Closing again does nothing.
    pub fn close(&mut self) {
        self.closed = true;
        if let Some(rt) = self.rt.take() {
            rt.hibernate_all();
        }
        for rt in self.others.drain(..) {
            rt.hibernate_all();
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

/// One SQL value as the harnesses' JSON spells it.
pub fn sql_value_json(v: &SqlValue) -> serde_json::Value {
    match v {
        SqlValue::Null => serde_json::Value::Null,
        SqlValue::Integer(i) => serde_json::json!({ "integer": i.to_string() }),
        SqlValue::Real(r) => serde_json::json!({ "real": r }),
        SqlValue::Text(t) => serde_json::Value::String(t.clone()),
        SqlValue::Blob(b) => serde_json::json!({ "blob": hex::encode(b) }),
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
