//! `cargo xtask ts-quickjs [--release]`: the two parts the TypeScript SDK's
//! QuickJS build needs besides npm packages (ADR 017), into
//! `sdk-ts/build/quickjs/parts/`, where `wasmkeep-build` looks for them and
//! `sdk-ts/scripts/pack.js` ships them:
//!
//! - `quickjs-storage.wasm`: the storage adapter
//!   (`sdk-ts/native/quickjs-storage`, a wasm32 component built with the
//!   guest toolchain);
//! - `wasmkeep-ts-compose`: the composer that plugs it into each actor
//!   (`sdk-ts/native/compose`, a native binary).
//!
//! Unchanged files are not rewritten, so their modification times hold; the
//! stamp `.parts-built` beside them is, and says the composer's profile.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result, ensure};

/// Builds both parts (each skipped by cargo when current) and returns them,
/// as paths relative to `root`, for the caller to print.
pub(crate) fn build(root: &Path, release: bool) -> Result<[String; 2]> {
    let parts = root.join("sdk-ts/build/quickjs/parts");
    fs::create_dir_all(&parts).with_context(|| format!("creating {}", parts.display()))?;

    let adapter = parts.join("quickjs-storage.wasm");
    wasmkeep_guest_build::build_rust_component(&root.join("sdk-ts/native/quickjs-storage"), Some(&adapter))?;

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = std::process::Command::new(cargo);
    cmd.current_dir(root)
        .args(["build", "--quiet", "-p", "wasmkeep-ts-compose"]);
    if release {
        cmd.arg("--release");
    }
    let status = cmd.status().context("running cargo build -p wasmkeep-ts-compose")?;
    ensure!(status.success(), "cargo build -p wasmkeep-ts-compose failed ({status})");
    let profile = if release { "release" } else { "debug" };
    let built = target_dir(root).join(profile).join("wasmkeep-ts-compose");
    let dest = parts.join("wasmkeep-ts-compose");
    let bytes = fs::read(&built).with_context(|| format!("reading {}", built.display()))?;
    if fs::read(&dest).ok().as_deref() != Some(&bytes[..]) {
        // Written beside and renamed, so a running build never sees half a binary.
        let tmp = parts.join(".wasmkeep-ts-compose.tmp");
        fs::write(&tmp, &bytes).with_context(|| format!("writing {}", tmp.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&tmp, fs::Permissions::from_mode(0o755))?;
        }
        fs::rename(&tmp, &dest).with_context(|| format!("writing {}", dest.display()))?;
    }
    // The SDK's scripts (leaves: they never run xtask) read this to tell a
    // current build from a stale one, and which profile it was.
    let stamp = parts.join(STAMP);
    fs::write(&stamp, profile).with_context(|| format!("writing {}", stamp.display()))?;
    Ok([shown(root, &adapter), shown(root, &dest)])
}

/// Written after every build, with the composer's profile: newer than every
/// input means the parts are current (sdk-ts/build/quickjs/parts.js).
const STAMP: &str = ".parts-built";

fn target_dir(root: &Path) -> std::path::PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), Into::into)
}

fn shown(root: &Path, p: &Path) -> String {
    p.strip_prefix(root).unwrap_or(p).display().to_string()
}
