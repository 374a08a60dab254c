//! Project tasks, run as `cargo xtask <command>` from anywhere in the repo.

mod bucket_servers;
mod c_adapter;
mod c_bindings;
mod harness_ffi;
mod parity;
mod release;
mod serve;
mod setup;
mod step_runner;
mod test_steps;
mod ts_quickjs;
mod versions;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};

/// Where the WIT is vendored for Rust, relative to the repository root. Each
/// gets an exact copy of `wit/` (the `.wit` files, keeping subdirectories).
/// C's bindings are made here too ([`c_bindings`]); the TypeScript and Python
/// copies are written by their own generators ([`GENERATORS`]).
/// The host library's copy makes its published crate self-contained too
/// (its `bindgen!` reads it; ADR 029).
const WIT_COPIES: &[&str] = &["sdk-rust/wit", "host/runtime/wit"];

/// The command that regenerates everything `gen --check` checks.
const GEN_COMMAND: &str = "cargo xtask gen";

/// A generator script of one SDK, run from the repository root. Each takes
/// `--check` (generate into a temporary directory and compare) and exits 0
/// when current or written; 1 when files differ, each named on its own line
/// of stderr indented by two spaces (the summary repeats them); 3 when a tool
/// is missing or failed (saying which, and how setup installs it). The
/// command to advise is passed in `WASMKEEP_GEN_COMMAND`.
struct Generator {
    sdk: &'static str,
    /// The program and its arguments, without `--check`.
    command: &'static [&'static str],
    /// What runs it, and how scripts/setup.sh installs that (for when it is missing).
    program_missing: &'static str,
}

const GENERATORS: &[Generator] = &[
    Generator {
        sdk: "TypeScript",
        command: &["node", "sdk-ts/scripts/gen.js"],
        program_missing: "node (Node.js) is needed: bash scripts/setup.sh installs it (Debian packages nodejs and npm)",
    },
    Generator {
        sdk: "Python",
        command: &["bash", "sdk-python/scripts/gen.sh"],
        program_missing: "bash is needed: install it with your package manager",
    },
];

#[derive(Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask", about = "wasmkeep project tasks")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Install and build what is missing, idempotently, from the package
    /// registries only: `bash scripts/setup.sh` installs what cargo and
    /// xtask need first, then xtask builds the C SDK's adapter, the QuickJS
    /// backend's parts, the TypeScript, C and Python guests and the Python
    /// harness (`--serve`: only what serving the examples needs).
    Setup {
        /// Only what building and serving the examples needs.
        #[arg(long)]
        serve: bool,
    },
    /// Set up, then run every test and the conformance matrix, step by
    /// step, with a table of what each took (the README's `bash
    /// scripts/test.sh` runs setup, then this; CI runs exactly that).
    /// `--only`/`--from` choose steps by name; `--list` names them.
    Test(test_steps::TestArgs),
    /// Set up what serving needs, build the example actors and serve them
    /// on http://127.0.0.1:8787 (the README's `bash scripts/main.sh` runs
    /// setup, then this); extra arguments go to `wasmkeep-shim serve`.
    Serve(serve::ServeArgs),
    /// Fuzz the host's boundaries (`wasmkeep-fuzz`; `cargo xtask fuzz --
    /// --help` lists its options, e.g. `--target sql_guard --seconds 60`).
    Fuzz {
        /// Arguments passed to wasmkeep-fuzz.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Regenerate everything made from wit/: every copy of the WIT and the
    /// generated bindings of the four SDKs (Rust, TypeScript, C, Python);
    /// and the Rust harness's FFI from the C harness's header.
    Gen {
        /// Change nothing; exit non-zero naming every file that differs.
        #[arg(long)]
        check: bool,
    },
    /// Build every Rust guest of the repo (examples, conformance testee) into
    /// target/components/<package>.wasm; with --all, every language's
    /// (the TypeScript, C and Python guests by their SDKs' scripts, after
    /// the QuickJS backend's native parts).
    Guests {
        /// Every language's guests, not only Rust's.
        #[arg(long)]
        all: bool,
    },
    /// Build one Rust guest crate (in this repo or anywhere) into a component.
    BuildGuest {
        /// The guest crate's Cargo.toml or directory.
        manifest: PathBuf,
        /// Where to write the component [default: <target>/components/<package>.wasm].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Every language's test harness has every verb of
    /// conformance/harness-parity/verbs.toml or says why not; writes the
    /// parity table of conformance/README.md from them.
    Parity {
        /// Change nothing; fail if the table is out of date or a verb is unaccounted for.
        #[arg(long)]
        check: bool,
    },
    /// Write the WASI preview-1 reactor adapter the C SDK wraps guests with
    /// (`cargo xtask setup` writes it to sdk-c/lib/ after scripts/setup.sh; no build of the host is needed).
    CAdapter {
        /// Where to write it (sdk-c/lib/wasi_snapshot_preview1.reactor.wasm).
        out: PathBuf,
    },
    /// Build what the TypeScript SDK's QuickJS backend needs into
    /// sdk-ts/build/quickjs/parts/: the storage adapter component and the composer
    /// (`cargo xtask setup` and `guests --all` run this; the SDK's scripts only
    /// check the stamp it writes; ADR 017).
    TsQuickjs {
        /// Build the composer in release mode (for the npm tarball).
        #[arg(long)]
        release: bool,
    },
    /// One version for every package (ADR 029): the workspace's `version`
    /// against the npm and Python packages, the C SDK's header and
    /// pkg-config file, what each SDK reports, and the CHANGELOG.
    Versions {
        /// Fail (exit non-zero) naming every place that differs.
        #[arg(long)]
        check: bool,
        /// Write this version into the workspace and every place.
        #[arg(long, conflicts_with = "check", value_name = "X.Y.Z")]
        set: Option<String>,
    },
    /// Every package into target/release-packages/<version>/ with a
    /// SHA256SUMS: the crates, the npm tarball, the Python wheels and the C
    /// SDK's archive (ADR 029).
    Release(release::ReleaseArgs),
    /// The benchmark report (not a test): builds the guests, then runs
    /// `wasmkeep-bench` in release mode and prints figures and ratios.
    Bench {
        /// Arguments passed to wasmkeep-bench.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let root = repo_root();
    let result = match cli.command {
        Command::Setup { serve } => setup::setup(&root, if serve { setup::For::Serve } else { setup::For::Test }),
        Command::Test(args) => test_steps::test(&root, args),
        Command::Serve(args) => serve::serve(&root, args),
        Command::Fuzz { args } => run(&root, &cargo(), &["run", "--quiet", "-p", "wasmkeep-fuzz", "--"], &args),
        Command::Gen { check } => gen_all(&root, check),
        Command::Guests { all } => guests(&root).and_then(|()| if all { other_guests(&root) } else { Ok(()) }),
        Command::BuildGuest { manifest, out } => {
            wasmkeep_guest_build::build_rust_guest(&manifest, out.as_deref()).map(|wasm| {
                println!("{}", wasm.display());
            })
        }
        Command::Bench { args } => guests(&root).and_then(|()| bench(&root, &args)),
        Command::Parity { check } => parity::parity(&root, check),
        Command::CAdapter { out } => c_adapter::write(&out),
        Command::TsQuickjs { release } => {
            ts_quickjs::build(&root, release).map(|parts| println!("{}", parts.join("\n")))
        }
        Command::Release(args) => release::release(&root, &args),
        Command::Versions { check, set } => versions::versions(&root, check, set.as_deref()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The `.wit` files under `dir`, by path relative to it, with their bytes.
fn wit_files(dir: &Path) -> Result<BTreeMap<PathBuf, Vec<u8>>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) -> Result<()> {
        let mut entries: Vec<_> = fs::read_dir(dir)
            .with_context(|| format!("reading {}", dir.display()))?
            .collect::<Result<_, _>>()?;
        entries.sort_by_key(fs::DirEntry::file_name);
        for entry in entries {
            let path = entry.path();
            if entry.file_type()?.is_dir() {
                walk(base, &path, out)?;
            } else if path.extension().is_some_and(|e| e == "wit") {
                let rel = path.strip_prefix(base)?.to_path_buf();
                let bytes = fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
                out.insert(rel, bytes);
            }
        }
        Ok(())
    }
    let mut out = BTreeMap::new();
    if dir.is_dir() {
        walk(dir, dir, &mut out)?;
    }
    Ok(out)
}

/// `gen [--check]`: the Rust copies of the WIT, then each SDK's generator.
/// Every generator runs even when an earlier one fails, so that one run names
/// everything that is out of date.
fn gen_all(root: &Path, check: bool) -> Result<()> {
    // Files that differ (with `check`), and generators that could not run.
    let mut stale: Vec<String> = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    match vendor_wit(root, check) {
        Ok(rust) if rust.is_empty() => println!("xtask: {} matches wit/", WIT_COPIES.join(", ")),
        Ok(rust) if check => {
            eprintln!("xtask: these Rust files differ from wit/:");
            for line in &rust {
                eprintln!("  {line}");
            }
            stale.extend(rust);
        }
        Ok(rust) => println!("xtask: updated the Rust copy of the WIT:\n  {}", rust.join("\n  ")),
        Err(e) => failed.push(format!("Rust: {e:#}")),
    }
    match c_bindings::bring_up_to_date(root, check) {
        Ok(c) if c.is_empty() => println!("xtask: sdk-c/gen matches wit/"),
        Ok(c) if check => {
            eprintln!("xtask: these C files differ from what wit/ makes:");
            for line in &c {
                eprintln!("  {line}");
            }
            stale.extend(c);
        }
        Ok(c) => println!("xtask: updated the C bindings:\n  {}", c.join("\n  ")),
        Err(e) => failed.push(format!("C: {e:#}")),
    }
    match harness_ffi::bring_up_to_date(root, check) {
        Ok(ffi) if ffi.is_empty() => println!("xtask: {} matches {}", harness_ffi::OUT, harness_ffi::HEADER),
        Ok(ffi) if check => {
            eprintln!("xtask: this Rust file differs from what the C harness's header makes:");
            for line in &ffi {
                eprintln!("  {line}");
            }
            stale.extend(ffi);
        }
        Ok(ffi) => println!("xtask: updated the Rust harness's FFI:\n  {}", ffi.join("\n  ")),
        Err(e) => failed.push(format!("Rust harness FFI: {e:#}")),
    }
    for generator in GENERATORS {
        let (program, mut args) = (generator.command[0], generator.command[1..].to_vec());
        if check {
            args.push("--check");
        }
        let shown = format!("{program} {}", args.join(" "));
        let output = std::process::Command::new(program)
            .current_dir(root)
            .args(&args)
            .env("WASMKEEP_GEN_COMMAND", GEN_COMMAND)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::inherit())
            .stderr(std::process::Stdio::piped())
            .output();
        let output = match output {
            Ok(output) => output,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                failed.push(format!(
                    "{}: cannot run `{shown}`: {}",
                    generator.sdk, generator.program_missing
                ));
                continue;
            }
            Err(e) => {
                failed.push(format!("{}: cannot run `{shown}`: {e}", generator.sdk));
                continue;
            }
        };
        let stderr = String::from_utf8_lossy(&output.stderr);
        eprint!("{stderr}");
        match output.status.code() {
            Some(0) => {}
            Some(1) if check => {
                let files: Vec<String> = stderr
                    .lines()
                    .filter_map(|line| line.strip_prefix("  "))
                    .map(|file| format!("{file} differs"))
                    .collect();
                if files.is_empty() {
                    failed.push(format!(
                        "{}: `{shown}` found differences but named no file",
                        generator.sdk
                    ));
                }
                stale.extend(files);
            }
            _ => {
                // The script's last line says why (a missing tool names itself).
                let why = stderr
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("no message");
                failed.push(format!(
                    "{}: `{shown}` failed ({}): {why}",
                    generator.sdk, output.status
                ));
            }
        }
    }
    let sdks = ["Rust", "C"]
        .into_iter()
        .chain(GENERATORS.iter().map(|g| g.sdk))
        .collect::<Vec<_>>()
        .join(", ");
    if stale.is_empty() && failed.is_empty() {
        if check {
            println!("xtask: every WIT copy and generated binding matches wit/ ({sdks})");
        } else {
            println!("xtask: regenerated what wit/ makes for {sdks}; commit what changed");
        }
        return Ok(());
    }
    let mut message = String::new();
    if !stale.is_empty() {
        message += &format!(
            "{} generated file(s) differ from what wit/ (or the C harness's header) makes:\n  {}\nrun `{GEN_COMMAND}` and commit the result",
            stale.len(),
            stale.join("\n  ")
        );
    }
    if !failed.is_empty() {
        if !message.is_empty() {
            message += "\n";
        }
        message += &format!(
            "{} generator(s) could not run:\n  {}\n(a missing tool: bash scripts/setup.sh installs every one)",
            failed.len(),
            failed.join("\n  ")
        );
    }
    bail!("{message}")
}

/// Brings every copy in [`WIT_COPIES`] in line with `wit/` (or, with `check`,
/// only compares). Returns what differed, one line per file.
fn vendor_wit(root: &Path, check: bool) -> Result<Vec<String>> {
    let source = wit_files(&root.join("wit"))?;
    if source.is_empty() {
        bail!("no .wit files in {}", root.join("wit").display());
    }
    let mut stale = Vec::new();
    for copy in WIT_COPIES {
        let dest_dir = root.join(copy);
        let existing = wit_files(&dest_dir)?;
        for (rel, bytes) in &source {
            let shown = Path::new(copy).join(rel);
            match existing.get(rel) {
                Some(old) if old == bytes => continue,
                Some(_) => stale.push(format!("{} differs from wit/{}", shown.display(), rel.display())),
                None => stale.push(format!("{} is missing", shown.display())),
            }
            if !check {
                let dest = dest_dir.join(rel);
                if let Some(parent) = dest.parent() {
                    fs::create_dir_all(parent)?;
                }
                fs::write(&dest, bytes).with_context(|| format!("writing {}", dest.display()))?;
            }
        }
        for rel in existing.keys().filter(|rel| !source.contains_key(*rel)) {
            let shown = Path::new(copy).join(rel);
            stale.push(format!("{} is not in wit/", shown.display()));
            if !check {
                fs::remove_file(dest_dir.join(rel)).with_context(|| format!("removing {}", shown.display()))?;
            }
        }
    }
    Ok(stale)
}

fn guests(root: &Path) -> Result<()> {
    let started = Instant::now();
    let built = wasmkeep_guest_build::build_workspace_guests(root)?;
    for wasm in &built {
        let size = fs::metadata(wasm).map(|m| m.len()).unwrap_or(0);
        let shown = wasm.strip_prefix(root).unwrap_or(wasm);
        println!("{} ({} KiB)", shown.display(), size.div_ceil(1024));
    }
    println!(
        "{} guest(s) built in {:.1} s",
        built.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Runs `program` with `fixed` then `extra` arguments, from the root.
///
/// # Errors
/// It could not start, or it failed (its own output says why).
fn run(root: &Path, program: &str, fixed: &[&str], extra: &[impl AsRef<std::ffi::OsStr>]) -> anyhow::Result<()> {
    let status = std::process::Command::new(program)
        .args(fixed)
        .args(extra)
        .current_dir(root)
        .status()
        .with_context(|| format!("running {program} {}", fixed.join(" ")))?;
    anyhow::ensure!(status.success(), "{program} {} failed ({status})", fixed.join(" "));
    Ok(())
}

/// The cargo that runs xtask.
fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// The TypeScript, C and Python guests, by their SDKs' own scripts (which
/// never call back into xtask): the C SDK's adapter and the QuickJS
/// backend's parts first.
///
/// # Errors
/// A build failed (its output says which).
fn other_guests(root: &Path) -> anyhow::Result<()> {
    c_adapter::write(&root.join(setup::C_ADAPTER))?;
    println!("{}", ts_quickjs::build(root, false)?.join("\n"));
    run(
        root,
        "node",
        &["sdk-ts/scripts/build-guests.js", "--quiet"],
        &[] as &[&str],
    )?;
    run(
        root,
        "bash",
        &["sdk-c/scripts/build-guests.sh", "--quiet"],
        &[] as &[&str],
    )?;
    run(
        root,
        "bash",
        &["sdk-python/scripts/build-guests.sh", "--quiet"],
        &[] as &[&str],
    )
}

/// Runs the benchmark report in release mode.
fn bench(root: &std::path::Path, args: &[String]) -> anyhow::Result<()> {
    run(
        root,
        &cargo(),
        &["run", "--release", "-p", "wasmkeep-bench", "--"],
        args,
    )
}
