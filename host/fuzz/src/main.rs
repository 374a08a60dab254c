//! `wasmkeep-fuzz --target <name|all> --seconds N`: runs each target for N
//! seconds after replaying its corpus (`host/fuzz/corpus/<target>/`), prints
//! one line per target, and exits 1 on a crash or violation (the input is
//! printed and saved as `crash-<hash>` in the target's corpus directory).

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use wasmkeep_fuzz::engine::{self, Options, Report, Target};
use wasmkeep_fuzz::targets::{self, admin_json, manifest, routing, sql_guard, wit_values};

#[derive(Parser, Debug)]
#[command(about = "Fuzz targets for the wasmkeep host's boundaries (stable Rust, time-bounded)")]
struct Args {
    /// manifest, routing, sql_guard, wit_values, admin_json, or all.
    #[arg(long, default_value = "all")]
    target: String,
    /// Seconds of generation per target, after its corpus replay (0: replay only).
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// The random seed (default: from the clock; printed).
    #[arg(long)]
    seed: Option<u64>,
    /// The corpus root (default: this crate's corpus/).
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Do not add inputs with new outcomes to the corpus (crashes are still saved).
    #[arg(long)]
    no_extend: bool,
    /// Run only this input file (a corpus or crash file) against the target.
    #[arg(long)]
    input: Option<PathBuf>,
}

fn run<T: Target>(target: anyhow::Result<T>, opts: &Options) -> Result<Report, String> {
    let mut t = target.map_err(|e| format!("{e:#}"))?;
    Ok(engine::fuzz(&mut t, opts))
}

fn main() -> ExitCode {
    let args = Args::parse();
    let names: Vec<&str> = if args.target == "all" {
        targets::ALL.to_vec()
    } else if let Some(n) = targets::ALL.iter().find(|n| **n == args.target) {
        vec![*n]
    } else {
        eprintln!("unknown target {:?}: one of {:?} or all", args.target, targets::ALL);
        return ExitCode::from(2);
    };
    if args.input.is_some() && names.len() != 1 {
        eprintln!("--input needs one --target");
        return ExitCode::from(2);
    }
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    let opts = Options {
        budget: Duration::from_secs_f64(args.seconds.max(0.0)),
        seed,
        corpus_root: args
            .corpus
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus")),
        extend: !args.no_extend,
        max_new: 8,
        max_dir_bytes: 96 << 10,
        hang_after: Duration::from_secs(60),
        only_input: args.input,
    };
    engine::install_panic_hook();
    println!(
        "fuzz: seed {seed} (repeat with --seed {seed}), corpus {}",
        opts.corpus_root.display()
    );
    let mut failed = false;
    for name in names {
        let report = match name {
            "manifest" => run(manifest::ManifestTarget::new(), &opts),
            "routing" => run(routing::RoutingTarget::new(), &opts),
            "sql_guard" => run(sql_guard::SqlGuardTarget::new(), &opts),
            "wit_values" => run(wit_values::WitValuesTarget::new(), &opts),
            _ => run(admin_json::AdminJsonTarget::new(), &opts),
        };
        match report {
            Ok(r) => {
                println!("{}", r.line());
                for n in &r.notes {
                    println!("  note: {n}");
                }
                if let Some(c) = &r.crash {
                    failed = true;
                    let saved = c
                        .saved
                        .as_ref()
                        .map_or_else(|| "(could not be saved)".to_owned(), |p| p.display().to_string());
                    println!("  input, saved as {saved}:\n{}", engine::show(&c.input));
                    println!("  reproduce: cargo run --release -p wasmkeep-fuzz -- --target {name} --input {saved}");
                }
            }
            Err(why) => {
                failed = true;
                println!("fuzz {name}: could not run: {why}");
            }
        }
    }
    if failed { ExitCode::from(1) } else { ExitCode::SUCCESS }
}
