//! `cargo xtask release [--profile release|debug] [--only PIECE]...`: every
//! package of one version into `target/release-packages/<version>/`, with a
//! `SHA256SUMS` of them (ADR 029):
//!
//! - `crates/`: the published crates' `.crate` files, the workspace-hack as
//!   its empty stub (cargo-hakari's publishing method: `cargo hakari
//!   disable`, package, `cargo hakari generate`);
//! - `npm/`: `@wasmkeep/actor`'s tarball and its platform package's, with
//!   this platform's host binary, harness addon and QuickJS composer
//!   (`sdk-ts/scripts/pack.js`);
//! - `python/`: the SDK's wheel and sdist, and the harness wheel with the
//!   host binary as its `wasmkeep-shim` script, one wheel for every CPython
//!   from 3.11 on glibc 2.28 or newer (`sdk-python/scripts/harness-wheel.sh`,
//!   `sdk-python/scripts/wheels.sh`);
//! - `c/`: the C SDK's archive for this platform: headers, the harness as a
//!   shared library with a SONAME (and its static library), `mk/`, `cmake/`,
//!   pkg-config files that find the archive wherever it is unpacked, the
//!   host binary in `bin/` and a README for its user
//!   (`sdk-c/ARCHIVE_README.md`), each at the archive's top: unpacked with
//!   `tar -xzf … -C $PREFIX`, the host is `$PREFIX/bin/wasmkeep-shim`.
//!
//! The profile is a flag: `debug` proves the command on a machine where a
//! release build of wasmtime (about 9 minutes on 2 cores) is not yet there.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail, ensure};
use sha2::{Digest, Sha256};

/// The crates published to crates.io, in the order they depend on each other.
pub(crate) const PUBLISHED_CRATES: &[&str] = &[
    "wasmkeep-workspace-hack",
    "wasmkeep-actor",
    "wasmkeep-guest-build",
    "wasmkeep-store",
    "wasmkeep-host",
    "wasmkeep-host-testing",
    "wasmkeep-actor-testing",
    "wasmkeep-shim",
];

/// A part of the release, built by its ecosystem's own tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Piece {
    Crates,
    Npm,
    Python,
    C,
}

/// The cargo profile the native parts (host binary, harnesses) are built with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Profile {
    Release,
    Debug,
}

impl Profile {
    fn dir(self) -> &'static str {
        match self {
            Self::Release => "release",
            Self::Debug => "debug",
        }
    }
}

#[derive(clap::Args)]
pub(crate) struct ReleaseArgs {
    /// The profile of the native parts (the host binary and the harnesses).
    #[arg(long, value_enum, default_value = "release")]
    profile: Profile,
    /// Only these pieces [default: all four].
    #[arg(long, value_enum)]
    only: Vec<Piece>,
    /// Where to write [default: target/release-packages/<version>].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Verify each crate by building it from its package (compiles wasmtime
    /// again, in target/package).
    #[arg(long)]
    verify: bool,
    /// Package even with uncommitted changes in the working tree.
    #[arg(long)]
    allow_dirty: bool,
}

pub(crate) fn release(root: &Path, args: &ReleaseArgs) -> Result<()> {
    let version = crate::versions::workspace_version(root)?;
    crate::versions::versions(root, true, None)?;
    if !args.allow_dirty {
        let status = output(Command::new("git").current_dir(root).args(["status", "--porcelain"]))?;
        ensure!(
            status.trim().is_empty(),
            "the working tree has changes (commit them, or pass --allow-dirty):\n{status}"
        );
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| target_dir(root).join("release-packages").join(&version));
    if out.exists() {
        fs::remove_dir_all(&out).with_context(|| format!("emptying {}", out.display()))?;
    }
    fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let out = out.canonicalize()?;
    let pieces = if args.only.is_empty() {
        vec![Piece::Crates, Piece::Npm, Piece::Python, Piece::C]
    } else {
        args.only.clone()
    };
    for piece in pieces {
        let dir = out.join(format!("{piece:?}").to_lowercase());
        fs::create_dir_all(&dir)?;
        println!("xtask release: {piece:?} into {}", dir.display());
        match piece {
            Piece::Crates => crates(root, &dir, args)?,
            Piece::Npm => npm(root, &dir, args.profile)?,
            Piece::Python => python(root, &dir, args.profile)?,
            Piece::C => c_archive(root, &dir, &version, args.profile)?,
        }
    }
    let sums = sha256sums(&out)?;
    fs::write(out.join("SHA256SUMS"), &sums)?;
    print!("{sums}");
    println!(
        "xtask release: {} (SHA256SUMS: sha256sum -c SHA256SUMS there)",
        out.display()
    );
    Ok(())
}

/// The published crates, packaged with the workspace-hack emptied (so that
/// its stub is what is published and no crate's lock file names the full
/// one), then the workspace-hack restored whatever happened.
fn crates(root: &Path, dir: &Path, args: &ReleaseArgs) -> Result<()> {
    hakari(root, "disable")?;
    let packaged = {
        let mut cmd = Command::new(crate::cargo());
        cmd.current_dir(root).args(["package", "--allow-dirty"]);
        if !args.verify {
            cmd.arg("--no-verify");
        }
        for name in PUBLISHED_CRATES {
            cmd.args(["-p", name]);
        }
        status(&mut cmd)
    };
    let restored = hakari(root, "generate");
    packaged?;
    restored?;
    let from = target_dir(root).join("package");
    for name in PUBLISHED_CRATES {
        let file = newest_crate(&from, name)?;
        let to = dir.join(file.file_name().context("a .crate file name")?);
        fs::copy(&file, &to).with_context(|| format!("copying {}", file.display()))?;
    }
    Ok(())
}

fn hakari(root: &Path, verb: &str) -> Result<()> {
    let mut cmd = Command::new(crate::cargo());
    cmd.current_dir(root).args(["hakari", verb]);
    status(&mut cmd).with_context(|| {
        format!("cargo hakari {verb} (bash scripts/setup.sh installs cargo-hakari; `cargo hakari generate` restores the workspace-hack)")
    })
}

/// `<name>-<version>.crate` in `dir`, the newest (cargo keeps older ones).
fn newest_crate(dir: &Path, name: &str) -> Result<PathBuf> {
    let prefix = format!("{name}-");
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    for entry in fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        let file = path.file_name().and_then(|f| f.to_str()).unwrap_or_default();
        let is_it = file
            .strip_prefix(&prefix)
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()) && rest.ends_with(".crate"));
        if is_it {
            found.push((fs::metadata(&path)?.modified()?, path));
        }
    }
    found.sort();
    found
        .pop()
        .map(|(_, p)| p)
        .with_context(|| format!("cargo package wrote no {name}-<version>.crate into {}", dir.display()))
}

/// The npm tarballs: the QuickJS parts, then pack.js (which builds the host
/// and the addon in the profile, strips them, and packs the main package and
/// this platform's).
fn npm(root: &Path, dir: &Path, profile: Profile) -> Result<()> {
    ensure!(
        root.join("sdk-ts/node_modules").is_dir(),
        "sdk-ts/node_modules is missing: run `npm ci` in sdk-ts (bash scripts/setup.sh does)"
    );
    crate::ts_quickjs::build(root, profile == Profile::Release)?;
    let mut cmd = Command::new("node");
    cmd.current_dir(root)
        .args(["sdk-ts/scripts/pack.js", "--profile", profile.dir(), "--out"])
        .arg(dir);
    status(&mut cmd)
}

/// The Python SDK's wheel and sdist, and the harness wheel carrying the
/// host binary (ADR 032). The harness wheel is `cp311-abi3-manylinux_2_28`
/// (ADR 065): `harness-wheel.sh` builds it in the release's profile and
/// writes the zig linker wrapper for glibc 2.28; the host binary it carries
/// is linked by that wrapper too, or the wheel would need the glibc of this
/// machine (auditwheel, in `wheels.sh`, checks every binary in it).
fn python(root: &Path, dir: &Path, profile: Profile) -> Result<()> {
    let mut cmd = Command::new("bash");
    cmd.current_dir(root)
        .args(["sdk-python/scripts/harness-wheel.sh", "--profile"])
        .arg(match profile {
            Profile::Release => "release",
            Profile::Debug => "dev",
        });
    status(&mut cmd)?;
    let shim = host_binary_for_glibc_2_28(root, profile)?;
    let mut cmd = Command::new("bash");
    cmd.current_dir(root)
        .args(["sdk-python/scripts/wheels.sh", "--sdist", "--shim"])
        .arg(&shim)
        .arg("--out")
        .arg(dir);
    status(&mut cmd)
}

/// The host binary of the profile linked by `zig cc` for glibc 2.28 (the
/// wrapper `harness-wheel.sh` writes), copied to
/// `target/python-shim/wasmkeep-shim`. Only the binary's own crate is
/// compiled again (`cargo rustc` gives the linker to it alone); the next
/// ordinary build of the shim compiles it again with the usual linker, as
/// the C archive's harness is linked again without its SONAME.
fn host_binary_for_glibc_2_28(root: &Path, profile: Profile) -> Result<PathBuf> {
    let wrapper = root.join("target/py-venv/bin/wasmkeep-zig-cc");
    ensure!(
        wrapper.is_file(),
        "{} is missing (sdk-python/scripts/harness-wheel.sh writes it)",
        wrapper.display()
    );
    let mut cmd = Command::new(crate::cargo());
    cmd.current_dir(root)
        .args(["rustc", "--quiet", "-p", "wasmkeep-shim", "--bin", "wasmkeep-shim"]);
    if profile == Profile::Release {
        cmd.arg("--release");
    }
    cmd.args(["--", "-C"]).arg(format!("linker={}", wrapper.display()));
    status(&mut cmd)?;
    let built = target_dir(root).join(profile.dir()).join("wasmkeep-shim");
    let out = target_dir(root).join("python-shim");
    fs::create_dir_all(&out)?;
    let copy = out.join("wasmkeep-shim");
    fs::copy(&built, &copy).with_context(|| format!("copying {} to {}", built.display(), copy.display()))?;
    Ok(copy)
}

/// The host binary of the profile, built if it is not (a no-op when it is).
fn host_binary(root: &Path, profile: Profile) -> Result<PathBuf> {
    let mut cmd = Command::new(crate::cargo());
    cmd.current_dir(root).args(["build", "--quiet", "-p", "wasmkeep-shim"]);
    if profile == Profile::Release {
        cmd.arg("--release");
    }
    status(&mut cmd)?;
    Ok(target_dir(root).join(profile.dir()).join("wasmkeep-shim"))
}

/// The harness library's SONAME: its ABI is this minor version's (0.x.y
/// and 0.x.z are compatible, as semver's caret says).
fn soname(version: &str) -> String {
    let mut parts = version.split('.');
    let (major, minor) = (parts.next().unwrap_or("0"), parts.next().unwrap_or("0"));
    if major == "0" {
        format!("libwasmkeep_c_harness.so.0.{minor}")
    } else {
        format!("libwasmkeep_c_harness.so.{major}")
    }
}

/// The C SDK's archive: `make -C sdk-c install` into a staging prefix, the
/// harness linked with a SONAME (then linked again without, for the
/// workspace), pkg-config files made relocatable, tar.gz.
fn c_archive(root: &Path, dir: &Path, version: &str, profile: Profile) -> Result<()> {
    let soname = soname(version);
    // Only the harness crate is linked again with the SONAME; its
    // dependencies (wasmtime) are the ones already built in the profile.
    let mut cmd = Command::new(crate::cargo());
    cmd.current_dir(root)
        .args(["rustc", "--quiet", "-p", "wasmkeep-c-harness", "--lib"]);
    if profile == Profile::Release {
        cmd.arg("--release");
    }
    cmd.args(["--", "-C"]).arg(format!("link-arg=-Wl,-soname,{soname}"));
    status(&mut cmd)?;
    let adapter = root.join("sdk-c/lib/wasi_snapshot_preview1.reactor.wasm");
    if !adapter.is_file() {
        crate::c_adapter::write(&adapter)?;
    }

    let name = format!(
        "wasmkeep-c-sdk-{version}-{}-{}",
        std::env::consts::ARCH,
        std::env::consts::OS
    );
    let staging = target_dir(root).join("release-staging");
    if staging.exists() {
        fs::remove_dir_all(&staging)?;
    }
    let prefix = staging.join(&name);
    fs::create_dir_all(&prefix)?;
    let prefix = prefix.canonicalize()?;
    let mut cmd = Command::new("make");
    cmd.current_dir(root)
        .args(["--quiet", "-C", "sdk-c", "install"])
        .arg(format!("PREFIX={}", prefix.display()))
        .arg(format!(
            "WASMKEEP_TARGET={}",
            target_dir(root).join(profile.dir()).display()
        ));
    let installed = status(&mut cmd);
    // The workspace's own library again, without the SONAME: the checkout's
    // C tests and `new --sdk` projects link it by its file name, and a
    // SONAME'd one would make them look for libwasmkeep_c_harness.so.0.<minor>.
    let mut cmd = Command::new(crate::cargo());
    cmd.current_dir(root)
        .args(["build", "--quiet", "-p", "wasmkeep-c-harness"]);
    if profile == Profile::Release {
        cmd.arg("--release");
    }
    let restored = status(&mut cmd);
    installed?;
    restored?;

    // The library under its SONAME, and the name the linker looks for beside it.
    let lib = prefix.join("lib");
    fs::rename(lib.join("libwasmkeep_c_harness.so"), lib.join(&soname))?;
    std::os::unix::fs::symlink(&soname, lib.join("libwasmkeep_c_harness.so"))?;
    for file in [lib.join(&soname), lib.join("libwasmkeep_c_harness.a")] {
        // Debug info is most of a debug build's size; the archive does not need it.
        let _ = Command::new("strip").arg("--strip-debug").arg(&file).status();
    }
    // pkg-config finds the prefix from where its file is: the archive can be
    // unpacked anywhere. (The CMake files already do, from their own folder.)
    let staged = prefix.display().to_string();
    for pc in ["wasmkeep.pc", "wasmkeep-harness.pc"] {
        let at = lib.join("pkgconfig").join(pc);
        let text = fs::read_to_string(&at)?;
        let text = text
            .lines()
            .filter(|l| !(l.starts_with('#') && l.contains(&staged)))
            .map(|l| l.replace(&staged, "${pcfiledir}/../.."))
            .collect::<Vec<_>>()
            .join("\n");
        fs::write(&at, text + "\n")?;
    }
    // The host, so that a C project serves with no Rust (ADR 032).
    let bin = prefix.join("bin");
    fs::create_dir_all(&bin)?;
    fs::copy(host_binary(root, profile)?, bin.join("wasmkeep-shim"))?;
    let _ = Command::new("strip").arg(bin.join("wasmkeep-shim")).status();
    // Its own README, for a user who has only the archive.
    fs::copy(root.join("sdk-c/ARCHIVE_README.md"), prefix.join("README.md"))?;
    let leftover = text_files_naming(&prefix, &staged)?;
    if !leftover.is_empty() {
        bail!("the C archive names its staging folder in {leftover:?}");
    }
    pack_at_top(&prefix, &dir.join(format!("{name}.tar.gz")))?;
    fs::remove_dir_all(&staging)?;
    Ok(())
}

/// A tar.gz of what `prefix` holds, each entry at the archive's top
/// (`bin/…`, `lib/…`, `README.md`), not in a folder of the archive's name:
/// `tar -xzf <archive> -C "$PREFIX"` makes `$PREFIX/bin/wasmkeep-shim`, as
/// the READMEs say (before, it made `$PREFIX/<name>/bin/…`).
fn pack_at_top(prefix: &Path, archive: &Path) -> Result<()> {
    let mut entries = fs::read_dir(prefix)?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<std::io::Result<Vec<_>>>()?;
    entries.sort();
    let mut cmd = Command::new("tar");
    cmd.arg("-czf").arg(archive).arg("-C").arg(prefix).args(&entries);
    status(&mut cmd)
}

/// The text files (not libraries) under `dir` that contain `needle`.
fn text_files_naming(dir: &Path, needle: &str) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            found.extend(text_files_naming(&path, needle)?);
        } else if entry.file_type()?.is_file() {
            let bytes = fs::read(&path)?;
            if let Ok(text) = std::str::from_utf8(&bytes)
                && text.contains(needle)
            {
                found.push(path);
            }
        }
    }
    Ok(found)
}

/// `sha256sum`'s format for every file under `out`, by path relative to it.
fn sha256sums(out: &Path) -> Result<String> {
    fn walk(base: &Path, dir: &Path, lines: &mut Vec<String>) -> Result<()> {
        for entry in fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                walk(base, &path, lines)?;
            } else if path.file_name().is_some_and(|f| f != "SHA256SUMS") {
                let digest = Sha256::digest(fs::read(&path)?);
                let rel = path.strip_prefix(base)?.display().to_string();
                lines.push(format!("{}  {rel}\n", hex(&digest)));
            }
        }
        Ok(())
    }
    let mut lines = Vec::new();
    walk(out, out, &mut lines)?;
    lines.sort_by(|a, b| a[66..].cmp(&b[66..]));
    Ok(lines.concat())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), Into::into)
}

fn status(cmd: &mut Command) -> Result<()> {
    let shown = format!("{cmd:?}");
    let status = cmd.status().with_context(|| format!("running {shown}"))?;
    ensure!(status.success(), "{shown} failed ({status})");
    Ok(())
}

fn output(cmd: &mut Command) -> Result<String> {
    let shown = format!("{cmd:?}");
    let out = cmd.output().with_context(|| format!("running {shown}"))?;
    ensure!(out.status.success(), "{shown} failed ({})", out.status);
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sonames_follow_semver_compatibility() {
        assert_eq!(soname("0.2.0"), "libwasmkeep_c_harness.so.0.2");
        assert_eq!(soname("0.2.7"), "libwasmkeep_c_harness.so.0.2");
        assert_eq!(soname("1.4.0"), "libwasmkeep_c_harness.so.1");
    }

    #[test]
    fn sums_are_sha256sum_lines_sorted_by_path() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        fs::create_dir_all(dir.path().join("c")).ok();
        fs::write(dir.path().join("c/b.txt"), "b").ok();
        fs::write(dir.path().join("a.txt"), "").ok();
        fs::write(dir.path().join("SHA256SUMS"), "old").ok();
        let sums = sha256sums(dir.path()).unwrap_or_default();
        assert_eq!(
            sums,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  a.txt\n\
             3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d  c/b.txt\n"
        );
    }

    /// What `tar -xzf <archive> -C "$PREFIX"` makes of the C archive: its
    /// layout right in `$PREFIX`, as its README and the repository's say.
    #[test]
    fn the_c_archive_unpacks_into_the_prefix_itself() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let staged = tmp.path().join("wasmkeep-c-sdk-0.0.0-arch-os");
        for file in ["bin/wasmkeep-shim", "lib/pkgconfig/wasmkeep.pc", "README.md"] {
            let at = staged.join(file);
            fs::create_dir_all(at.parent().unwrap_or(&staged)).ok();
            fs::write(&at, file).ok();
        }
        let archive = tmp.path().join("a.tar.gz");
        pack_at_top(&staged, &archive).unwrap_or_else(|e| panic!("{e:#}"));
        let prefix = tmp.path().join("prefix");
        fs::create_dir_all(&prefix).ok();
        let mut cmd = Command::new("tar");
        cmd.arg("-xzf").arg(&archive).arg("-C").arg(&prefix);
        status(&mut cmd).unwrap_or_else(|e| panic!("{e:#}"));
        for file in ["bin/wasmkeep-shim", "lib/pkgconfig/wasmkeep.pc", "README.md"] {
            assert!(prefix.join(file).is_file(), "$PREFIX/{file}");
        }
    }

    /// The files the C archive ships, text ones, as a registry user reads
    /// them: its README, the headers, `mk/`, `cmake/` and pkg-config
    /// templates. None sends the user into a checkout of the repository.
    #[test]
    fn the_c_archive_s_texts_name_no_checkout() {
        let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk-c");
        let mut shipped = vec![sdk.join("ARCHIVE_README.md")];
        for dir in ["include", "mk", "cmake", "pkgconfig", "src"] {
            for entry in fs::read_dir(sdk.join(dir)).into_iter().flatten().flatten() {
                shipped.push(entry.path());
            }
        }
        let never = [
            "target/debug",
            "target/release",
            "setup.sh",
            "sdk-c/",
            "scripts/",
            "cargo xtask",
            "the repository",
            "wasmkeep repository",
            "examples/",
        ];
        for file in &shipped {
            let text = fs::read_to_string(file).unwrap_or_default();
            for word in never {
                assert!(
                    !text.contains(word),
                    "{} (shipped in the C archive) says {word:?}",
                    file.display()
                );
            }
        }
        // Its links: web pages, or files the archive holds.
        let readme = fs::read_to_string(sdk.join("ARCHIVE_README.md")).unwrap_or_default();
        for link in readme.split("](").skip(1).filter_map(|l| l.split(')').next()) {
            assert!(
                link.starts_with("https://"),
                "ARCHIVE_README.md links {link}, which the archive does not hold"
            );
        }
        for needs in [
            "wasm32-wasi",
            "wasi-libc",
            "wasm-tools",
            "-C \"$PREFIX\"",
            "PATH=$PREFIX/bin",
        ] {
            assert!(readme.contains(needs), "ARCHIVE_README.md names {needs:?}");
        }
    }

    /// `wasmkeep-actor-testing` ships a README (crates.io shows it): its
    /// manifest names one, the file is there, and it links only web pages,
    /// since nothing else of the repository ships with the crate.
    #[test]
    fn the_testing_crate_ships_a_readme_of_its_own() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk-rust/testing");
        let manifest: toml::Table = fs::read_to_string(dir.join("Cargo.toml"))
            .unwrap_or_default()
            .parse()
            .unwrap_or_default();
        let readme = manifest["package"].get("readme").and_then(toml::Value::as_str);
        assert_eq!(readme, Some("README.md"), "its Cargo.toml names its README");
        let text = fs::read_to_string(dir.join("README.md")).unwrap_or_default();
        assert!(text.contains("wasmkeep-actor-testing"), "the README is there");
        for link in text.split("](").skip(1).filter_map(|l| l.split(')').next()) {
            assert!(
                link.starts_with("https://"),
                "the README links {link}, which the crate does not ship"
            );
        }
    }

    #[test]
    fn the_published_crates_are_the_workspace_publishable_ones() {
        // Every crate named here may be published, and every other member may not.
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let workspace: toml::Table = fs::read_to_string(root.join("Cargo.toml"))
            .unwrap_or_default()
            .parse()
            .unwrap_or_default();
        let members = workspace["workspace"]["members"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut publishable = Vec::new();
        for member in members.iter().filter_map(|m| m.as_str()) {
            let manifest: toml::Table = fs::read_to_string(root.join(member).join("Cargo.toml"))
                .unwrap_or_default()
                .parse()
                .unwrap_or_default();
            let package = &manifest["package"];
            if package.get("publish").and_then(toml::Value::as_bool) != Some(false) {
                publishable.push(package["name"].as_str().unwrap_or_default().to_owned());
            }
        }
        publishable.sort();
        let mut named: Vec<String> = PUBLISHED_CRATES.iter().map(|s| (*s).to_owned()).collect();
        named.sort();
        assert_eq!(publishable, named);
    }
}
