//! `cargo xtask versions [--check | --set X.Y.Z]`: one version for every
//! package (ADR 029). The workspace's `[workspace.package] version` is the
//! one place it is set; every other place that states it (the npm package,
//! the Python packages, the C SDK's header and pkg-config file, what each SDK
//! reports at run time, the CHANGELOG) is listed here, checked by the test
//! command and rewritten by `--set`.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result, bail};

/// One line of one file that states the version: the first line of `file`
/// (after a line starting with `after`, when given) that starts with
/// `starts`; the version follows `before` on it and ends at `end` (or the
/// line's end when `end` is empty).
struct Place {
    file: &'static str,
    after: Option<&'static str>,
    starts: &'static str,
    before: &'static str,
    end: &'static str,
}

const fn place(file: &'static str, starts: &'static str, before: &'static str, end: &'static str) -> Place {
    Place {
        file,
        after: None,
        starts,
        before,
        end,
    }
}

/// The workspace's version: every other place must say the same.
const SOURCE: Place = place("Cargo.toml", "version = \"", "version = \"", "\"");

const PLACES: &[Place] = &[
    // The requirements the workspace's crates put on each other (published as is).
    place("Cargo.toml", "wasmkeep-actor = {", "version = \"", "\""),
    place("Cargo.toml", "wasmkeep-shim = {", "version = \"", "\""),
    place("Cargo.toml", "wasmkeep-host = {", "version = \"", "\""),
    place("Cargo.toml", "wasmkeep-host-testing = {", "version = \"", "\""),
    place("Cargo.toml", "wasmkeep-store = {", "version = \"", "\""),
    place("Cargo.toml", "wasmkeep-guest-build = {", "version = \"", "\""),
    place("Cargo.toml", "wasmkeep-actor-testing = {", "version = \"", "\""),
    // The Rust SDK's README (the crate's documentation): what a project writes.
    place("sdk-rust/README.md", "wasmkeep-actor = \"", "= \"", "\""),
    place("sdk-rust/README.md", "wasmkeep-actor-testing = \"", "= \"", "\""),
    // npm: the package, its lock file (top and the root package), and VERSION.
    place("sdk-ts/package.json", "  \"version\": \"", "\"version\": \"", "\""),
    place("sdk-ts/package-lock.json", "  \"version\": \"", "\"version\": \"", "\""),
    Place {
        file: "sdk-ts/package-lock.json",
        after: Some("    \"\": {"),
        starts: "      \"version\": \"",
        before: "\"version\": \"",
        end: "\"",
    },
    place("sdk-ts/src/index.ts", "export const VERSION = \"", "VERSION = \"", "\""),
    // Python: the SDK, its harness (pinned to the SDK), and __version__.
    place("sdk-python/pyproject.toml", "version = \"", "version = \"", "\""),
    place(
        "sdk-python/pyproject.toml",
        "testing = [\"pytest>=7\", \"wasmkeep-actor-harness==",
        "harness==",
        "\"",
    ),
    place(
        "sdk-python/harness/pyproject.toml",
        "version = \"",
        "version = \"",
        "\"",
    ),
    place(
        "sdk-python/harness/pyproject.toml",
        "dependencies = [\"wasmkeep-actor==",
        "==",
        "\"",
    ),
    place(
        "sdk-python/wasmkeep_actor/__init__.py",
        "__version__ = \"",
        "__version__ = \"",
        "\"",
    ),
    place(
        "examples/counter-py/pyproject.toml",
        "dependencies = [\"wasmkeep-actor==",
        "==",
        "\"",
    ),
    // C: the header (wk_version()) and the pkg-config file (the Makefile's VERSION).
    place(
        "sdk-c/include/wasmkeep.h",
        "#define WASMKEEP_VERSION \"",
        "VERSION \"",
        "\"",
    ),
    place("sdk-c/pkgconfig/wasmkeep.pc.in", "Version: ", "Version: ", ""),
    // The Python SDK's own test of __version__.
    place(
        "sdk-python/tests/test_sdk.py",
        "    assert wasmkeep_actor.__version__ == \"",
        "== \"",
        "\"",
    ),
    place(
        "sdk-python/tests/test_sdk.py",
        "    assert host_version() == \"",
        "== \"",
        "\"",
    ),
];

/// The changelog, which must have a section `## <version>` (its text is the author's to write).
const CHANGELOG: &str = "CHANGELOG.md";

fn changelog_has(root: &Path, version: &str) -> Result<bool> {
    let text = fs::read_to_string(root.join(CHANGELOG)).with_context(|| format!("reading {CHANGELOG}"))?;
    Ok(text.lines().any(|l| {
        l.strip_prefix("## ")
            .is_some_and(|rest| rest.split_whitespace().next() == Some(version))
    }))
}

/// Where a place's version is in its file: the byte range.
fn locate(root: &Path, p: &Place) -> Result<(String, std::ops::Range<usize>)> {
    let path = root.join(p.file);
    let text = fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let mut offset = 0;
    let mut armed = p.after.is_none();
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if !armed {
            armed = p.after.is_some_and(|a| bare.starts_with(a));
        } else if bare.starts_with(p.starts) {
            let from = bare
                .find(p.before)
                .with_context(|| format!("{}: no {:?} on {bare:?}", p.file, p.before))?
                + p.before.len();
            let len = if p.end.is_empty() {
                bare.len() - from
            } else {
                bare[from..].find(p.end).unwrap_or(bare.len() - from)
            };
            let range = offset + from..offset + from + len;
            return Ok((text, range));
        }
        offset += line.len();
    }
    bail!("{}: no line starting with {:?}", p.file, p.starts)
}

/// The workspace's version (`[workspace.package] version`).
pub(crate) fn workspace_version(root: &Path) -> Result<String> {
    version_at(root, &SOURCE)
}

fn version_at(root: &Path, p: &Place) -> Result<String> {
    let (text, range) = locate(root, p)?;
    Ok(text[range].to_owned())
}

/// `--check` (and no flag): every place says the workspace's version.
/// `--set`: write `new` into the workspace and every place.
pub(crate) fn versions(root: &Path, check: bool, set: Option<&str>) -> Result<()> {
    if let Some(new) = set {
        let valid = new.split('.').count() == 3
            && new
                .split('.')
                .all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if !valid {
            bail!("{new:?} is not a version of the form X.Y.Z");
        }
        for p in std::iter::once(&SOURCE).chain(PLACES) {
            let (mut text, range) = locate(root, p)?;
            text.replace_range(range, new);
            fs::write(root.join(p.file), text).with_context(|| format!("writing {}", p.file))?;
        }
        println!("xtask: every package is now {new}");
        if !changelog_has(root, new)? {
            println!("xtask: now add a `## {new}` section to {CHANGELOG}");
        }
        return versions(root, true, None);
    }
    let want = version_at(root, &SOURCE)?;
    let mut drift = Vec::new();
    for p in PLACES {
        let have = version_at(root, p)?;
        if have != want {
            drift.push(format!("{} ({}…) says {have}", p.file, p.starts.trim()));
        }
    }
    if !changelog_has(root, &want)? {
        drift.push(format!("{CHANGELOG} has no `## {want}` section"));
    }
    if drift.is_empty() {
        println!(
            "xtask: every package says {want} ({} places), and {CHANGELOG} has its section",
            PLACES.len() + 1
        );
        return Ok(());
    }
    let list = drift.join("\n  ");
    if check {
        bail!(
            "the workspace's version is {want}, but:\n  {list}\n(cargo xtask versions --set {want} writes it everywhere)"
        );
    }
    println!("xtask: the workspace's version is {want}, but:\n  {list}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    #[test]
    fn every_place_is_found() {
        for p in std::iter::once(&SOURCE).chain(PLACES) {
            let v = version_at(&repo(), p).unwrap_or_else(|e| panic!("{}: {e:#}", p.file));
            assert!(v.split('.').count() == 3, "{}: {v:?}", p.file);
        }
    }

    #[test]
    fn drift_is_an_error_and_set_fixes_it() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let dir = tmp.path().to_path_buf();
        fs::copy(repo().join(CHANGELOG), dir.join(CHANGELOG)).ok();
        for p in std::iter::once(&SOURCE).chain(PLACES) {
            let to = dir.join(p.file);
            fs::create_dir_all(to.parent().unwrap_or(&dir)).ok();
            fs::copy(repo().join(p.file), &to).ok();
        }
        assert!(versions(&dir, true, None).is_ok());
        let (mut text, range) = locate(&dir, &PLACES[10]).unwrap_or_else(|e| panic!("{e:#}"));
        text.replace_range(range, "9.9.9");
        fs::write(dir.join(PLACES[10].file), text).ok();
        assert!(versions(&dir, true, None).is_err());
        // --set writes every place; the check then fails only for the
        // changelog, whose section is the author's to write.
        assert!(versions(&dir, true, Some("9.9.9")).is_err());
        for p in std::iter::once(&SOURCE).chain(PLACES) {
            assert_eq!(version_at(&dir, p).unwrap_or_default(), "9.9.9", "{}", p.file);
        }
        fs::write(dir.join(CHANGELOG), "# Changelog\n\n## 9.9.9 (unreleased)\n").ok();
        assert!(versions(&dir, true, None).is_ok());
        assert!(versions(&dir, true, Some("not.a.version")).is_err());
    }
}
