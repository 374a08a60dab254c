//! `cargo xtask serve`: the README's `bash scripts/main.sh` after its setup.
//! Builds the example actors and serves them with the local host on
//! http://127.0.0.1:8787 (Ctrl-C stops it).

use std::ffi::OsString;
use std::io::IsTerminal as _;
use std::os::unix::process::CommandExt as _;
use std::path::Path;

use anyhow::{Context, Result};

use crate::setup;
use crate::step_runner::{outer_command, run_command, shown};

#[derive(clap::Args)]
pub struct ServeArgs {
    /// `scripts/setup.sh --serve` has run already (`bash scripts/main.sh`
    /// runs it before cargo can be used): it is not run again; what setup
    /// builds in xtask still is.
    #[arg(long)]
    setup_done: bool,
    /// Arguments passed to `wasmkeep-shim serve` (e.g. `--listen
    /// 127.0.0.1:0 --virtual-clock`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<OsString>,
}

/// Sets up what serving needs, builds the guests and the host, and becomes
/// `wasmkeep-shim serve` (the same process: signals reach the server).
///
/// # Errors
/// Setup or a build failed, or the server could not start.
pub fn serve(root: &Path, args: ServeArgs) -> Result<()> {
    // The bootstrap ran only the script: what setup builds in xtask
    // (the C adapter, the QuickJS parts, the examples of the other
    // languages) is built here either way.
    if !args.setup_done {
        setup::script(root, setup::For::Serve)?;
    }
    setup::builds(root, setup::For::Serve)?;
    crate::guests(root)?;
    // The dev profile, not release: it is the build of wasmtime the test
    // command uses too (one per profile, ADR 014), and it takes about half
    // the time of a release build; wasmtime's compiler and SQLite are
    // optimised in it (Cargo.toml's [profile.dev.package]), so components
    // compile at release speed. Measurements use `cargo xtask bench`, which
    // builds release (ADR 036). On a terminal cargo shows its progress bar
    // (the first build takes minutes); elsewhere it stays quiet.
    eprintln!("serve: building wasmkeep-shim (dev profile)");
    let mut build = outer_command(root, "cargo");
    build.arg("build");
    if !std::io::stderr().is_terminal() {
        build.arg("--quiet");
    }
    run_command(build.args(["-p", "wasmkeep-shim"]))?;
    let mut shim = outer_command(root, "target/debug/wasmkeep-shim");
    shim.args([
        "serve",
        "--manifest",
        "examples/wasmkeep.toml",
        "--data-dir",
        "target/examples-data",
    ])
    .args(&args.args);
    let shown = shown(&shim);
    // exec returns only when it could not start the server.
    let e = shim.exec();
    Err(e).with_context(|| format!("cannot run `{shown}`"))
}
