//! Project tasks, run as `cargo xtask <command>` from anywhere in the repo.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};

/// Where the WIT is vendored, relative to the repository root. Each gets an
/// exact copy of `wit/` (the `.wit` files, keeping subdirectories).
const WIT_COPIES: &[&str] = &["sdk-rust/wit"];

#[derive(Parser)]
#[command(name = "cargo xtask", about = "wasmkeep project tasks")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Copy wit/*.wit into every place that vendors it (sdk-rust/wit/).
    VendorWit {
        /// Change nothing; exit non-zero if any copy differs from wit/.
        #[arg(long)]
        check: bool,
    },
    /// Build every Rust guest of the repo (examples, conformance testee) into
    /// target/components/<package>.wasm.
    Guests,
    /// Build one Rust guest crate (in this repo or anywhere) into a component.
    BuildGuest {
        /// The guest crate's Cargo.toml or directory.
        manifest: PathBuf,
        /// Where to write the component [default: <target>/components/<package>.wasm].
        #[arg(long)]
        out: Option<PathBuf>,
    },
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
        Command::VendorWit { check } => vendor_wit(&root, check),
        Command::Guests => guests(&root),
        Command::BuildGuest { manifest, out } => {
            wasmkeep_guest_build::build_rust_guest(&manifest, out.as_deref()).map(|wasm| {
                println!("{}", wasm.display());
            })
        }
        Command::Bench { args } => guests(&root).and_then(|()| bench(&root, &args)),
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

fn vendor_wit(root: &Path, check: bool) -> Result<()> {
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
    if check {
        if stale.is_empty() {
            println!("vendored WIT is up to date ({})", WIT_COPIES.join(", "));
            Ok(())
        } else {
            bail!(
                "vendored WIT is out of date:\n  {}\nrun `cargo xtask vendor-wit` and commit the result",
                stale.join("\n  ")
            )
        }
    } else {
        if stale.is_empty() {
            println!("vendored WIT already up to date ({})", WIT_COPIES.join(", "));
        } else {
            println!("updated:\n  {}", stale.join("\n  "));
        }
        Ok(())
    }
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

/// Runs the benchmark report in release mode.
fn bench(root: &std::path::Path, args: &[String]) -> anyhow::Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = std::process::Command::new(cargo)
        .current_dir(root)
        .args(["run", "--release", "-p", "wasmkeep-bench", "--"])
        .args(args)
        .status()?;
    anyhow::ensure!(status.success(), "wasmkeep-bench failed ({status})");
    Ok(())
}
