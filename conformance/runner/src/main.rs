//! The conformance runner: builds each language's testee, runs every case
//! against it in the local host, prints a language × case matrix. The steps
//! of a case are interpreted once (`steps`), over a driver: the nodes in this
//! process (`in_process`) or node processes (`node_processes`, ADR 084).
//!
//! A case that fails names the language, the step and both outcomes. Known
//! failures are listed per language in `conformance/expected-failures/<lang>.txt`
//! (`case-name  # reason`); an expected failure that passes fails the run.

mod case;
mod expect;
mod http;
mod in_process;
mod node_processes;
mod steps;

use anyhow::Context as _;
use clap::Parser;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

#[derive(Parser)]
#[command(about = "Run the conformance cases against every language's testee")]
struct Args {
    /// The conformance directory (cases/, languages.toml, expected-failures/).
    #[arg(long, default_value = "conformance")]
    dir: PathBuf,
    /// Only these languages (repeatable).
    #[arg(long = "lang")]
    langs: Vec<String>,
    /// Only cases whose name contains this.
    #[arg(long)]
    case: Option<String>,
    /// Do not run the languages' build commands (use the components as they are).
    #[arg(long)]
    no_build: bool,
    /// Run the cluster cases on this many `wasmkeep-shim serve --node-id`
    /// processes (2 or 3) instead of nodes in this process.
    #[arg(long, value_parser = clap::value_parser!(u64).range(2..=3))]
    node_processes: Option<u64>,
    /// With --node-processes: the bucket URL (each case under a prefix of its
    /// own; credentials from the environment); a `file://` directory per case
    /// when not given.
    #[arg(long, requires = "node_processes")]
    bucket: Option<String>,
    /// With --node-processes: the `wasmkeep-shim` binary.
    #[arg(long, default_value = "target/debug/wasmkeep-shim", requires = "node_processes")]
    shim: PathBuf,
    /// With --node-processes: the processes talk to each other over mutual
    /// TLS, with certificates `wasmkeep-shim cluster certs` makes for each case.
    #[arg(long, requires = "node_processes")]
    tls: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Language {
    /// The built testee component, relative to the repository root.
    component: PathBuf,
    /// The command that builds it, run from the repository root.
    build: Vec<String>,
}

/// How one case went for one language.
#[derive(Debug, Clone, PartialEq)]
enum Cell {
    Pass,
    Fail(String),
    ExpectedFail,
    UnexpectedPass,
    /// Not run in this mode, and why (node processes: a step needs the host's inside).
    NotHere(String),
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::FAILURE,
        Err(e) => {
            eprintln!("conformance: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}

fn load_expected_failures(dir: &Path, lang: &str) -> anyhow::Result<HashMap<String, String>> {
    let path = dir.join("expected-failures").join(format!("{lang}.txt"));
    let mut out = HashMap::new();
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(out);
    };
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((name, reason)) = line.split_once('#') else {
            anyhow::bail!(
                "{}:{}: every expected failure needs a reason: `case-name  # why`",
                path.display(),
                i + 1
            );
        };
        let reason = reason.trim();
        if reason.is_empty() {
            anyhow::bail!("{}:{}: the reason after '#' is empty", path.display(), i + 1);
        }
        out.insert(name.trim().to_owned(), reason.to_owned());
    }
    Ok(out)
}

fn run() -> anyhow::Result<bool> {
    let args = Args::parse();
    let root = std::env::current_dir()?;
    let langs_text = std::fs::read_to_string(args.dir.join("languages.toml")).context("reading languages.toml")?;
    let all_langs: BTreeMap<String, Language> = toml::from_str(&langs_text).context("parsing languages.toml")?;
    let cases = case::load_all(&args.dir.join("cases"))?;
    let cases: Vec<&case::Case> = cases
        .iter()
        .filter(|c| args.case.as_ref().is_none_or(|f| c.name.contains(f.as_str())))
        .filter(|c| args.node_processes.is_none() || c.mode == "cluster")
        .collect();
    let langs: Vec<(&String, &Language)> = all_langs
        .iter()
        .filter(|(name, _)| args.langs.is_empty() || args.langs.contains(name))
        .collect();
    if langs.is_empty() {
        anyhow::bail!(
            "no language selected; languages.toml knows: {:?}",
            all_langs.keys().collect::<Vec<_>>()
        );
    }
    let cache_dir = root.join("target").join("wasmkeep-cache");
    let processes = args.node_processes.map(|count| node_processes::NodeProcesses {
        count: usize::try_from(count).unwrap_or(2),
        shim: root.join(&args.shim),
        bucket: args.bucket.clone(),
        cache_dir: cache_dir.clone(),
        tls: args.tls,
    });
    let mut matrix: BTreeMap<String, BTreeMap<String, Cell>> = BTreeMap::new();
    for (lang, spec) in &langs {
        if !args.no_build {
            let (prog, rest) = spec.build.split_first().context("empty build command")?;
            eprintln!("building the {lang} testee: {}", spec.build.join(" "));
            let status = std::process::Command::new(prog)
                .args(rest)
                .status()
                .with_context(|| format!("running {prog}"))?;
            anyhow::ensure!(status.success(), "building the {lang} testee failed ({status})");
        }
        let component = root.join(&spec.component);
        anyhow::ensure!(
            component.is_file(),
            "the {lang} testee {} is missing: build it with `{}`",
            component.display(),
            spec.build.join(" ")
        );
        let xfail = load_expected_failures(&args.dir, lang)?;
        for name in xfail.keys() {
            anyhow::ensure!(
                cases.iter().any(|c| &c.name == name) || args.case.is_some(),
                "expected-failures/{lang}.txt names an unknown case {name}"
            );
        }
        for c in &cases {
            // One interpreter of the steps, over the driver of this mode.
            let result = match &processes {
                None => in_process::InProcess::start(c, &component, &cache_dir)
                    .and_then(|mut nodes| steps::run(c, &mut nodes)),
                Some(how) => match node_processes::not_here(c) {
                    Some(why) => {
                        matrix
                            .entry(c.name.clone())
                            .or_default()
                            .insert((*lang).clone(), Cell::NotHere(why));
                        continue;
                    }
                    None => {
                        node_processes::Nodes::start(c, &component, how).and_then(|mut nodes| steps::run(c, &mut nodes))
                    }
                },
            };
            let cell = match (result, xfail.contains_key(&c.name)) {
                (Ok(()), false) => Cell::Pass,
                (Ok(()), true) => Cell::UnexpectedPass,
                (Err(_), true) => Cell::ExpectedFail,
                (Err(e), false) => Cell::Fail(format!("{e:#}")),
            };
            matrix.entry(c.name.clone()).or_default().insert((*lang).clone(), cell);
        }
    }
    Ok(print_matrix(
        &cases,
        &langs.iter().map(|(l, _)| l.as_str()).collect::<Vec<_>>(),
        &matrix,
    ))
}

fn print_matrix(cases: &[&case::Case], langs: &[&str], matrix: &BTreeMap<String, BTreeMap<String, Cell>>) -> bool {
    let width = cases.iter().map(|c| c.name.len()).max().unwrap_or(4).max(4);
    print!("{:width$}", "case");
    for l in langs {
        print!("  {l:>10}");
    }
    println!();
    let (mut passed, mut failed, mut xfailed, mut not_here) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for c in cases {
        print!("{:width$}", c.name);
        for l in langs {
            let cell = &matrix[&c.name][*l];
            let mark = match cell {
                Cell::Pass => {
                    passed += 1;
                    "pass"
                }
                Cell::ExpectedFail => {
                    xfailed += 1;
                    "xfail"
                }
                Cell::Fail(e) => {
                    failed += 1;
                    failures.push(format!("FAIL {l} {}: {e}\n  rule: {}", c.name, c.rule));
                    "FAIL"
                }
                Cell::NotHere(why) => {
                    not_here += 1;
                    failures.push(format!("n/a {l} {}: {why}", c.name));
                    "n/a"
                }
                Cell::UnexpectedPass => {
                    failed += 1;
                    failures.push(format!(
                        "XPASS {l} {}: listed in expected-failures/{l}.txt but passes; remove the line",
                        c.name
                    ));
                    "XPASS"
                }
            };
            print!("  {mark:>10}");
        }
        println!();
    }
    for f in &failures {
        println!("{f}");
    }
    if not_here > 0 {
        println!("conformance: {passed} passed, {failed} failed, {xfailed} skipped, {not_here} not run in this mode");
    } else {
        println!("conformance: {passed} passed, {failed} failed, {xfailed} skipped");
    }
    failed == 0
}
