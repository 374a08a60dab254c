//! `wasmkeep-shim new <dir> --lang rust|ts|python|c`: a project that builds,
//! tests in its language's own runner and serves.
//!
//! The templates are the repository's counter examples (which the test
//! command builds and tests), copied from the checkout and pointed at its
//! SDKs: there is one counter per language to keep working, not two.

use anyhow::{Context as _, Result, bail};
use std::path::{Path, PathBuf};

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

#[derive(clap::Args)]
pub(crate) struct NewArgs {
    /// The project's directory (created; it must not exist or be empty).
    dir: PathBuf,
    /// The language of the actor.
    #[arg(long, value_enum)]
    lang: Lang,
    /// The project's name: its package name, its component's file name and
    /// its class in wasmkeep.toml [default: the directory's name].
    #[arg(long)]
    name: Option<String>,
    /// The wasmkeep repository whose SDKs the project uses [default: the one
    /// this wasmkeep-shim was built from].
    #[arg(long, env = "WASMKEEP_SDK")]
    sdk: Option<PathBuf>,
}

/// What a template needs to know.
struct Project {
    name: String,
    /// The repository (absolute).
    sdk: PathBuf,
    /// This wasmkeep-shim (absolute), for the README's serve command.
    shim: PathBuf,
}

/// One file of a new project: its path in the project and its contents.
type File = (&'static str, String);

pub(crate) fn new_project(args: &NewArgs) -> Result<()> {
    let name = match &args.name {
        Some(n) => n.clone(),
        None => default_name(&args.dir)?,
    };
    check_name(&name)?;
    let sdk = find_sdk(args.sdk.as_deref())?;
    let shim = std::env::current_exe().context("finding this wasmkeep-shim's path")?;
    let project = Project { name, sdk, shim };
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
        Lang::Rust => rust(&project)?,
        Lang::Ts => ts(&project)?,
        Lang::Python => python(&project)?,
        Lang::C => c(&project)?,
    };
    for (path, contents) in &files {
        let at = args.dir.join(path);
        if let Some(parent) = at.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&at, contents).with_context(|| format!("writing {}", at.display()))?;
    }
    println!(
        "created {} ({} actor \"{}\", {} files); next:",
        args.dir.display(),
        lang_label(args.lang),
        project.name,
        files.len()
    );
    for command in commands(args.lang, &project) {
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

/// The repository holding the SDKs: `--sdk`, or the checkout this binary was
/// built from.
fn find_sdk(given: Option<&Path>) -> Result<PathBuf> {
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let (dir, how) = match given {
        Some(d) => (d.to_path_buf(), "--sdk (or WASMKEEP_SDK)"),
        None => (built_from, "the checkout this wasmkeep-shim was built from"),
    };
    let is_repo = dir.join("wit/actor.wit").is_file() && dir.join("examples").is_dir();
    if !is_repo {
        bail!(
            "{} ({how}) is not the wasmkeep repository (no wit/actor.wit and examples/): \
             pass --sdk <the repository's directory>",
            dir.display()
        );
    }
    dir.canonicalize()
        .with_context(|| format!("resolving {}", dir.display()))
}

/// The example a template is copied from: `examples/<dir>/<path>` in the repository.
fn example(p: &Project, dir: &str, path: &str) -> Result<String> {
    let at = p.sdk.join("examples").join(dir).join(path);
    std::fs::read_to_string(&at).with_context(|| format!("reading the template {}", at.display()))
}

fn shim(p: &Project) -> String {
    p.shim.display().to_string()
}

/// The three commands of the README: build, test, serve.
fn commands(lang: Lang, p: &Project) -> [String; 3] {
    let serve = format!("{} serve", shim(p));
    match lang {
        Lang::Rust => [
            format!("{} build --out {}.wasm", shim(p), p.name),
            "cargo test".to_owned(),
            serve,
        ],
        Lang::Ts => ["npm install && npm run build".to_owned(), "npm test".to_owned(), serve],
        Lang::Python => {
            let py = python_of(p);
            [
                format!("{py} -m wasmkeep_actor build actor.py -o {}.wasm", p.name),
                format!("{py} -m pytest"),
                serve,
            ]
        }
        Lang::C => ["make".to_owned(), "make test".to_owned(), serve],
    }
}

/// The Python that has the SDK and its tools: the repository's virtualenv
/// (bash sdk-python/scripts/setup.sh makes it).
fn python_of(p: &Project) -> String {
    p.sdk.join("target/py-venv/bin/python").display().to_string()
}

fn readme(lang: Lang, p: &Project, what: &str) -> String {
    let [build, test, serve] = commands(lang, p);
    format!(
        "# {name}\n\n\
         A wasmkeep actor in {what}, made by `wasmkeep-shim new`: a counter. `GET /{name}/<actor>`\n\
         reads its count, `POST` adds one, `DELETE` deletes the actor (durably, before it answers).\n\n\
         ```sh\n\
         {build}   # build the component\n\
         {test}   # run the tests in the local host\n\
         {serve}   # serve wasmkeep.toml on http://127.0.0.1:8787\n\
         ```\n\n\
         Then `curl -X POST http://127.0.0.1:8787/{name}/a` answers `1`. With `serve --watch`,\n\
         a change to the sources rebuilds the component and swaps it in while the actors keep\n\
         their state, alarms and open sockets. The SDKs' READMEs are in {sdk}.\n",
        name = p.name,
        sdk = p.sdk.display(),
    )
}

/// The app manifest: one class, its component, and how `serve --watch`
/// rebuilds it (`build`, run here when a file under `watch` changes).
fn manifest(p: &Project, build: &str, watch: &[&str]) -> String {
    let watch: Vec<String> = watch.iter().map(|w| format!("{w:?}")).collect();
    format!(
        "# The app manifest for `wasmkeep-shim serve`. Paths are relative to this file.\n\
         app = \"local/{name}\"\n\n\
         [classes.{name}]\n\
         component = \"{name}.wasm\"\n\
         # Any request creates the actor if it does not exist yet.\n\
         access = \"open\"\n\
         # `serve --watch` runs this when a file under `watch` changes, then swaps\n\
         # the new component in (actors keep their state, alarms and sockets).\n\
         build = {build:?}\n\
         watch = [{watch}]\n",
        name = p.name,
        watch = watch.join(", "),
    )
}

fn gitignore(extra: &[&str]) -> String {
    let mut s = String::from("# Built components and serve's data directory.\n*.wasm\n.wasmkeep/\n");
    for line in extra {
        s.push_str(line);
        s.push('\n');
    }
    s
}

/// Rust: a cdylib crate on the SDK, tested with wasmkeep-actor-testing. It
/// builds in the repository's target directory with the repository's lock
/// file, profiles and workspace-hack, so the host under test (wasmtime) is the
/// one already compiled there, not compiled again for each project.
fn rust(p: &Project) -> Result<Vec<File>> {
    let sdk = p.sdk.display();
    let root: toml::Table = std::fs::read_to_string(p.sdk.join("Cargo.toml"))
        .context("reading the repository's Cargo.toml")?
        .parse()
        .context("parsing the repository's Cargo.toml")?;
    let mut profiles = toml::Table::new();
    if let Some(profile) = root.get("profile") {
        profiles.insert("profile".into(), profile.clone());
    }
    let profiles = toml::to_string(&profiles).context("writing the profiles")?;
    let cargo_toml = format!(
        "[package]\n\
         name = \"{name}\"\n\
         version = \"0.1.0\"\n\
         edition = \"2024\"\n\
         publish = false\n\n\
         [lib]\n\
         crate-type = [\"cdylib\"]\n\n\
         [dependencies]\n\
         wasmkeep-actor = {{ path = \"{sdk}/sdk-rust\" }}\n\n\
         [dev-dependencies]\n\
         # `cargo test` builds this crate into a component and drives it in the host.\n\
         wasmkeep-actor-testing = {{ path = \"{sdk}/sdk-rust/testing\" }}\n\
         serde_json = \"1\"\n\
         # The repository's feature set of the host's dependencies: with its profiles\n\
         # below and its target directory (.cargo/config.toml), the host is reused.\n\
         workspace-hack = {{ path = \"{sdk}/host/workspace-hack\" }}\n\n\
         # A project of its own, not a member of an enclosing workspace.\n\
         [workspace]\n\n\
         # Copied from the repository's Cargo.toml (the guest profile builds the component).\n\
         {profiles}",
        name = p.name,
    );
    let cargo_config = format!(
        "# Builds in the wasmkeep repository's target directory, where its host is\n\
         # already compiled (a first `cargo test` then takes seconds, not minutes).\n\
         # Delete this file to build here on your own.\n\
         [build]\n\
         target-dir = \"{sdk}/target\"\n"
    );
    let test = example(p, "counter-rust", "tests/counter.rs")?.replace("cargo test -p counter-rust", "cargo test");
    let lock = std::fs::read_to_string(p.sdk.join("Cargo.lock")).context("reading the repository's Cargo.lock")?;
    Ok(vec![
        ("Cargo.toml", cargo_toml),
        (".cargo/config.toml", cargo_config),
        // The repository's versions, so the dependencies already built are these.
        ("Cargo.lock", lock),
        ("src/lib.rs", example(p, "counter-rust", "src/lib.rs")?),
        ("tests/actor.rs", test),
        (
            "wasmkeep.toml",
            manifest(p, &format!("{} build --out {}.wasm", shim(p), p.name), &["src"]),
        ),
        ("README.md", readme(Lang::Rust, p, "Rust")),
        (".gitignore", gitignore(&["target/"])),
    ])
}

/// TypeScript: a package on the SDK's directory, tested with `node --test`.
fn ts(p: &Project) -> Result<Vec<File>> {
    let package = serde_json::json!({
        "name": p.name,
        "version": "0.1.0",
        "private": true,
        "type": "module",
        "scripts": {
            "build": format!("wasmkeep-build src/actor.ts -o {}.wasm", p.name),
            "test": "node --test test/*.test.js",
        },
        "dependencies": { "@wasmkeep/actor": format!("file:{}/sdk-ts", p.sdk.display()) },
    });
    let test = example(p, "counter-ts", "test/counter.test.js")?
        .replace("process.env.COUNTER_WASM ?? ", "")
        .replace("../counter.wasm", &format!("../{}.wasm", p.name));
    Ok(vec![
        ("package.json", format!("{}\n", serde_json::to_string_pretty(&package)?)),
        ("tsconfig.json", example(p, "counter-ts", "tsconfig.json")?),
        ("src/actor.ts", example(p, "counter-ts", "src/actor.ts")?),
        ("test/actor.test.js", test),
        ("wasmkeep.toml", manifest(p, "npm run build --silent", &["src"])),
        ("README.md", readme(Lang::Ts, p, "TypeScript")),
        (".gitignore", gitignore(&["node_modules/"])),
    ])
}

/// Python: a module and its pytest tests (the SDK's pytest plugin builds it).
fn python(p: &Project) -> Result<Vec<File>> {
    let pyproject = example(p, "counter-py", "pyproject.toml")?
        .replace("counter.py", "actor.py")
        .replace("counter.wasm", &format!("{}.wasm", p.name))
        .replace("name = \"counter-py\"", &format!("name = \"{}\"", p.name));
    // The class is the project's, as in its wasmkeep.toml; the module is actor.py.
    let conftest = example(p, "counter-py", "tests/conftest.py")?
        .replace("counter.py", "actor.py")
        .replace("{\"counter\":", &format!("{{\"{}\":", p.name))
        .replace("COUNTER_PY_WASM", "ACTOR_WASM");
    Ok(vec![
        ("pyproject.toml", pyproject),
        ("actor.py", example(p, "counter-py", "counter.py")?),
        ("tests/conftest.py", conftest),
        (
            "tests/test_actor.py",
            example(p, "counter-py", "tests/test_counter.py")?
                .replace("actor(\"counter\"", &format!("actor(\"{}\"", p.name)),
        ),
        (
            "wasmkeep.toml",
            manifest(
                p,
                &format!("{} -m wasmkeep_actor build actor.py -o {}.wasm", python_of(p), p.name),
                &["."],
            ),
        ),
        ("README.md", readme(Lang::Python, p, "Python")),
        (".gitignore", gitignore(&["__pycache__/", ".pytest_cache/"])),
    ])
}

/// C: the SDK's Makefile fragment, and a test program on the native harness.
fn c(p: &Project) -> Result<Vec<File>> {
    let sdk = p.sdk.display();
    let makefile = example(p, "counter-c", "Makefile")?
        .replace(
            "WASMKEEP_C_SDK ?= ../../sdk-c",
            &format!("WASMKEEP_C_SDK ?= {sdk}/sdk-c"),
        )
        .replace("WK_NAME := counter-c", &format!("WK_NAME := {}", p.name))
        .replace("counter-c.wasm", &format!("{}.wasm", p.name))
        .replace("counter_test", "actor_test");
    let test = example(p, "counter-c", "test/counter_test.c")?
        .replace("counter_test", "actor_test")
        .replace("\"examples/counter-c\"", &format!("\"local/{}\"", p.name));
    Ok(vec![
        ("Makefile", makefile),
        ("actor.c", example(p, "counter-c", "actor.c")?),
        ("test/actor_test.c", test),
        ("wasmkeep.toml", manifest(p, "make --quiet", &["actor.c"])),
        ("README.md", readme(Lang::C, p, "C")),
        (".gitignore", gitignore(&["build/"])),
    ])
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
