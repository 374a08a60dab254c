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

use std::collections::BTreeSet;
use std::env;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};

/// The target every guest is built for.
pub const TARGET: &str = "wasm32-wasip2";

/// The Debian packages of the fallback toolchain.
pub const APT_INSTALL: &str =
    "apt-get install -y --no-install-recommends rustc-web cargo-web rust-web-src libstd-rust-web-dev wasi-libc";

/// The environment variable that forces a toolchain: `target` or `debian`.
pub const TOOLCHAIN_ENV: &str = "WASMKEEP_GUEST_TOOLCHAIN";

/// The export every wasmkeep actor component has (any 0.2.x version).
pub const EVENTS_EXPORT_PREFIX: &str = "wasmkeep:actor/events@";

const DEBIAN_RUSTC: &str = "/usr/bin/rustc";
const DEBIAN_CARGO: &str = "/usr/bin/cargo";
const WASI_LIBC_DIR: &str = "/usr/lib/wasm32-wasi";

/// A toolchain that builds `wasm32-wasip2` components.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Toolchain {
    /// `cargo` and `rustc` on `PATH` have the `wasm32-wasip2` target.
    InstalledTarget {
        /// Where the target's standard library is.
        target_libdir: PathBuf,
    },
    /// Debian's `rustc-web` building std from source (`-Zbuild-std`).
    DebianBuildStd {
        /// `/usr/bin/cargo`.
        cargo: PathBuf,
        /// `/usr/bin/rustc`.
        rustc: PathBuf,
        /// A directory to put first on `PATH` for `rust-lld` and
        /// `wasm-component-ld`, unless they are on `PATH` already.
        linker_dir: Option<PathBuf>,
        /// wasi-libc's library directory.
        wasi_libc: PathBuf,
    },
}

impl Toolchain {
    /// Finds a toolchain, preferring an installed `wasm32-wasip2` target.
    ///
    /// # Errors
    ///
    /// If neither toolchain is complete: the error lists what was checked
    /// and what to install.
    pub fn detect() -> Result<Self> {
        let forced = env::var(TOOLCHAIN_ENV).ok();
        let mut notes = Vec::new();
        if forced.as_deref() != Some("debian") {
            match installed_target() {
                Ok(t) => return Ok(t),
                Err(e) => notes.push(format!("installed target: {e}")),
            }
        }
        if forced.as_deref() != Some("target") {
            match debian_build_std() {
                Ok(t) => return Ok(t),
                Err(e) => notes.push(format!("Debian fallback: {e}")),
            }
        }
        let forced_note = match forced {
            Some(f) => format!(" ({TOOLCHAIN_ENV}={f})"),
            None => String::new(),
        };
        bail!(
            "no Rust toolchain that builds {TARGET} was found{forced_note}. Install one of:\n\
             \x20 - rustup: `rustup target add {TARGET}`\n\
             \x20 - Debian/Ubuntu, where rustup cannot fetch a wasm32 target: `{APT_INSTALL}`,\n\
             \x20   plus a rustup toolchain (any) for `rust-lld` and `wasm-component-ld`,\n\
             \x20   or both of those on PATH\n\
             What was checked:\n  - {}",
            notes.join("\n  - ")
        )
    }

    /// One line saying which toolchain this is.
    pub fn describe(&self) -> String {
        match self {
            Self::InstalledTarget { target_libdir } => format!(
                "installed {TARGET} target (cargo on PATH; std in {})",
                target_libdir.display()
            ),
            Self::DebianBuildStd {
                cargo,
                rustc,
                linker_dir,
                ..
            } => format!(
                "Debian fallback ({} + {} with -Zbuild-std=std,panic_abort; linkers from {})",
                cargo.display(),
                rustc.display(),
                linker_dir
                    .as_deref()
                    .map_or_else(|| "PATH".to_string(), |d| d.display().to_string())
            ),
        }
    }

    /// A `cargo` command with this toolchain's program, environment and
    /// target flags; the caller adds the subcommand's own arguments after
    /// `build`.
    fn cargo_build(&self) -> Command {
        let mut cmd;
        match self {
            Self::InstalledTarget { .. } => {
                cmd = Command::new(env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
                cmd.arg("build");
            }
            Self::DebianBuildStd {
                cargo,
                rustc,
                linker_dir,
                wasi_libc,
            } => {
                cmd = Command::new(cargo);
                cmd.env("RUSTC", rustc).env("RUSTC_BOOTSTRAP", "1");
                // The rustup proxies would otherwise choose the toolchain.
                cmd.env_remove("RUSTUP_TOOLCHAIN")
                    .env_remove("RUSTC_WRAPPER")
                    .env_remove("RUSTDOC");
                if let Some(dir) = linker_dir {
                    let mut paths = vec![dir.clone()];
                    paths.extend(env::split_paths(&env::var_os("PATH").unwrap_or_default()));
                    if let Ok(joined) = env::join_paths(paths) {
                        cmd.env("PATH", joined);
                    }
                }
                let mut flags = format!("-L native={}", wasi_libc.display());
                if let Ok(user) = env::var("CARGO_TARGET_WASM32_WASIP2_RUSTFLAGS") {
                    flags = format!("{flags} {user}");
                }
                cmd.env("CARGO_TARGET_WASM32_WASIP2_RUSTFLAGS", flags);
                cmd.arg("build").arg("-Zbuild-std=std,panic_abort");
            }
        }
        cmd.env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("CARGO_BUILD_RUSTFLAGS")
            .env_remove("CARGO_BUILD_TARGET")
            .env_remove("CARGO_TARGET_DIR");
        cmd.arg("--target").arg(TARGET);
        cmd
    }
}

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

fn path_rustc() -> OsString {
    env::var_os("RUSTC").unwrap_or_else(|| "rustc".into())
}

fn installed_target() -> Result<Toolchain> {
    let libdir = run_output(
        Command::new(path_rustc())
            .args(["--print", "target-libdir", "--target", TARGET])
            .env_remove("RUSTC_BOOTSTRAP"),
    )?;
    let libdir = PathBuf::from(libdir);
    let has_std = fs::read_dir(&libdir)
        .map(|entries| {
            entries.flatten().any(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.starts_with("libstd-") && name.ends_with(".rlib")
            })
        })
        .unwrap_or(false);
    if has_std {
        Ok(Toolchain::InstalledTarget { target_libdir: libdir })
    } else {
        bail!("no {TARGET} standard library in {}", libdir.display())
    }
}

fn find_on_path(program: &str) -> Option<PathBuf> {
    env::split_paths(&env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

fn debian_build_std() -> Result<Toolchain> {
    let mut missing = Vec::new();
    let rustc = PathBuf::from(DEBIAN_RUSTC);
    let cargo = PathBuf::from(DEBIAN_CARGO);
    if !rustc.is_file() {
        missing.push(format!("{DEBIAN_RUSTC} (rustc-web)"));
    }
    if !cargo.is_file() {
        missing.push(format!("{DEBIAN_CARGO} (cargo-web)"));
    }
    let mut host = String::from("x86_64-unknown-linux-gnu");
    if rustc.is_file() {
        let sysroot = run_output(Command::new(&rustc).args(["--print", "sysroot"]))?;
        let std_src = Path::new(&sysroot).join("lib/rustlib/src/rust/library/std");
        if !std_src.is_dir() {
            missing.push(format!("{} (rust-web-src)", std_src.display()));
        }
        if let Ok(vv) = run_output(Command::new(&rustc).arg("-vV")) {
            if let Some(h) = vv.lines().find_map(|l| l.strip_prefix("host: ")) {
                host = h.to_string();
            }
        }
    }
    let wasi_libc = PathBuf::from(WASI_LIBC_DIR);
    if !wasi_libc.join("libc.a").is_file() {
        missing.push(format!("{WASI_LIBC_DIR}/libc.a (wasi-libc)"));
    }

    // rust-lld and wasm-component-ld: on PATH, or in a rustup toolchain.
    let on_path = find_on_path("wasm-component-ld").is_some() && find_on_path("rust-lld").is_some();
    let linker_dir = if on_path {
        None
    } else {
        let mut candidates = Vec::new();
        if let Ok(sysroot) = run_output(Command::new(path_rustc()).args(["--print", "sysroot"])) {
            candidates.push(PathBuf::from(sysroot));
        }
        if let Ok(sysroot) = run_output(Command::new("rustup").args(["run", "stable", "rustc", "--print", "sysroot"])) {
            candidates.push(PathBuf::from(sysroot));
        }
        let found = candidates
            .into_iter()
            .map(|s| s.join("lib/rustlib").join(&host).join("bin"))
            .find(|d| d.join("wasm-component-ld").is_file() && d.join("rust-lld").is_file());
        if found.is_none() {
            missing.push("rust-lld and wasm-component-ld (neither on PATH nor in a rustup toolchain)".to_string());
        }
        found
    };

    if missing.is_empty() {
        Ok(Toolchain::DebianBuildStd {
            cargo,
            rustc,
            linker_dir,
            wasi_libc,
        })
    } else {
        bail!("missing {}", missing.join(", "))
    }
}

// ---------------------------------------------------------------------------
// cargo metadata

/// A package of a cargo workspace, as far as guest builds care.
#[derive(Debug, Clone)]
struct Package {
    name: String,
    manifest_path: PathBuf,
    /// The lib target's name if it is a `cdylib`.
    cdylib: Option<String>,
    dependencies: BTreeSet<String>,
}

#[derive(Debug, Clone)]
struct Metadata {
    workspace_root: PathBuf,
    target_directory: PathBuf,
    packages: Vec<Package>,
}

fn metadata(manifest: &Path) -> Result<Metadata> {
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let text = run_output(
        Command::new(cargo)
            .args(["metadata", "--format-version", "1", "--no-deps", "--manifest-path"])
            .arg(manifest),
    )?;
    let json: serde_json::Value = serde_json::from_str(&text).context("cargo metadata printed invalid JSON")?;
    let path = |key: &str| -> Result<PathBuf> {
        json[key]
            .as_str()
            .map(PathBuf::from)
            .ok_or_else(|| anyhow!("cargo metadata: no {key}"))
    };
    let mut packages = Vec::new();
    for p in json["packages"].as_array().into_iter().flatten() {
        let str_of = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
        let cdylib = p["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| {
                t["crate_types"]
                    .as_array()
                    .is_some_and(|c| c.iter().any(|c| c == "cdylib"))
            })
            .map(|t| str_of(&t["name"]).replace('-', "_"));
        packages.push(Package {
            name: str_of(&p["name"]),
            manifest_path: PathBuf::from(str_of(&p["manifest_path"])),
            cdylib,
            dependencies: p["dependencies"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|d| str_of(&d["name"]))
                .collect(),
        });
    }
    Ok(Metadata {
        workspace_root: path("workspace_root")?,
        target_directory: path("target_directory")?,
        packages,
    })
}

/// The profile guests are built with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Profile {
    /// The workspace's `[profile.guest]`.
    Guest,
    /// `--release` with `panic = "abort"` (for crates outside this repo).
    ReleaseAbort,
}

impl Profile {
    fn for_workspace(root: &Path) -> Result<Self> {
        let manifest = root.join("Cargo.toml");
        let text = fs::read_to_string(&manifest).with_context(|| format!("reading {}", manifest.display()))?;
        let toml: toml::Table = text
            .parse()
            .with_context(|| format!("parsing {}", manifest.display()))?;
        let has_guest = toml.get("profile").and_then(|p| p.get("guest")).is_some();
        Ok(if has_guest { Self::Guest } else { Self::ReleaseAbort })
    }

    fn apply(self, cmd: &mut Command) {
        match self {
            Self::Guest => {
                cmd.args(["--profile", "guest"]);
            }
            Self::ReleaseAbort => {
                cmd.arg("--release").env("CARGO_PROFILE_RELEASE_PANIC", "abort");
            }
        }
    }

    fn dir(self) -> &'static str {
        match self {
            Self::Guest => "guest",
            Self::ReleaseAbort => "release",
        }
    }
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

/// Checks that `bytes` are a component (not a core module) and that it
/// exports `wasmkeep:actor/events@...`.
///
/// # Errors
///
/// Says what the bytes are instead.
pub fn check_component(bytes: &[u8]) -> Result<()> {
    check_is_component(bytes)?;
    let mut depth = 0usize;
    let mut exports = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(bytes) {
        match payload.context("invalid component")? {
            wasmparser::Payload::ModuleSection { .. } | wasmparser::Payload::ComponentSection { .. } => depth += 1,
            wasmparser::Payload::End(_) => depth = depth.saturating_sub(1),
            wasmparser::Payload::ComponentExportSection(reader) if depth == 0 => {
                for export in reader {
                    exports.push(export.context("invalid export")?.name.name.to_string());
                }
            }
            _ => {}
        }
    }
    if exports.iter().any(|e| e.starts_with(EVENTS_EXPORT_PREFIX)) {
        Ok(())
    } else {
        bail!(
            "the component does not export {EVENTS_EXPORT_PREFIX}...; it exports {exports:?} \
             (did the crate call wasmkeep_actor::export!?)"
        )
    }
}

/// Fails unless `bytes` start as a component does (not a core module), saying what they are.
fn check_is_component(bytes: &[u8]) -> Result<()> {
    const MAGIC: &[u8] = b"\0asm";
    const COMPONENT_VERSION_AND_LAYER: &[u8] = &[0x0d, 0x00, 0x01, 0x00];
    if bytes.len() < 8 || &bytes[..4] != MAGIC {
        bail!("not a WebAssembly binary");
    }
    if &bytes[4..8] != COMPONENT_VERSION_AND_LAYER {
        bail!(
            "a core WebAssembly module, not a component (header {:02x?}); build for {TARGET}",
            &bytes[4..8]
        );
    }
    Ok(())
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
