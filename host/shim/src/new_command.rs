//! `wasmkeep-shim new <dir> --lang rust|ts|python|c [--template
//! counter|bank|chat]`: a project that builds, tests in its language's own
//! runner and serves.
//!
//! The templates are the repository's examples (which the test command
//! builds and tests): the counter and the bank account in every language,
//! the chat room in TypeScript. They are built into this binary
//! (`new_templates`), or read from the checkout `--sdk` names. A project depends on the SDKs of
//! this wasmkeep-shim's version from the package registries, or, with
//! `--sdk DIR`, on that checkout's SDKs, for working on the SDKs (ADR 029).
//!
//! This module reads the arguments, finds the template and writes the files;
//! its parts: one writer per language (`rust_project`, `ts_project`,
//! `python_project`, `c_project`), the generated README and the commands it
//! lists (`readme`), the app manifest (`manifest`) and how the project runs
//! the host (`host_command`).

use anyhow::{Context as _, Result, bail};
use std::path::{Path, PathBuf};

mod c_project;
mod host_command;
mod manifest;
mod python_project;
mod readme;
mod rust_project;
mod ts_project;

use crate::new_templates::template;
use host_command::shim_command;
use readme::commands;

/// A language `new` writes a project in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Lang {
    Rust,
    #[value(alias = "typescript")]
    Ts,
    #[value(alias = "py")]
    Python,
    C,
}

/// Every language, in the order `new` names them.
const LANGS: [Lang; 4] = [Lang::Rust, Lang::Ts, Lang::Python, Lang::C];

/// What a new project holds: one of the repository's examples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Template {
    /// A counter: GET reads it, POST adds one, DELETE deletes it durably.
    Counter,
    /// A bank account: idempotent deposits and withdrawals, daily interest
    /// by alarm, a close by durable delete; its tests run seeded chaos.
    Bank,
    /// A chat room over WebSockets, one actor per room (TypeScript).
    Chat,
}

/// Every template, in the order `new` names them.
const TEMPLATE_LIST: [Template; 3] = [Template::Counter, Template::Bank, Template::Chat];

impl Template {
    fn name(self) -> &'static str {
        match self {
            Template::Counter => "counter",
            Template::Bank => "bank",
            Template::Chat => "chat",
        }
    }

    /// The example under `examples/` this template is in `lang`, if it has one.
    fn example(self, lang: Lang) -> Option<&'static str> {
        match (self, lang) {
            (Template::Counter, Lang::Rust) => Some("counter-rust"),
            (Template::Counter, Lang::Ts) => Some("counter-ts"),
            (Template::Counter, Lang::Python) => Some("counter-py"),
            (Template::Counter, Lang::C) => Some("counter-c"),
            (Template::Bank, Lang::Rust) => Some("bank-rust"),
            (Template::Bank, Lang::Ts) => Some("bank-ts"),
            (Template::Bank, Lang::Python) => Some("bank-py"),
            (Template::Bank, Lang::C) => Some("bank-c"),
            (Template::Chat, Lang::Ts) => Some("chat-ts"),
            (Template::Chat, _) => None,
        }
    }

    /// The languages that have this template, as `--lang` spells them.
    fn langs(self) -> Vec<&'static str> {
        LANGS
            .into_iter()
            .filter(|&l| self.example(l).is_some())
            .map(lang_flag)
            .collect()
    }
}

/// `--lang`'s spelling of `lang`.
fn lang_flag(lang: Lang) -> &'static str {
    match lang {
        Lang::Rust => "rust",
        Lang::Ts => "ts",
        Lang::Python => "python",
        Lang::C => "c",
    }
}

/// Why `template` cannot be written in `lang`, naming the languages that
/// have it and every template with its languages; `None` when it can.
fn unavailable(template: Template, lang: Lang) -> Option<String> {
    if template.example(lang).is_some() {
        return None;
    }
    let all: Vec<String> = TEMPLATE_LIST
        .iter()
        .map(|t| format!("{} ({})", t.name(), t.langs().join(", ")))
        .collect();
    Some(format!(
        "the template '{}' is written in {} only, not in {}: use --lang {}, or another template. \
         The templates: {}",
        template.name(),
        template.langs().join(", "),
        lang_flag(lang),
        template.langs().join(" or --lang "),
        all.join("; "),
    ))
}

#[derive(clap::Args)]
pub(crate) struct NewArgs {
    /// The project's directory (created; it must not exist or be empty).
    dir: PathBuf,
    /// The language of the actor.
    #[arg(long, value_enum)]
    lang: Lang,
    /// What the project holds: one of the repository's examples, with its
    /// tests (chat is in TypeScript only).
    #[arg(long, value_enum, default_value_t = Template::Counter)]
    template: Template,
    /// The project's name: its package name, its component's file name and
    /// its class in wasmkeep.toml [default: the directory's name].
    #[arg(long)]
    name: Option<String>,
    /// A wasmkeep repository whose SDKs (by path) and examples the project
    /// uses, for working on the SDKs [default: the SDKs of this
    /// wasmkeep-shim's version from the package registries].
    #[arg(long, env = "WASMKEEP_SDK")]
    sdk: Option<PathBuf>,
}

/// Where a new project's SDKs come from.
enum Sdk {
    /// The package registries (crates.io, npm, PyPI) and the C SDK's release
    /// archive, at this wasmkeep-shim's version.
    Registry,
    /// A wasmkeep checkout (absolute): its SDKs by path, its examples as templates.
    Checkout(PathBuf),
}

/// What a template needs to know.
struct Project {
    name: String,
    template: Template,
    sdk: Sdk,
    /// How the project's commands run the host (`wasmkeep-shim` on PATH, or
    /// with `--sdk` this binary's path when it is not the one on PATH).
    shim: String,
}

/// One file of a new project: its path in the project and its contents.
type File = (&'static str, String);

/// The version of the SDKs a project depends on: this wasmkeep-shim's (every
/// package has the same version, ADR 029).
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The first version that may break a project written against `version`:
/// the next minor before 1.0 (semver's caret), else the next major.
fn next_breaking(version: &str) -> String {
    let mut parts = version.split('.').map(|n| n.parse::<u64>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    if major == 0 {
        format!("0.{}", minor + 1)
    } else {
        format!("{}", major + 1)
    }
}

pub(crate) fn new_project(args: &NewArgs) -> Result<()> {
    if let Some(why) = unavailable(args.template, args.lang) {
        // A usage error, as clap's own for an unknown template: exit 2.
        clap::Error::raw(clap::error::ErrorKind::InvalidValue, format!("{why}\n")).exit();
    }
    let name = match &args.name {
        Some(n) => n.clone(),
        None => default_name(&args.dir)?,
    };
    check_name(&name)?;
    let sdk = match &args.sdk {
        Some(dir) => Sdk::Checkout(checkout(dir)?),
        None => Sdk::Registry,
    };
    let shim = shim_command(&sdk, args.lang)?;
    let project = Project {
        name,
        template: args.template,
        sdk,
        shim,
    };
    if args.dir.exists()
        && std::fs::read_dir(&args.dir)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        bail!(
            "{} exists and is not empty: choose a new directory (new never overwrites files)",
            args.dir.display()
        );
    }
    let files = match args.lang {
        Lang::Rust => rust_project::rust(&project)?,
        Lang::Ts => ts_project::ts(&project)?,
        Lang::Python => python_project::python(&project)?,
        Lang::C => c_project::c(&project)?,
    };
    for (path, contents) in &files {
        let at = args.dir.join(path);
        if let Some(parent) = at.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&at, contents).with_context(|| format!("writing {}", at.display()))?;
    }
    let from = match &project.sdk {
        Sdk::Registry => format!("the {VERSION} SDK from its registry"),
        Sdk::Checkout(dir) => format!("the SDK in {}", dir.display()),
    };
    println!(
        "created {} ({} actor \"{}\" from the {} template, on {from}, {} files); next:",
        args.dir.display(),
        lang_label(args.lang),
        project.name,
        project.template.name(),
        files.len()
    );
    for (command, _) in commands(args.lang, &project) {
        println!("  {command}");
    }
    println!("(run them in {}; its README.md says more)", args.dir.display());
    Ok(())
}

fn lang_label(lang: Lang) -> &'static str {
    match lang {
        Lang::Rust => "a Rust",
        Lang::Ts => "a TypeScript",
        Lang::Python => "a Python",
        Lang::C => "a C",
    }
}

/// The project's name from its directory: lower case, and every run of
/// characters a package name cannot hold made one `-`.
fn default_name(dir: &Path) -> Result<String> {
    let base = dir
        .file_name()
        .and_then(|n| n.to_str())
        .with_context(|| format!("{} has no usable last component: pass --name", dir.display()))?;
    let mut name = String::new();
    for ch in base.chars().map(|c| c.to_ascii_lowercase()) {
        if ch.is_ascii_alphanumeric() {
            name.push(ch);
        } else if !name.ends_with('-') && !name.is_empty() {
            name.push('-');
        }
    }
    Ok(name.trim_end_matches('-').to_owned())
}

/// A name every language's package manager and the manifest accept.
fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.ends_with('-');
    if !ok {
        bail!(
            "the name {name:?} cannot be a package name: use lower-case letters, digits and '-', \
             starting with a letter (at most 63), e.g. --name my-actor"
        );
    }
    Ok(())
}

/// The checkout `--sdk` names, absolute.
fn checkout(dir: &Path) -> Result<PathBuf> {
    let is_repo = dir.join("wit/actor.wit").is_file() && dir.join("examples").is_dir();
    if !is_repo {
        bail!(
            "{} (--sdk or WASMKEEP_SDK) is not the wasmkeep repository (no wit/actor.wit and examples/): \
             pass --sdk <the repository's directory>, or leave it out for the SDKs from the registries",
            dir.display()
        );
    }
    dir.canonicalize()
        .with_context(|| format!("resolving {}", dir.display()))
}

/// The example directory of the project's template in `lang`.
fn example_dir(p: &Project, lang: Lang) -> Result<&'static str> {
    p.template
        .example(lang)
        .with_context(|| unavailable(p.template, lang).unwrap_or_default())
}

/// The example a template is copied from: `examples/<dir>/<path>` of the
/// checkout, or the copy built into this binary.
fn example(p: &Project, dir: &str, path: &str) -> Result<String> {
    match &p.sdk {
        Sdk::Checkout(root) => {
            let at = root.join("examples").join(dir).join(path);
            std::fs::read_to_string(&at).with_context(|| format!("reading the template {}", at.display()))
        }
        Sdk::Registry => template(&format!("{dir}/{path}"))
            .map(str::to_owned)
            .with_context(|| format!("no template examples/{dir}/{path} in this wasmkeep-shim")),
    }
}

/// `text` with `from` replaced by `to`, which must be there: a template whose
/// example changed under `new` fails here instead of writing a broken project.
fn replace_exact(text: &str, from: &str, to: &str) -> Result<String> {
    if !text.contains(from) {
        bail!("the template no longer has {from:?}: wasmkeep-shim new needs updating with its example");
    }
    Ok(text.replace(from, to))
}

fn shim(p: &Project) -> &str {
    &p.shim
}
/// The Python that has the SDK and its tools: the project's virtualenv, or
/// the checkout's (bash sdk-python/scripts/setup.sh makes it).
fn python_of(p: &Project) -> String {
    match &p.sdk {
        Sdk::Registry => ".venv/bin/python".to_owned(),
        Sdk::Checkout(root) => root.join("target/py-venv/bin/python").display().to_string(),
    }
}

/// The module a Python project builds: the counter's is renamed `actor.py`;
/// the bank's keeps its name, which its broken variant imports.
fn python_module(template: Template) -> &'static str {
    match template {
        Template::Bank => "bank.py",
        Template::Counter | Template::Chat => "actor.py",
    }
}
fn gitignore(extra: &[&str]) -> String {
    let mut s = String::from("# Built components and serve's data directory.\n*.wasm\n.wasmkeep/\n");
    for line in extra {
        s.push_str(line);
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_directories() {
        assert_eq!(default_name(Path::new("/x/My Actor")).ok().as_deref(), Some("my-actor"));
        assert_eq!(default_name(Path::new("todo_list")).ok().as_deref(), Some("todo-list"));
        assert!(check_name("my-actor").is_ok());
        for bad in ["", "1abc", "Abc", "a_b", "a-", &"a".repeat(64)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }
}
