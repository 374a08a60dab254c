//! Builds one node's host: the engine and linker, the clock, the alarm index,
//! and the storage, chosen here once (single node or cluster node) so that
//! the event path never asks which.

use crate::alarm_index::{AlarmIndex, MemoryAlarmIndex, SqliteAlarmIndex};
use crate::clock::{Clock, SystemClock, VirtualClock};
use crate::component_cache::ComponentCache;
use crate::config::RuntimeConfig;
use crate::error::RuntimeError;
use crate::faults::Faults;
use crate::function_cache::FunctionCache;
use crate::imports::HostState;
use crate::instance_pool::{InstancePool, InstanceSlots};
use crate::metrics::Metrics;
use crate::node::{Host, HostParts};
use crate::passes::{start_alarm_timer, start_control_pass, start_epoch_ticker};
use crate::state_store::{LocalStateStore, StateStore};
use crate::storage::ActorStorage;
use crate::storage::cluster_node::ClusterStorage;
use crate::storage::single_node::SingleNodeStorage;
use crate::worker;
use std::sync::Arc;
use wasmtime::component::Linker;
use wasmtime::{Config, Engine};

/// Set to `1`, the environment variable that makes the engine write a perf
/// map (see [`build_host`]).
pub(crate) const PERF_MAP_VAR: &str = "WASMKEEP_PERF_MAP";

/// Builds the host of one node (a cluster node when `cluster` names its
/// cluster and id) and starts its timers.
///
/// # Errors
/// The data directory, the engine or the alarm index cannot be set up.
pub(crate) fn build_host(
    config: RuntimeConfig,
    cluster: Option<(Arc<crate::cluster::Cluster>, String)>,
) -> Result<Arc<Host>, RuntimeError> {
    std::fs::create_dir_all(&config.data_dir).map_err(|e| {
        RuntimeError::host_from(format!("creating the data directory {}", config.data_dir.display()), e)
    })?;
    let mut wcfg = Config::new();
    wcfg.wasm_component_model(true).epoch_interruption(true);
    // For `perf record` of a host (how ADR 018's profile was taken): wasmtime
    // writes /tmp/perf-<pid>.map, which names the guests' compiled functions
    // in perf's report. Off by default: the map grows with every module loaded.
    if std::env::var_os(PERF_MAP_VAR).is_some_and(|v| v == "1") {
        wcfg.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    // A rebuilt component is mostly the same functions (the engine of a JS
    // or Python guest): those come from the function cache, not cranelift.
    let functions = Arc::new(FunctionCache::new(&config.cache_dir));
    wcfg.enable_incremental_compilation(functions.clone())
        .map_err(|e| RuntimeError::host_from("configuring wasmtime's function cache", e))?;
    let instance_pool = choose_instance_slots(&mut wcfg, &config);
    let engine = Engine::new(&wcfg).map_err(|e| RuntimeError::host_from("creating the wasmtime engine", e))?;
    let mut linker = Linker::new(&engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker)
        .map_err(|e| RuntimeError::host_from("linking WASI's imports", e))?;
    crate::bindings::Actor::add_to_linker::<HostState, wasmtime::component::HasSelf<HostState>>(&mut linker, |s| s)
        .map_err(|e| RuntimeError::host_from("linking the actor's imports", e))?;
    let faults = Arc::new(Faults::default());
    let clock: Arc<dyn Clock> = if let Some((c, _)) = &cluster {
        c.clock().clone()
    } else if config.virtual_clock {
        Arc::new(VirtualClock::default())
    } else {
        Arc::new(SystemClock)
    };
    let alarms: Arc<dyn AlarmIndex> = if let Some((c, _)) = &cluster {
        c.alarms()
    } else if config.memory_alarm_index {
        Arc::new(MemoryAlarmIndex::default())
    } else {
        let dir = config.data_dir.join("host");
        std::fs::create_dir_all(&dir).map_err(|e| RuntimeError::host_from(format!("creating {}", dir.display()), e))?;
        Arc::new(
            SqliteAlarmIndex::open(&dir.join("alarms.db"))
                .map_err(|e| RuntimeError::host_from("opening the alarm index", e))?,
        )
    };
    let metrics = Arc::new(Metrics::default());
    let files: Arc<dyn StateStore> = Arc::new(LocalStateStore::new(&config.data_dir, faults.clone()));
    let cluster = cluster.map(|(cluster, node)| crate::cluster::ClusterNode {
        bucket: Arc::new(crate::bucket::FaultyBucket::new(
            cluster.bucket().clone(),
            faults.clone(),
        )),
        cluster,
        node,
    });
    let storage: Arc<dyn ActorStorage> = match &cluster {
        Some(c) => {
            let storage = ClusterStorage::new(
                c.node.clone(),
                c.cluster.clone(),
                c.bucket.clone(),
                faults.clone(),
                files,
                metrics.clone(),
            );
            // Before the node takes any actor (issue 57).
            let cleaned = storage.clean_local_copies(&config.data_dir.join("state"));
            if cleaned != crate::storage::cluster_node::LocalCopies::default() {
                tracing::info!(node = %c.node, "local copies at start: {cleaned:?}");
            }
            Arc::new(storage)
        }
        None => Arc::new(
            SingleNodeStorage::new(files, metrics.clone()).with_history(config.history.as_ref(), clock.clone()),
        ),
    };
    let sockets = cluster.as_ref().map_or_else(Default::default, |c| c.cluster.sockets());
    let cache = ComponentCache::new(config.cache_dir.clone()).with_functions(functions);
    let host = Host::new(
        HostParts {
            engine,
            linker,
            config,
            clock,
            faults: faults.clone(),
            metrics,
            storage,
            alarms,
            sockets,
            cache,
            cluster,
            instance_pool,
        },
        // The scheduler starts an actor's worker with the worker's loop,
        // which runs the actor's cell on this node; a node already dropped
        // has no worker to run.
        |host| {
            Box::new(move |mailbox, jobs, id| match host.upgrade() {
                Some(host) => worker::run(&host, mailbox, jobs, id),
                None => crate::scheduler::WorkerEnd::Left,
            })
        },
    );
    if let Some(c) = host.cluster() {
        let me: std::sync::Weak<dyn crate::cluster::NodeMailboxes> = Arc::downgrade(&host) as _;
        c.cluster
            .join(&c.node, me)
            .map_err(|e| RuntimeError::host_from(format!("joining the cluster as {}", c.node), e))?;
    }
    // Each of these threads keeps a promise (deadlines trap, parked actors
    // hibernate, alarms fire, operator deletes run): a node without one does
    // not start.
    let no_thread = |which: &str, e: std::io::Error| {
        RuntimeError::host_from(
            format!(
                "the system would not start the {which}'s thread ({e}): raise this process's limits on threads \
                 or memory (ulimit -u, systemd's TasksMax) and start it again"
            ),
            e,
        )
    };
    start_epoch_ticker(host.engine()).map_err(|e| no_thread("epoch ticker", e))?;
    crate::idle_sweep::start(&host).map_err(|e| no_thread("idle sweep", e))?;
    let real_clock = host.clock().as_virtual().is_none();
    if real_clock {
        start_alarm_timer(&host).map_err(|e| no_thread("alarm timer", e))?;
    }
    if host.cluster().is_some() && (real_clock || host.config().passes_on_virtual_clock) {
        start_control_pass(&host).map_err(|e| no_thread("control pass", e))?;
    }
    Ok(host)
}

/// Puts the pooling allocator on the engine's configuration when the node
/// asks for it and the process has address space left for its pool (ADR 042).
fn choose_instance_slots(wcfg: &mut Config, config: &RuntimeConfig) -> Option<InstancePool> {
    let InstanceSlots::Pooled(shape) = config.instance_slots else {
        return None;
    };
    let Some((pool, claim, size)) =
        crate::instance_pool::pooling_config(shape, config.max_resident, config.memory_limit_bytes)
    else {
        tracing::info!(
            "this process's other nodes hold the address space a pool of instance slots needs: this node maps \
             each actor's memory on demand (its wakes take tens of microseconds longer)"
        );
        return None;
    };
    wcfg.allocation_strategy(wasmtime::InstanceAllocationStrategy::Pooling(pool));
    Some(InstancePool {
        _claim: claim,
        size,
        shape,
    })
}
