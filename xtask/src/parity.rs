//! `cargo xtask parity [--check]`: every language's test harness has every
//! verb of conformance/harness-parity/verbs.toml, or says in
//! missing/<language>.toml why not; the table in conformance/README.md is
//! written from them.

use anyhow::{Context as _, Result, bail};
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

const LANGUAGES: [(&str, &str); 4] = [("rust", "Rust"), ("ts", "TypeScript"), ("python", "Python"), ("c", "C")];

/// Checks the declarations and writes (or with `check`, compares) the table.
pub fn parity(root: &Path, check: bool) -> Result<()> {
    let dir = root.join("conformance/harness-parity");
    let verbs: toml::Table = read_toml(&dir.join("verbs.toml"))?;
    let files = verbs
        .get("files")
        .and_then(toml::Value::as_table)
        .context("verbs.toml has no [files]")?;
    let list = verbs
        .get("verb")
        .and_then(toml::Value::as_array)
        .context("verbs.toml has no [[verb]]")?;
    let mut problems = Vec::new();
    let mut table =
        String::from("| verb | what | Rust | TypeScript | Python | C |\n| --- | --- | --- | --- | --- | --- |\n");
    let mut missing_by_lang = std::collections::HashMap::new();
    for (lang, _) in LANGUAGES {
        let missing_path = dir.join("missing").join(format!("{lang}.toml"));
        let missing = if missing_path.is_file() {
            read_toml(&missing_path)?
        } else {
            toml::Table::new()
        };
        let sources: String = files
            .get(lang)
            .and_then(toml::Value::as_array)
            .with_context(|| format!("[files] has no {lang}"))?
            .iter()
            .filter_map(toml::Value::as_str)
            .map(|f| fs::read_to_string(root.join(f)).with_context(|| format!("reading {f}")))
            .collect::<Result<Vec<_>>>()?
            .join("\n");
        for verb in list {
            let name = verb.get("name").and_then(toml::Value::as_str).unwrap_or("?");
            match (verb.get(lang).and_then(toml::Value::as_str), missing.get(name)) {
                (Some(decl), None) if sources.contains(decl) => {}
                (Some(decl), None) => {
                    problems.push(format!(
                        "{lang}: `{name}` should be declared as `{decl}`, which is not in its harness"
                    ));
                }
                // A missing verb may name the declaration it is to have; once
                // that is in the harness, the line in missing/ must go.
                (Some(decl), Some(_)) if sources.contains(decl) => problems.push(format!(
                    "{lang}: `{name}` is declared (`{decl}`) and still listed in missing/{lang}.toml: remove that line"
                )),
                (Some(_), Some(_)) | (None, Some(_)) => {}
                (None, None) => problems.push(format!(
                    "{lang}: the harness lacks `{name}`: bind it, or list it with a reason in missing/{lang}.toml"
                )),
            }
        }
        missing_by_lang.insert(lang, missing);
    }
    let missing_of = |lang: &str| missing_by_lang.get(lang).cloned().unwrap_or_default();
    for verb in list {
        let name = verb.get("name").and_then(toml::Value::as_str).unwrap_or("?");
        let what = verb.get("what").and_then(toml::Value::as_str).unwrap_or("");
        let _ = write!(table, "| `{name}` | {what} |");
        for (lang, _) in LANGUAGES {
            let mark = if verb.get(lang).is_some() && !missing_of(lang).contains_key(name) {
                "yes"
            } else {
                "missing"
            };
            let _ = write!(table, " {mark} |");
        }
        table.push('\n');
    }
    // The table is a section of the conformance README, between two markers.
    let out = root.join("conformance/README.md");
    let readme = fs::read_to_string(&out).with_context(|| format!("reading {}", out.display()))?;
    let updated = with_table(&readme, &table)
        .with_context(|| format!("{} has no parity table markers ({BEGIN} … {END})", out.display()))?;
    if check {
        if updated != readme {
            problems.push(format!(
                "the parity table in {} is out of date: run `cargo xtask parity`",
                out.display()
            ));
        }
    } else if updated != readme {
        fs::write(&out, &updated).with_context(|| format!("writing {}", out.display()))?;
    }
    if !problems.is_empty() {
        bail!("harness parity:\n  {}", problems.join("\n  "));
    }
    let missing = table.matches("missing |").count();
    println!(
        "xtask: harness parity: {} verbs, {missing} listed missing with a reason",
        list.len()
    );
    Ok(())
}

fn read_toml(path: &Path) -> Result<toml::Table> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    text.parse().with_context(|| format!("parsing {}", path.display()))
}

const BEGIN: &str = "<!-- parity table: written by `cargo xtask parity`; do not edit by hand -->";
const END: &str = "<!-- end of the parity table -->";

/// `readme` with the text between the markers replaced by `table`.
fn with_table(readme: &str, table: &str) -> Option<String> {
    let start = readme.find(BEGIN)? + BEGIN.len();
    let end = start + readme[start..].find(END)?;
    Some(format!("{}\n{table}{}", &readme[..start], &readme[end..]))
}
