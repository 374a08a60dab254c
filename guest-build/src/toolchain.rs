//! The toolchain that builds `wasm32-wasip2` components: an installed
//! target, or Debian's `rustc-web` building std (`-Zbuild-std`), and the
//! `cargo build` command each runs.

use std::env;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Result, bail};

use crate::{APT_INSTALL, TARGET, TOOLCHAIN_ENV, run_output};

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
    pub(crate) fn cargo_build(&self) -> Command {
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
