//! Gives the memory a compile, or closed databases, freed back to the system.
//!
//! Compiling a component allocates hundreds of MiB in cranelift's threads
//! and frees it at the end; glibc keeps freed memory in its arenas, so a
//! host that compiled the example classes once held about 460 MiB it no
//! longer used (issue 25: `serve` of the examples at 483 MiB RSS after a cold
//! start, 203 MiB after `malloc_trim`). Called after each compile, which is
//! rare (a class's first load, or a rebuild under `serve --watch`), and
//! by the idle sweep after every 256 databases it closes (ADR 045).

/// Returns the free pages of every malloc arena to the system (glibc);
/// nothing elsewhere.
pub(crate) fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        #[allow(
            unsafe_code,
            reason = "malloc_trim takes a size and touches only the allocator's own state"
        )]
        // SAFETY: glibc's malloc_trim is thread-safe and has no preconditions.
        unsafe {
            libc::malloc_trim(0);
        }
    }
}
