//! How a node's host is made from its parts, and the methods through which
//! the rest of the crate reads them (the fields stay private to `node/`).

use super::{AppTable, Host, LogBook};
use crate::alarm_index::AlarmIndex;
use crate::clock::Clock;
use crate::component_cache::ComponentCache;
use crate::config::RuntimeConfig;
use crate::faults::Faults;
use crate::imports::HostState;
use crate::metrics::Metrics;
use crate::scheduler::{Scheduler, StartWorker};
use crate::sockets::SocketTable;
use crate::storage::ActorStorage;
use std::sync::{Arc, Weak};
use wasmtime::Engine;
use wasmtime::component::Linker;

/// What a node is built from (`node_builder` chooses each once).
pub(crate) struct HostParts {
    pub(crate) engine: Engine,
    pub(crate) linker: Linker<HostState>,
    pub(crate) config: RuntimeConfig,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) faults: Arc<Faults>,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) storage: Arc<dyn ActorStorage>,
    pub(crate) alarms: Arc<dyn AlarmIndex>,
    pub(crate) sockets: Arc<SocketTable>,
    pub(crate) cache: ComponentCache,
    pub(crate) cluster: Option<crate::cluster::ClusterNode>,
    /// The engine's pool of instance slots, when it has one (ADR 042).
    pub(crate) instance_pool: Option<crate::instance_pool::InstancePool>,
}

impl Host {
    /// A node's host from its parts, with nothing loaded, queued or stopped.
    /// `worker_loop` makes, for the node, what its scheduler runs to start an
    /// actor's worker (`node_builder` passes the worker's loop, which runs
    /// the actor's cell on this node).
    pub(crate) fn new(parts: HostParts, worker_loop: impl FnOnce(Weak<Self>) -> StartWorker) -> Arc<Self> {
        let max_resident = parts.config.max_resident;
        Arc::new_cyclic(|me: &Weak<Self>| {
            let start = worker_loop(me.clone());
            Self {
                me: me.clone(),
                scheduler: Arc::new(Scheduler::new(max_resident, start, parts.metrics.clone())),
                engine: parts.engine,
                linker: parts.linker,
                config: parts.config,
                clock: parts.clock,
                faults: parts.faults,
                metrics: parts.metrics,
                storage: parts.storage,
                alarms: parts.alarms,
                apps: AppTable::default(),
                class_reloads: std::sync::atomic::AtomicU64::new(0),
                sockets: parts.sockets,
                cache: parts.cache,
                logs: LogBook::default(),
                cluster: parts.cluster,
                instance_pool: parts.instance_pool,
                stops: super::Stops::default(),
                pass_book: crate::pass_book::PassBook::default(),
                remote_calls: std::sync::OnceLock::new(),
            }
        })
    }

    /// The wasmtime engine every actor's store runs on.
    pub(crate) fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The engine's pool of instance slots, when it has one.
    pub(crate) fn instance_pool(&self) -> Option<&crate::instance_pool::InstancePool> {
        self.instance_pool.as_ref()
    }

    /// The linker of the guest's imports.
    pub(crate) fn linker(&self) -> &Linker<HostState> {
        &self.linker
    }

    /// The node's configuration.
    pub(crate) fn config(&self) -> &RuntimeConfig {
        &self.config
    }

    /// The node's clock (virtual under tests).
    pub(crate) fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// The fault switches.
    pub(crate) fn faults(&self) -> &Arc<Faults> {
        &self.faults
    }

    /// The counters.
    pub(crate) fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// Where actors' durable state lives: one node's files or a cluster's bucket.
    pub(crate) fn storage(&self) -> &Arc<dyn ActorStorage> {
        &self.storage
    }

    /// Which actor's alarm is due when.
    pub(crate) fn alarms(&self) -> &Arc<dyn AlarmIndex> {
        &self.alarms
    }

    /// The apps loaded here, by name.
    pub(crate) fn apps(&self) -> &AppTable {
        &self.apps
    }

    /// Counts one more class replaced by `Runtime::reload_class`.
    pub(crate) fn class_reloaded(&self) {
        self.class_reloads.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }

    /// How many classes have been replaced so far.
    pub(crate) fn class_reloads(&self) -> u64 {
        self.class_reloads.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Its scheduler: every actor's mailbox, and the workers that run them.
    pub(crate) fn scheduler(&self) -> &Arc<Scheduler> {
        &self.scheduler
    }

    /// The sockets open to this node's actors.
    pub(crate) fn sockets(&self) -> &Arc<SocketTable> {
        &self.sockets
    }

    /// Compiled components by content hash.
    pub(crate) fn cache(&self) -> &ComponentCache {
        &self.cache
    }

    /// The last lines actors logged.
    pub(crate) fn logs(&self) -> &LogBook {
        &self.logs
    }

    /// In cluster mode, the cluster and this node's place in it.
    pub(crate) fn cluster(&self) -> Option<&crate::cluster::ClusterNode> {
        self.cluster.as_ref()
    }

    /// What has stopped here.
    pub(crate) fn stops(&self) -> &super::Stops {
        &self.stops
    }

    /// What the passes keep between runs.
    pub(crate) fn pass_book(&self) -> &crate::pass_book::PassBook {
        &self.pass_book
    }
}
