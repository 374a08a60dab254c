//! Running part of the benchmark on one CPU.
//!
//! A figure that compares two actors' events must not depend on which core
//! each actor's worker thread happened to land on. On these 2-core virtual
//! machines a request that wakes a worker parked on the other core pays the
//! cross-core wake (about 35 us more), one that lands on the caller's core
//! does not, and which way each actor goes is settled by the scheduler for a
//! whole run: two identical one-row actors measured 12 and 53 us a read in
//! the same run. On one CPU both pay the same wake and the figure is the
//! event's own cost.

use anyhow::{Result, bail};

/// Runs `f` with the calling thread, and so every thread it starts meanwhile,
/// allowed only the first CPU it may use now; restores the mask after.
///
/// # Errors
/// When the mask cannot be read or set, or `f`'s error.
pub fn on_one_cpu<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    let before = affinity()?;
    let Some(first) = (0..libc::CPU_SETSIZE as usize).find(|c| cpu_isset(*c, &before)) else {
        bail!("this thread may run on no CPU");
    };
    let mut one = empty_set();
    cpu_set(first, &mut one);
    set_affinity(&one)?;
    let out = f();
    set_affinity(&before)?;
    out
}

fn empty_set() -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is a plain bit array; all zeroes is the empty set.
    #[allow(unsafe_code)]
    unsafe {
        std::mem::zeroed()
    }
}

fn cpu_isset(cpu: usize, set: &libc::cpu_set_t) -> bool {
    // SAFETY: `cpu` is below CPU_SETSIZE, the set's size in bits.
    #[allow(unsafe_code)]
    unsafe {
        libc::CPU_ISSET(cpu, set)
    }
}

fn cpu_set(cpu: usize, set: &mut libc::cpu_set_t) {
    // SAFETY: `cpu` is below CPU_SETSIZE, the set's size in bits.
    #[allow(unsafe_code)]
    unsafe {
        libc::CPU_SET(cpu, set)
    }
}

fn affinity() -> Result<libc::cpu_set_t> {
    let mut set = empty_set();
    // SAFETY: the pointer and size are those of a cpu_set_t we own; pid 0 is
    // the calling thread.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        bail!("reading this thread's CPU mask: {}", std::io::Error::last_os_error());
    }
    Ok(set)
}

fn set_affinity(set: &libc::cpu_set_t) -> Result<()> {
    // SAFETY: as in `affinity`, with a set we own.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), set) };
    if rc != 0 {
        bail!("setting this thread's CPU mask: {}", std::io::Error::last_os_error());
    }
    Ok(())
}
