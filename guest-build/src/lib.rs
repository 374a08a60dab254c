//! Builds Rust wasmkeep guests into components.
//!
//! A guest is a `cdylib` crate built for `wasm32-wasip2`, whose output is
//! already a component. This crate picks a toolchain that can build it:
//!
//! 1. **Installed target**: the `rustc` on `PATH` has the `wasm32-wasip2`
//!    standard library (`rustup target add wasm32-wasip2`). Plain `cargo`.
//! 2. **Debian fallback**: no wasm32 standard library can be installed, but
//!    Debian's `rustc-web` (with its library source) and `wasi-libc` are
//!    present. `/usr/bin/cargo` builds std itself (`-Zbuild-std`, with
//!    `RUSTC_BOOTSTRAP=1`), links with the `rust-lld` and `wasm-component-ld`
//!    of a rustup toolchain, and finds libc in `/usr/lib/wasm32-wasi`.
//!
//! Set `WASMKEEP_GUEST_TOOLCHAIN=target` or `=debian` to force one.
//!
//! Every guest shares one target directory, `<target_directory>/wasm`, and
//! one profile (`guest` when the guest's workspace defines it, otherwise
//! `release` with `panic = "abort"`), so the fallback's std is built once.
//! `RUSTFLAGS` and `CARGO_ENCODED_RUSTFLAGS` are not passed on (they are
//! usually meant for the host); use `CARGO_TARGET_WASM32_WASIP2_RUSTFLAGS`.
//!
//! ```no_run
//! use std::path::Path;
//!
//! let wasm = wasmkeep_guest_build::build_rust_guest(Path::new("examples/counter-rust/Cargo.toml"), None)?;
//! println!("built {}", wasm.display());
//! # Ok::<(), anyhow::Error>(())
//! ```

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};

mod cargo_metadata;
mod component_check;
mod toolchain;

use cargo_metadata::{Metadata, Package, Profile, metadata};
pub use component_check::check_component;
use component_check::check_is_component;
pub use toolchain::Toolchain;

/// The target every guest is built for.
pub const TARGET: &str = "wasm32-wasip2";

/// The Debian packages of the fallback toolchain.
pub const APT_INSTALL: &str =
    "apt-get install -y --no-install-recommends rustc-web cargo-web rust-web-src libstd-rust-web-dev wasi-libc";

/// The environment variable that forces a toolchain: `target` or `debian`.
pub const TOOLCHAIN_ENV: &str = "WASMKEEP_GUEST_TOOLCHAIN";

/// The export every wasmkeep actor component has (any 0.2.x version).
pub const EVENTS_EXPORT_PREFIX: &str = "wasmkeep:actor/events@";

/// Runs `cmd` and returns what it printed, trimmed; fails with its stderr.
fn run_output(cmd: &mut Command) -> Result<String> {
    let out = cmd.output().with_context(|| format!("could not run {cmd:?}"))?;
    if !out.status.success() {
        bail!(
            "{cmd:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

// ---------------------------------------------------------------------------
// Building

/// Builds `packages` of the workspace of `manifest` in one cargo run and
/// returns each one's component in the target directory.
fn build_packages(
    toolchain: &Toolchain,
    meta: &Metadata,
    manifest: &Path,
    packages: &[&Package],
    features: &[&str],
) -> Result<Vec<PathBuf>> {
    let target_dir = meta.target_directory.join("wasm");
    let profile = Profile::for_workspace(&meta.workspace_root)?;
    let mut cmd = toolchain.cargo_build();
    cmd.arg("--manifest-path")
        .arg(manifest)
        .arg("--target-dir")
        .arg(&target_dir)
        .arg("--lib");
    for p in packages {
        cmd.arg("-p").arg(&p.name);
    }
    if !features.is_empty() {
        cmd.arg("--features").arg(features.join(","));
    }
    profile.apply(&mut cmd);
    let started = Instant::now();
    let status = cmd.status().with_context(|| format!("could not run {cmd:?}"))?;
    if !status.success() {
        let names: Vec<&str> = packages.iter().map(|p| p.name.as_str()).collect();
        bail!(
            "cargo could not build {} ({status}); the compiler's errors are above. \
             To rerun by hand, the command was {cmd:?}",
            names.join(", ")
        );
    }
    eprintln!("guest-build: cargo build took {:.1} s", started.elapsed().as_secs_f64());
    let out_dir = target_dir.join(TARGET).join(profile.dir());
    packages
        .iter()
        .map(|p| {
            let lib = p.cdylib.as_deref().ok_or_else(|| anyhow!("{} has no cdylib", p.name))?;
            let wasm = out_dir.join(format!("{lib}.wasm"));
            if wasm.is_file() {
                Ok(wasm)
            } else {
                bail!("cargo succeeded but {} is missing", wasm.display())
            }
        })
        .collect()
}

/// Copies `from` to `to` unless `to` already has the same bytes (so that an
/// unchanged component keeps its modification time).
fn install(from: &Path, to: &Path, check: Check) -> Result<()> {
    let bytes = fs::read(from).with_context(|| format!("reading {}", from.display()))?;
    match check {
        Check::Actor => check_component(&bytes),
        Check::Component => check_is_component(&bytes),
    }
    .with_context(|| format!("checking {}", from.display()))?;
    if fs::read(to).ok().as_deref() == Some(&bytes[..]) {
        return Ok(());
    }
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    fs::write(to, &bytes).with_context(|| format!("writing {}", to.display()))
}

fn resolve_manifest(manifest_path: &Path) -> Result<PathBuf> {
    let manifest = if manifest_path.is_dir() {
        manifest_path.join("Cargo.toml")
    } else {
        manifest_path.to_path_buf()
    };
    manifest
        .canonicalize()
        .with_context(|| format!("no manifest at {}", manifest.display()))
}

/// Builds the guest crate of `manifest_path` (its `Cargo.toml`, or its
/// directory) into a component and copies it to `out`, or by default to
/// `<target_directory>/components/<package>.wasm`. Returns where it is.
///
/// Prints the toolchain used on stderr.
///
/// ```no_run
/// use std::path::Path;
///
/// let wasm = wasmkeep_guest_build::build_rust_guest(
///     Path::new("my-actor"),
///     Some(Path::new("dist/my-actor.wasm")),
/// )?;
/// # Ok::<(), anyhow::Error>(())
/// ```
///
/// # Errors
///
/// No toolchain (the error says what to install), not a `cdylib` package,
/// a failed build, or an output that is not a wasmkeep actor component.
pub fn build_rust_guest(manifest_path: &Path, out: Option<&Path>) -> Result<PathBuf> {
    build_rust_guest_with_features(manifest_path, out, &[])
}

/// [`build_rust_guest`] with the crate's cargo `features` turned on. Without
/// `out`, a build with features goes to
/// `<target_directory>/components/<package>+<feature>+....wasm`, beside the
/// default build rather than over it.
///
/// # Errors
///
/// As [`build_rust_guest`].
pub fn build_rust_guest_with_features(manifest_path: &Path, out: Option<&Path>, features: &[&str]) -> Result<PathBuf> {
    build_one(manifest_path, out, features, Check::Actor)
}

/// Builds a `cdylib` crate that is a component but not an actor, such as the
/// TypeScript SDK's QuickJS storage adapter (`sdk-ts/native/quickjs-storage`), as
/// [`build_rust_guest`] does, but checking only that the output is a
/// component.
///
/// # Errors
///
/// As [`build_rust_guest`], less the check for the actor's exports.
pub fn build_rust_component(manifest_path: &Path, out: Option<&Path>) -> Result<PathBuf> {
    build_one(manifest_path, out, &[], Check::Component)
}

/// What the built output is checked to be.
#[derive(Clone, Copy)]
enum Check {
    /// A wasmkeep actor: a component exporting the events ([`check_component`]).
    Actor,
    /// Any component.
    Component,
}

fn build_one(manifest_path: &Path, out: Option<&Path>, features: &[&str], check: Check) -> Result<PathBuf> {
    let manifest = resolve_manifest(manifest_path)?;
    let meta = metadata(&manifest)?;
    let package = meta
        .packages
        .iter()
        .find(|p| p.manifest_path == manifest)
        .ok_or_else(|| {
            anyhow!(
                "{} is not a package manifest (a workspace root?); point at the guest crate's Cargo.toml",
                manifest.display()
            )
        })?;
    if package.cdylib.is_none() {
        bail!(
            "{} is not a cdylib; add `[lib] crate-type = [\"cdylib\"]` to {}",
            package.name,
            manifest.display()
        );
    }
    let toolchain = Toolchain::detect()?;
    eprintln!("guest-build: toolchain: {}", toolchain.describe());
    let built = build_packages(&toolchain, &meta, &manifest, &[package], features)?;
    let file = std::iter::once(package.name.as_str())
        .chain(features.iter().copied())
        .collect::<Vec<_>>()
        .join("+");
    let dest = match out {
        Some(o) => o.to_path_buf(),
        None => meta.target_directory.join("components").join(format!("{file}.wasm")),
    };
    let from = built.first().ok_or_else(|| anyhow!("nothing was built"))?;
    install(from, &dest, check)?;
    Ok(dest)
}

/// The guests of a workspace: its `cdylib` packages that depend on
/// `wasmkeep-actor`, by package name.
///
/// # Errors
///
/// If `cargo metadata` fails.
pub fn workspace_guests(workspace_root: &Path) -> Result<Vec<String>> {
    let meta = metadata(&workspace_root.join("Cargo.toml"))?;
    Ok(guests_of(&meta).into_iter().map(|p| p.name.clone()).collect())
}

fn guests_of(meta: &Metadata) -> Vec<&Package> {
    let mut guests: Vec<&Package> = meta
        .packages
        .iter()
        .filter(|p| p.cdylib.is_some() && p.dependencies.contains("wasmkeep-actor"))
        .collect();
    guests.sort_by(|a, b| a.name.cmp(&b.name));
    guests
}

/// Builds every guest of the workspace at `workspace_root` (see
/// [`workspace_guests`]: in this repository the examples and the
/// conformance testee) in one cargo run, into
/// `<target_directory>/components/<package>.wasm`. Returns those paths.
///
/// ```no_run
/// for wasm in wasmkeep_guest_build::build_workspace_guests(std::path::Path::new("."))? {
///     println!("{}", wasm.display());
/// }
/// # Ok::<(), anyhow::Error>(())
/// ```
///
/// # Errors
///
/// As [`build_rust_guest`].
pub fn build_workspace_guests(workspace_root: &Path) -> Result<Vec<PathBuf>> {
    let manifest = resolve_manifest(&workspace_root.join("Cargo.toml"))?;
    let meta = metadata(&manifest)?;
    let guests = guests_of(&meta);
    if guests.is_empty() {
        bail!(
            "no guests (cdylib packages depending on wasmkeep-actor) in {}",
            manifest.display()
        );
    }
    let toolchain = Toolchain::detect()?;
    eprintln!("guest-build: toolchain: {}", toolchain.describe());
    let built = build_packages(&toolchain, &meta, &manifest, &guests, &[])?;
    let components = meta.target_directory.join("components");
    guests
        .iter()
        .zip(built)
        .map(|(p, from)| {
            let dest = components.join(format!("{}.wasm", p.name));
            install(&from, &dest, Check::Actor)?;
            Ok(dest)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_module_is_refused() {
        let core = b"\0asm\x01\0\0\0";
        let err = check_component(core).expect_err("a core module").to_string();
        assert!(err.contains("core WebAssembly module"), "{err}");
    }

    #[test]
    fn garbage_is_refused() {
        assert!(check_component(b"hello").is_err());
    }

    #[test]
    fn empty_component_lacks_the_export() {
        let empty = b"\0asm\x0d\0\x01\0";
        let err = check_component(empty).expect_err("no export").to_string();
        assert!(err.contains("does not export"), "{err}");
    }
}
