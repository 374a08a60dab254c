//! wasmtime's pooling allocator for a node's engine (ADR 042): one slot per
//! resident actor, sized from the resident cap and the memory an actor may
//! have, so a wake takes a warm slot instead of mapping and unmapping a 4 GiB
//! reservation, and a component that needs more than a slot is refused when
//! its class loads, not at its first event.

use std::sync::atomic::{AtomicU64, Ordering};

/// How a node's engine gets its instances' memories and tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstanceSlots {
    /// A fresh mapping per instance, given back when it ends. Test runtimes
    /// use it: a process may hold many of them.
    OnDemand,
    /// A pool of slots reserved when the node starts (`serve`'s default).
    /// A node that would take more address space than the process has left
    /// for pools falls back to on demand, and its log says so.
    Pooled(SlotShape),
}

/// What one resident actor's slot holds. The defaults fit every toolchain
/// the SDKs build with room (ADR 042's table: at most 3 memories, 4 tables,
/// 14 core modules and 7,712 table elements).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotShape {
    /// Linear memories one actor's component may define.
    pub memories: u32,
    /// Tables one actor's component may define.
    pub tables: u32,
    /// Elements a table may have, at start and grown.
    pub table_elements: usize,
    /// Core module instances one actor's component may make.
    pub core_instances: u32,
}

impl Default for SlotShape {
    fn default() -> Self {
        Self {
            memories: 4,
            tables: 8,
            table_elements: 100_000,
            core_instances: 32,
        }
    }
}

/// A memory slot's address space: wasmtime's 4 GiB reservation (so guest
/// code needs no bounds checks) and its 32 MiB guard on each side.
const MEMORY_SLOT_BYTES: u64 = (4 << 30) + 2 * (32 << 20);
/// Address space all pools of a process may reserve together: about 60 % of
/// x86-64's 128 TiB of user space, leaving the rest to the heap, code and
/// threads.
const PROCESS_POOL_BUDGET: u64 = 80 << 40;
/// The most memory slots one node's pool has for actors with several
/// memories each (about 48 TiB); a node's pool has at least one per actor.
const MOST_MEMORY_SLOTS: u32 = 12_000;
/// Slots beyond the resident cap: an instance being dropped while its
/// successor starts.
const SPARE_ACTORS: u32 = 8;

/// What a slot keeps mapped when its instance ends (memory and each table).
const KEEP_RESIDENT: usize = 1 << 20;

static RESERVED: AtomicU64 = AtomicU64::new(0);

/// A pool's share of the process's address-space budget, given back when
/// the node that holds it is dropped.
#[derive(Debug)]
pub(crate) struct PoolClaim {
    bytes: u64,
}

impl Drop for PoolClaim {
    fn drop(&mut self) {
        RESERVED.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

/// A node's pool: its claim on the address space, and its sizes for messages.
#[derive(Debug)]
pub(crate) struct InstancePool {
    pub(crate) _claim: PoolClaim,
    pub(crate) size: PoolSize,
    pub(crate) shape: SlotShape,
}

impl InstancePool {
    /// What a component that needs more than a slot is told at load.
    pub(crate) fn refusal(&self, reason: &str, memory_limit_bytes: usize) -> String {
        let s = self.shape;
        format!(
            "needs more than an actor's instance slot holds ({reason}). A slot holds {} linear memories of at most \
             {} MiB each, {} tables of at most {} elements, and {} core module instances; this node has {} slots. \
             Build the actor with fewer or smaller memories and tables (`serve` has no setting for a slot's \
             size; a program that embeds the host sets it with RuntimeConfig::instance_slots and \
             memory_limit_bytes)",
            s.memories,
            memory_limit_bytes >> 20,
            s.tables,
            s.table_elements,
            s.core_instances,
            self.size.actors,
        )
    }
}

/// The sizes a node's pool was built with, for messages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PoolSize {
    pub(crate) actors: u32,
    pub(crate) memories: u32,
}

/// The pooling configuration for `max_resident` actors that may each grow
/// their memory to `memory_limit_bytes`, with its claim on the process's
/// address space; `None` when the process has no room left for it.
pub(crate) fn pooling_config(
    shape: SlotShape,
    max_resident: usize,
    memory_limit_bytes: usize,
) -> Option<(wasmtime::PoolingAllocationConfig, PoolClaim, PoolSize)> {
    let actors = u32::try_from(max_resident)
        .unwrap_or(u32::MAX)
        .saturating_add(SPARE_ACTORS);
    // Every resident actor gets at least one memory slot; more per actor
    // only as far as one pool's share of the address space goes.
    let memories = actors.saturating_mul(shape.memories).min(MOST_MEMORY_SLOTS.max(actors));
    let bytes = u64::from(memories) * MEMORY_SLOT_BYTES;
    let claim = claim(bytes)?;
    let mut pool = wasmtime::PoolingAllocationConfig::new();
    pool.total_component_instances(actors)
        .total_core_instances(actors.saturating_mul(shape.core_instances))
        .total_memories(memories)
        .total_tables(actors.saturating_mul(shape.tables))
        .max_core_instances_per_component(shape.core_instances)
        .max_memories_per_component(shape.memories)
        .max_tables_per_component(shape.tables)
        .max_memories_per_module(shape.memories)
        .max_tables_per_module(shape.tables)
        .table_elements(shape.table_elements)
        // The store's limiter refuses growth past the actor's memory limit;
        // the slot refuses a component that starts above it.
        .max_memory_size(memory_limit_bytes)
        // A QuickJS or CPython instance's state is larger than the 1 MiB default.
        .max_core_instance_size(16 << 20)
        .max_component_instance_size(16 << 20);
    // A slot given back keeps its first MiB mapped, zeroed where the actor
    // wrote (the kernel's page-map scan finds those pages; without it, all
    // of that MiB is zeroed): the next instance in it takes no page faults
    // there, and nothing is unmapped, so no other core is interrupted to
    // flush its TLB. The rest of the slot is given back to the kernel.
    pool.linear_memory_keep_resident(KEEP_RESIDENT)
        .table_keep_resident(KEEP_RESIDENT)
        .pagemap_scan(wasmtime::Enabled::Auto);
    Some((pool, claim, PoolSize { actors, memories }))
}

fn claim(bytes: u64) -> Option<PoolClaim> {
    RESERVED
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
            held.checked_add(bytes).filter(|total| *total <= PROCESS_POOL_BUDGET)
        })
        .ok()
        .map(|_| PoolClaim { bytes })
}

/// Whether loading a component failed (`reason`, with its causes) because it
/// needs more than a slot holds. wasmtime reports it as a message only; each
/// of its pool checks names the pooling allocator (pinned wasmtime; the test
/// `a_component_that_needs_more_than_a_slot_is_refused_when_its_class_loads`
/// notices a change of wording).
pub(crate) fn exceeds_slot(reason: &str) -> bool {
    reason.contains("pooling allocator")
}

/// Why an instantiation found no room, with what to do, if that is why it
/// failed: every memory slot of the pool is taken, or the process could not
/// map memory (its maps are at `vm.max_map_count`, or memory ran out). Both
/// pass once a resident actor hibernates, so the event is answered 503.
pub(crate) fn no_room(e: &wasmtime::Error, host: &crate::node::Host) -> Option<String> {
    let resident = host.config().max_resident;
    if e.chain()
        .any(|cause| cause.downcast_ref::<wasmtime::PoolConcurrencyLimitError>().is_some())
    {
        let memories = host.instance_pool().map_or(0, |p| p.size.memories);
        return Some(format!(
            "this node's {memories} instance memory slots are all held by resident actors: try again shortly \
             (Retry-After says when), or start the host with fewer resident actors (serve --max-resident, now \
             {resident}), each of which then gets more of the pool's memory slots"
        ));
    }
    if out_of_memory_maps(e) {
        return Some(format!(
            "this node could not map memory for another instance (the process is at its memory maps, \
             vm.max_map_count, or out of memory): try again shortly (Retry-After says when), or raise \
             vm.max_map_count or start the host with fewer resident actors (serve --max-resident, now {resident})"
        ));
    }
    None
}

/// Whether an error comes from a failed `mmap` or `mprotect` (`ENOMEM`).
fn out_of_memory_maps(e: &wasmtime::Error) -> bool {
    let enomem = rustix::io::Errno::NOMEM.raw_os_error();
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.raw_os_error() == Some(enomem))
            || cause
                .downcast_ref::<rustix::io::Errno>()
                .is_some_and(|errno| *errno == rustix::io::Errno::NOMEM)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pool_takes_a_share_of_the_address_space_and_gives_it_back() {
        let before = RESERVED.load(Ordering::Acquire);
        let (_, claim, size) = pooling_config(SlotShape::default(), 100, 256 << 20).expect("room");
        assert_eq!(size.actors, 108);
        assert_eq!(size.memories, 432);
        assert!(RESERVED.load(Ordering::Acquire) >= before + 432 * MEMORY_SLOT_BYTES);
        drop(claim);
    }

    #[test]
    fn a_pool_has_at_most_its_share_of_memory_slots() {
        let (_, _claim, size) = pooling_config(SlotShape::default(), 4_096, 256 << 20).expect("room");
        assert_eq!(size.memories, MOST_MEMORY_SLOTS);
        assert!(u64::from(MOST_MEMORY_SLOTS) * MEMORY_SLOT_BYTES <= PROCESS_POOL_BUDGET);
        drop(_claim);
        let (_, _claim, size) = pooling_config(SlotShape::default(), 15_000, 256 << 20).expect("room");
        assert_eq!(size.memories, 15_008, "one memory slot for each resident actor");
    }

    #[test]
    fn a_failed_mapping_is_told_from_other_failures() {
        let mapped = wasmtime::Error::from(std::io::Error::from_raw_os_error(
            rustix::io::Errno::NOMEM.raw_os_error(),
        ))
        .context("allocating the instance's memory");
        assert!(out_of_memory_maps(&mapped));
        let other = wasmtime::Error::from(std::io::Error::from_raw_os_error(
            rustix::io::Errno::ACCESS.raw_os_error(),
        ));
        assert!(!out_of_memory_maps(&other));
        assert!(!out_of_memory_maps(&wasmtime::Error::msg("a trap")));
    }

    #[test]
    fn no_claim_is_made_past_the_budget() {
        assert!(claim(PROCESS_POOL_BUDGET + 1).is_none());
    }
}
