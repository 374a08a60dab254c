//! How a new project runs `wasmkeep-shim`: by its name on PATH, or with
//! `--sdk` this binary's path when it is not the one on PATH.

use anyhow::{Context as _, Result};
use std::path::{Path, PathBuf};

use super::{Lang, Sdk};

/// The name the host binary has on PATH, in the C archive's `bin/`, the
/// Python harness wheel's scripts and npm's `.bin/`.
pub(super) const SHIM: &str = "wasmkeep-shim";

/// How the project's files run `wasmkeep-shim`. From the registries by its
/// name, as each language's package puts it on PATH (or runs it: the README's
/// serve command is `npx wasmkeep-shim` or `python -m wasmkeep_actor` there):
/// a project names no path of the machine that made it. With `--sdk`, the
/// project names the checkout anyway; the host there is this binary, by its
/// name when it is the one on PATH, else by its path (so that `serve
/// --watch` of a Rust project runs this one).
pub(super) fn shim_command(sdk: &Sdk, lang: Lang) -> Result<String> {
    let this = std::env::current_exe().context("finding this wasmkeep-shim's path")?;
    let on_path = on_path(SHIM);
    let is_this = on_path.as_ref().is_some_and(|p| same_file(p, &this));
    match sdk {
        Sdk::Checkout(_) if !is_this => Ok(this.display().to_string()),
        Sdk::Checkout(_) => Ok(SHIM.to_owned()),
        Sdk::Registry => {
            // Rust's and C's commands run the binary on PATH (the C archive's
            // bin/); npm and Python run their own.
            if matches!(lang, Lang::Rust | Lang::C) && on_path.is_none() {
                let dir = this.parent().map(|d| d.display().to_string()).unwrap_or_default();
                eprintln!(
                    "note: the project runs `{SHIM}`, which is not on PATH: add its folder to PATH \
                     (export PATH={dir}:$PATH)"
                );
            }
            Ok(SHIM.to_owned())
        }
    }
}

/// The first executable file `name` in PATH's folders.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && executable(&m)))
}

#[cfg(unix)]
fn executable(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    m.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn executable(_: &std::fs::Metadata) -> bool {
    true
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
