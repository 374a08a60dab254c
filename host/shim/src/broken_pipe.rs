//! A one-shot command whose reader went away (`wasmkeep-shim new … | head -1`)
//! ends as Unix tools do, quietly, by SIGPIPE. Rust starts every program with
//! SIGPIPE ignored, so that a server outlives a client that hangs up; then a
//! `println!` into a closed pipe panics instead. `serve` keeps Rust's choice;
//! the other commands print a result and end, and get the default back.

/// Restores SIGPIPE's default action (end the process) on Unix.
pub fn end_quietly_when_the_reader_goes() {
    #[cfg(unix)]
    {
        #[allow(unsafe_code, reason = "signal(2) with SIG_DFL has no preconditions")]
        // SAFETY: sets SIGPIPE's disposition to its default; no handler runs.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
}
