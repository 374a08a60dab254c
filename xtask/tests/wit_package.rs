//! Every SDK reports the WIT package it is built on; each must be the package
//! line of `wit/actor.wit` (`package wasmkeep:actor@X.Y.Z;`), so that a WIT
//! version bump cannot leave an SDK's constant behind.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn read(rel: &str) -> Result<String> {
    let path = repo_root().join(rel);
    fs::read_to_string(&path).with_context(|| format!("reading {rel}"))
}

/// `wasmkeep:actor@X.Y.Z`, from the `package ...;` line of wit/actor.wit.
fn wit_package() -> Result<String> {
    let wit = read("wit/actor.wit")?;
    let Some(line) = wit.lines().map(str::trim).find(|l| l.starts_with("package ")) else {
        bail!("wit/actor.wit has no `package` line");
    };
    let package = line
        .strip_prefix("package ")
        .and_then(|rest| rest.strip_suffix(';'))
        .with_context(|| format!("wit/actor.wit: unexpected package line {line:?}"))?;
    Ok(package.trim().to_string())
}

/// The string literal that follows `marker` in the file `rel` (the SDK's
/// constant in its source, e.g. `WIT_PACKAGE = "..."`), and that it is there
/// exactly once.
fn quoted_after(rel: &str, marker: &str) -> Result<String> {
    let text = read(rel)?;
    let mut found = text.match_indices(marker).map(|(at, _)| {
        let rest = &text[at + marker.len()..];
        rest.strip_prefix('"')
            .and_then(|r| r.split_once('"'))
            .map(|(value, _)| value.to_string())
    });
    let first = found
        .next()
        .flatten()
        .with_context(|| format!("{rel}: no {marker}\"...\" found"))?;
    if found.next().is_some() {
        bail!("{rel}: {marker} appears more than once; which one is the SDK's?");
    }
    Ok(first)
}

#[test]
fn every_sdk_reports_the_package_of_wit_actor_wit() -> Result<()> {
    let want = wit_package()?;
    assert!(want.starts_with("wasmkeep:actor@"), "wit/actor.wit declares {want}");
    let reported = [
        // Rust: the constant itself, through the crate (a dev-dependency).
        (
            "Rust: wasmkeep_actor::WIT_PACKAGE",
            wasmkeep_actor::WIT_PACKAGE.to_string(),
        ),
        // The others are read from their source. Running them costs more than
        // the check is worth: the TypeScript module imports `wasmkeep:actor/*`,
        // which only exists inside a component; C needs a compiler run; the
        // Python import needs the venv of sdk-python/scripts/setup.sh (its own
        // tests assert the imported value: sdk-python/tests/test_sdk.py).
        (
            "TypeScript: WIT_PACKAGE in sdk-ts/src/index.ts",
            quoted_after("sdk-ts/src/index.ts", "export const WIT_PACKAGE = ")?,
        ),
        (
            "Python: wasmkeep_actor.WIT_PACKAGE in sdk-python/wasmkeep_actor/__init__.py",
            quoted_after("sdk-python/wasmkeep_actor/__init__.py", "\nWIT_PACKAGE = ")?,
        ),
        (
            "C: WASMKEEP_WIT_PACKAGE in sdk-c/include/wasmkeep.h",
            quoted_after("sdk-c/include/wasmkeep.h", "#define WASMKEEP_WIT_PACKAGE ")?,
        ),
    ];
    let wrong: Vec<String> = reported
        .iter()
        .filter(|(_, got)| *got != want)
        .map(|(what, got)| format!("{what} is {got:?}"))
        .collect();
    assert!(
        wrong.is_empty(),
        "wit/actor.wit declares package {want}, but:\n  {}\nupdate each to {want:?}",
        wrong.join("\n  ")
    );
    Ok(())
}
