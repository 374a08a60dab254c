//! How a runtime is set up.

pub use crate::instance_pool::{InstanceSlots, SlotShape};
pub use crate::scheduler::reads_here::ReadsHere;
use std::path::PathBuf;
use std::time::Duration;

/// How the runtime is set up.
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// Where actors' databases and the host's own files go.
    pub data_dir: PathBuf,
    /// Where compiled components are cached (host between data dirs).
    pub cache_dir: PathBuf,
    /// Use a virtual clock that only tests move (alarms then run when told).
    pub virtual_clock: bool,
    /// Keep the alarm index in memory instead of `<data-dir>/host/alarms.db`.
    pub memory_alarm_index: bool,
    /// How long one event may run before it is interrupted; its waits for the
    /// bucket (durable writes and deletes, history reads) do not count (ADR 079).
    pub event_timeout: Duration,
    /// Linear memory an actor instance may grow to.
    pub memory_limit_bytes: usize,
    /// How long an actor stays resident with no event before it hibernates.
    pub idle_timeout: Duration,
    /// With a virtual clock in a cluster: run the control pass (tombstones,
    /// heartbeats, operator delete requests; every second) and the idle expiry
    /// pass (every 10 minutes) as the virtual clock moves, at the cadence a
    /// real clock runs them. Off by default, for tests that run the passes
    /// themselves (`ClusterPasses::run_control_pass`, `ClusterPasses::run_expiry_pass`);
    /// `serve --virtual-clock` turns it on.
    pub passes_on_virtual_clock: bool,
    /// How many actors may be resident at once; beyond it the least recently
    /// used hibernate, and when as many wait again, events are refused with
    /// 503. Default: what this process's open-files limit and
    /// `vm.max_map_count` allow, at most 4,096 (ADR 012).
    pub max_resident: usize,
    /// The most an actor's database may hold (bytes, whole pages); past it
    /// its writes fail with a message saying so (ADR 012). Default 1 GiB.
    pub max_actor_bytes: u64,
    /// Where instances' memories and tables come from: a pool of slots, one
    /// per resident actor (the default: a wake takes a warm slot), or a
    /// mapping per instance (`for_tests`). ADR 042.
    pub instance_slots: InstanceSlots,
    /// Which requests of a resident actor run on the thread that received
    /// them, without a hand-off to its worker's thread (single node). By
    /// default a quick read (25 µs) does, while the actor's requests
    /// overlap (ADR 048, ADR 059).
    pub reads_here: ReadsHere,
    /// A single node's history (ADR 064): where it is kept and how often a
    /// resident actor's commits are written to it; `None` keeps none (the
    /// library's default; `serve` keeps one unless `--no-history`). A
    /// cluster's history is its bucket whatever this says.
    pub history: Option<HistoryConfig>,
}

/// Where and how often a single node keeps its actors' history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryConfig {
    /// The directory, laid out as a `file://` bucket (`serve` uses
    /// `<data-dir>/history`).
    pub dir: PathBuf,
    /// How long an actor's commits are gathered before they are written as
    /// one page set: a restore reaches the last state written at that pace
    /// ([`HistoryConfig::EVERY`] by `serve`). Zero writes each event's pages
    /// before its end returns (the harnesses: every state is restorable).
    pub every: Duration,
}

impl HistoryConfig {
    /// How often `serve` writes a resident actor's history: often enough to
    /// restore to within a blink, seldom enough to cost a busy actor no more
    /// than a write to a file every so often.
    pub const EVERY: Duration = Duration::from_millis(10);

    /// The history at `<data-dir>/history`, written every [`HistoryConfig::EVERY`].
    pub fn in_data_dir(data_dir: &std::path::Path) -> Self {
        Self {
            dir: data_dir.join("history"),
            every: Self::EVERY,
        }
    }
}

impl RuntimeConfig {
    /// Defaults for a data directory: real clock, 5 s events, 256 MiB memory,
    /// 30 s idle, the machine's resident cap, 1 GiB per actor, pooled
    /// instance slots, compiled components cached in [`default_cache_dir`].
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        let data_dir = data_dir.into();
        let cache_dir = default_cache_dir(&data_dir);
        Self {
            data_dir,
            cache_dir,
            virtual_clock: false,
            memory_alarm_index: false,
            event_timeout: Duration::from_secs(5),
            memory_limit_bytes: 256 << 20,
            idle_timeout: Duration::from_secs(30),
            passes_on_virtual_clock: false,
            max_resident: crate::scheduler::residency::default_resident_limit(),
            max_actor_bytes: 1 << 30,
            instance_slots: InstanceSlots::Pooled(SlotShape::default()),
            reads_here: ReadsHere::default(),
            history: None,
        }
    }

    /// For tests: virtual clock, in-memory alarm index, instances mapped on
    /// demand (a test process runs many runtimes at once, and each pool
    /// reserves its address space up front).
    pub fn for_tests(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            virtual_clock: true,
            memory_alarm_index: true,
            instance_slots: InstanceSlots::OnDemand,
            ..Self::new(data_dir)
        }
    }
}

/// Where compiled components are cached unless told: `$WASMKEEP_CACHE_DIR`,
/// else the user's cache directory (`$XDG_CACHE_HOME/wasmkeep/components` or
/// `~/.cache/wasmkeep/components`), else `<data-dir>/cache`. One cache for
/// `serve` and every harness: a component is compiled once, whoever loads it
/// first (entries are by content hash and checked by digest, so sharing is
/// safe; remove the directory to reclaim its space).
pub fn default_cache_dir(data_dir: &std::path::Path) -> PathBuf {
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    if let Some(dir) = std::env::var_os("WASMKEEP_CACHE_DIR").filter(|v| !v.is_empty()) {
        return PathBuf::from(dir);
    }
    let user_cache = std::env::var_os("XDG_CACHE_HOME")
        .and_then(absolute)
        .or_else(|| std::env::var_os("HOME").and_then(absolute).map(|h| h.join(".cache")));
    user_cache.map_or_else(|| data_dir.join("cache"), |c| c.join("wasmkeep").join("components"))
}
