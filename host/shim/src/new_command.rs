//! `wasmkeep-shim new <dir> --lang rust|ts|python|c`: a project that builds,
//! tests in its language's own runner and serves.
//!
//! The templates are the repository's counter examples (which the test
//! command builds and tests): built into this binary (`new_templates`), or
//! read from the checkout `--sdk` names. A project depends on the SDKs of
//! this wasmkeep-shim's version from the package registries, or, with
//! `--sdk DIR`, on that checkout's SDKs, for working on the SDKs (ADR 029).

use anyhow::{Context as _, Result, bail};
use std::path::{Path, PathBuf};

use crate::new_templates::{PROFILES, profiles_of, template};

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
    let from = match &project.sdk {
        Sdk::Registry => format!("the {VERSION} SDK from its registry"),
        Sdk::Checkout(dir) => format!("the SDK in {}", dir.display()),
    };
    println!(
        "created {} ({} actor \"{}\" on {from}, {} files); next:",
        args.dir.display(),
        lang_label(args.lang),
        project.name,
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

/// The name the host binary has on PATH, in the C archive's `bin/`, the
/// Python harness wheel's scripts and npm's `.bin/`.
const SHIM: &str = "wasmkeep-shim";

/// How the project's files run `wasmkeep-shim`. From the registries by its
/// name, as each language's package puts it on PATH (or runs it: the README's
/// serve command is `npx wasmkeep-shim` or `python -m wasmkeep_actor` there):
/// a project names no path of the machine that made it. With `--sdk`, the
/// project names the checkout anyway; the host there is this binary, by its
/// name when it is the one on PATH, else by its path (so that `serve
/// --watch` of a Rust project runs this one).
fn shim_command(sdk: &Sdk, lang: Lang) -> Result<String> {
    let this = std::env::current_exe().context("finding this wasmkeep-shim's path")?;
    let on_path = on_path(SHIM);
    let is_this = on_path.as_ref().is_some_and(|p| same_file(p, &this));
    match sdk {
        Sdk::Checkout(_) if !is_this => Ok(this.display().to_string()),
        Sdk::Checkout(_) => Ok(SHIM.to_owned()),
        Sdk::Registry => {
            // Rust's and C's commands run the binary on PATH (the C archive's
            // bin/); npm and Python run their own.
            if matches!(lang, Lang::Rust | Lang::C) && on_path.is_none() {
                let dir = this.parent().map(|d| d.display().to_string()).unwrap_or_default();
                eprintln!(
                    "note: the project runs `{SHIM}`, which is not on PATH: add its folder to PATH                      (export PATH={dir}:$PATH)"
                );
            }
            Ok(SHIM.to_owned())
        }
    }
}

/// The first executable file `name` in PATH's folders.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && executable(&m)))
}

#[cfg(unix)]
fn executable(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    m.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn executable(_: &std::fs::Metadata) -> bool {
    true
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn shim(p: &Project) -> &str {
    &p.shim
}

/// The README's commands, each with what it does: (install,) build, test, serve.
fn commands(lang: Lang, p: &Project) -> Vec<(String, &'static str)> {
    let runner = match (&p.sdk, lang) {
        (Sdk::Registry, Lang::Ts) => format!("npx {SHIM}"),
        (Sdk::Registry, Lang::Python) => format!("{} -m wasmkeep_actor", python_of(p)),
        _ => shim(p).to_owned(),
    };
    let serve = (
        format!("{runner} serve"),
        "serve wasmkeep.toml on http://127.0.0.1:8787",
    );
    let test = "run the tests in the local host";
    let build = "build the component";
    match lang {
        Lang::Rust => vec![
            (
                format!("{} build", shim(p)),
                "build the component (cargo test builds it too)",
            ),
            ("cargo test".to_owned(), test),
            serve,
        ],
        Lang::Ts => vec![
            ("npm install && npm run build".to_owned(), build),
            ("npm test".to_owned(), test),
            serve,
        ],
        Lang::Python => {
            let py = python_of(p);
            let mut all = Vec::new();
            if let Sdk::Registry = p.sdk {
                let next = next_breaking(VERSION);
                all.push((
                    format!(
                        "python3 -m venv .venv && .venv/bin/pip install \"wasmkeep-actor[testing]>={VERSION},<{next}\""
                    ),
                    "install the SDK, its test harness and the host",
                ));
            }
            all.push((
                format!("{py} -m wasmkeep_actor build actor.py -o {}.wasm", p.name),
                build,
            ));
            all.push((format!("{py} -m pytest"), test));
            all.push(serve);
            all
        }
        Lang::C => vec![("make".to_owned(), build), ("make test".to_owned(), test), serve],
    }
}

/// The Python that has the SDK and its tools: the project's virtualenv, or
/// the checkout's (bash sdk-python/scripts/setup.sh makes it).
fn python_of(p: &Project) -> String {
    match &p.sdk {
        Sdk::Registry => ".venv/bin/python".to_owned(),
        Sdk::Checkout(root) => root.join("target/py-venv/bin/python").display().to_string(),
    }
}

fn readme(lang: Lang, p: &Project, what: &str) -> String {
    let commands: Vec<String> = commands(lang, p)
        .into_iter()
        .map(|(command, does)| format!("{command}   # {does}"))
        .collect();
    let sdk = match (&p.sdk, lang) {
        (Sdk::Checkout(root), _) => format!("It uses the SDK of the wasmkeep checkout {}.", root.display()),
        (Sdk::Registry, Lang::C) => format!(
            "It uses the wasmkeep C SDK {VERSION} from its release archive, unpacked into a prefix:\n\
             `make` finds it with pkg-config (PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig), and\n\
             `wasmkeep-shim` is its bin/ (PATH=$PREFIX/bin:$PATH)."
        ),
        (Sdk::Registry, _) => format!("It uses the wasmkeep {what} SDK {VERSION} from its package registry."),
    };
    format!(
        "# {name}\n\n\
         A wasmkeep actor in {what}, made by `wasmkeep-shim new`: a counter. `GET /{name}/<actor>`\n\
         reads its count, `POST` adds one, `DELETE` deletes the actor (durably, before it answers).\n\n\
         ```sh\n\
         {commands}\n\
         ```\n\n\
         Then `curl -X POST http://127.0.0.1:8787/{name}/a` answers `1`. With `serve --watch`,\n\
         a change to the sources rebuilds the component and swaps it in while the actors keep\n\
         their state, alarms and open sockets. {sdk}\n",
        name = p.name,
        commands = commands.join("\n"),
    )
}

/// The app manifest: one class, its component, and how `serve --watch`
/// rebuilds it (`build`, run here when a file under `watch` changes).
fn manifest(p: &Project, build: &str, watch: &[&str]) -> String {
    manifest_of(p, &format!("{}.wasm", p.name), build, watch)
}

/// [`manifest`] with the component at `component`.
fn manifest_of(p: &Project, component: &str, build: &str, watch: &[&str]) -> String {
    let watch: Vec<String> = watch.iter().map(|w| format!("{w:?}")).collect();
    format!(
        "# The app manifest for `wasmkeep-shim serve`. Paths are relative to this file.\n\
         app = \"local/{name}\"\n\n\
         [classes.{name}]\n\
         component = {component:?}\n\
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

/// Where a Rust project's component is: `<target dir>/components/<package>.wasm`,
/// which both `cargo test` (wasmkeep-actor-testing) and `wasmkeep-shim build`
/// write. The project's own `target/`, or with `--sdk` the checkout's.
fn rust_component(p: &Project) -> String {
    match &p.sdk {
        Sdk::Registry => format!("target/components/{}.wasm", p.name),
        Sdk::Checkout(root) => format!("{}/target/components/{}.wasm", root.display(), p.name),
    }
}

/// Rust: a cdylib crate on the SDK, tested with wasmkeep-actor-testing.
/// From the registries it builds in its own `target/`, and its tests drive
/// the release's prebuilt harness library (beside the `wasmkeep-shim` on
/// `PATH`): it compiles no host (ADR 035). On a checkout it builds in the
/// checkout's target directory with its lock file, profiles and
/// workspace-hack, and compiles the host in (`in-process`), the one already
/// compiled there (ADR 015).
fn rust(p: &Project) -> Result<Vec<File>> {
    let (deps, dev_deps, profiles, extra) = match &p.sdk {
        Sdk::Registry => (
            format!("wasmkeep-actor = \"{VERSION}\"\n"),
            format!(
                "# The host is the release's harness library, found beside the wasmkeep-shim\n\
                 # on PATH (or set WASMKEEP_HARNESS_LIB to it): no host is compiled here.\n\
                 wasmkeep-actor-testing = \"{VERSION}\"\n"
            ),
            PROFILES.to_owned(),
            Vec::new(),
        ),
        Sdk::Checkout(root) => {
            let sdk = root.display();
            let workspace =
                std::fs::read_to_string(root.join("Cargo.toml")).context("reading the repository's Cargo.toml")?;
            let profiles = profiles_of(&workspace).context("parsing the repository's Cargo.toml")?;
            let cargo_config = format!(
                "# Builds in the wasmkeep repository's target directory, where its host is\n\
                 # already compiled (a first `cargo test` then takes seconds, not minutes).\n\
                 # Delete this file to build here on your own.\n\
                 [build]\n\
                 target-dir = \"{sdk}/target\"\n"
            );
            let lock =
                std::fs::read_to_string(root.join("Cargo.lock")).context("reading the repository's Cargo.lock")?;
            (
                format!("wasmkeep-actor = {{ path = \"{sdk}/sdk-rust\" }}\n"),
                format!(
                    "wasmkeep-actor-testing = {{ path = \"{sdk}/sdk-rust/testing\", features = [\"in-process\"] }}\n\
                     # The repository's feature set of the host's dependencies: with its profiles\n\
                     # below and its target directory (.cargo/config.toml), the host is reused.\n\
                     wasmkeep-workspace-hack = {{ path = \"{sdk}/host/workspace-hack\" }}\n"
                ),
                profiles,
                // The repository's versions, so the dependencies already built are these.
                vec![(".cargo/config.toml", cargo_config), ("Cargo.lock", lock)],
            )
        }
    };
    let cargo_toml = format!(
        "[package]\n\
         name = \"{name}\"\n\
         version = \"0.1.0\"\n\
         edition = \"2024\"\n\
         publish = false\n\n\
         [lib]\n\
         crate-type = [\"cdylib\"]\n\n\
         [dependencies]\n\
         {deps}\n\
         [dev-dependencies]\n\
         # `cargo test` builds this crate into a component and drives it in the host.\n\
         {dev_deps}\
         serde_json = \"1\"\n\n\
         # A project of its own, not a member of an enclosing workspace.\n\
         [workspace]\n\n\
         # The wasmkeep workspace's profiles (the guest profile builds the component).\n\
         {profiles}",
        name = p.name,
    );
    let test = replace_exact(
        &example(p, "counter-rust", "tests/counter.rs")?,
        "cargo test -p counter-rust",
        "cargo test",
    )?;
    let mut files = vec![
        ("Cargo.toml", cargo_toml),
        ("src/lib.rs", example(p, "counter-rust", "src/lib.rs")?),
        ("tests/actor.rs", test),
        (
            "wasmkeep.toml",
            // The component `cargo test` builds (wasmkeep-actor-testing) and
            // `wasmkeep-shim build` writes by default: after a green `cargo
            // test`, `serve` serves what was tested.
            manifest_of(p, &rust_component(p), &format!("{} build", shim(p)), &["src"]),
        ),
        ("README.md", readme(Lang::Rust, p, "Rust")),
        (".gitignore", gitignore(&["target/"])),
    ];
    files.extend(extra);
    Ok(files)
}

/// TypeScript: a package on `@wasmkeep/actor`, tested with `node --test`.
fn ts(p: &Project) -> Result<Vec<File>> {
    let sdk = match &p.sdk {
        Sdk::Registry => format!("^{VERSION}"),
        Sdk::Checkout(root) => format!("file:{}/sdk-ts", root.display()),
    };
    let package = serde_json::json!({
        "name": p.name,
        "version": "0.1.0",
        "private": true,
        "type": "module",
        "scripts": {
            "build": format!("wasmkeep-build src/actor.ts -o {}.wasm", p.name),
            "test": "node --test test/*.test.js",
        },
        "dependencies": { "@wasmkeep/actor": sdk },
    });
    let test = example(p, "counter-ts", "test/counter.test.js")?;
    let test = replace_exact(&test, "process.env.COUNTER_WASM ?? ", "")?;
    let test = replace_exact(&test, "../counter.wasm", &format!("../{}.wasm", p.name))?;
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
    let mut pyproject = example(p, "counter-py", "pyproject.toml")?
        .replace("counter.py", "actor.py")
        .replace("counter.wasm", &format!("{}.wasm", p.name));
    pyproject = replace_exact(&pyproject, "name = \"counter-py\"", &format!("name = \"{}\"", p.name))?;
    if let Sdk::Registry = p.sdk {
        let next = next_breaking(VERSION);
        pyproject = replace_exact(
            &pyproject,
            &format!("dependencies = [\"wasmkeep-actor=={VERSION}\"]"),
            // [testing] brings the harness, which carries the host (ADR 032).
            &format!("dependencies = [\"wasmkeep-actor[testing]>={VERSION},<{next}\"]"),
        )?;
    }
    // The class is the project's, as in its wasmkeep.toml; the module is actor.py.
    let conftest = example(p, "counter-py", "tests/conftest.py")?.replace("counter.py", "actor.py");
    let conftest = replace_exact(&conftest, "{\"counter\":", &format!("{{\"{}\":", p.name))?
        .replace("COUNTER_PY_WASM", "ACTOR_WASM");
    let test = replace_exact(
        &example(p, "counter-py", "tests/test_counter.py")?,
        "actor(\"counter\"",
        &format!("actor(\"{}\"", p.name),
    )?;
    let mut ignore = vec!["__pycache__/", ".pytest_cache/"];
    if let Sdk::Registry = p.sdk {
        ignore.push(".venv/");
    }
    Ok(vec![
        ("pyproject.toml", pyproject),
        ("actor.py", example(p, "counter-py", "counter.py")?),
        ("tests/conftest.py", conftest),
        ("tests/test_actor.py", test),
        (
            "wasmkeep.toml",
            manifest(
                p,
                &format!("{} -m wasmkeep_actor build actor.py -o {}.wasm", python_of(p), p.name),
                &["."],
            ),
        ),
        ("README.md", readme(Lang::Python, p, "Python")),
        (".gitignore", gitignore(&ignore)),
    ])
}

/// C: the SDK's Makefile fragment, and a test program on the native harness.
/// From a release archive, pkg-config finds the SDK (`wasmkeep.pc`'s `sdk`)
/// and the harness (`wasmkeep-harness.pc`); on a checkout, its `sdk-c/` and
/// its `target/debug`.
fn c(p: &Project) -> Result<Vec<File>> {
    let mut makefile = example(p, "counter-c", "Makefile")?;
    match &p.sdk {
        Sdk::Checkout(root) => {
            makefile = replace_exact(
                &makefile,
                "WASMKEEP_C_SDK ?= ../../sdk-c",
                &format!("WASMKEEP_C_SDK ?= {}/sdk-c", root.display()),
            )?;
        }
        Sdk::Registry => {
            makefile = replace_exact(
                &makefile,
                "WASMKEEP_C_SDK ?= ../../sdk-c",
                &format!(
                    "# The C SDK {VERSION} from its release archive, found with pkg-config:\n\
                     # export PKG_CONFIG_PATH=<the archive's directory>/lib/pkgconfig\n\
                     WASMKEEP_C_SDK ?= $(shell pkg-config --atleast-version={VERSION} wasmkeep && \
                     pkg-config --variable=sdk wasmkeep)\n\
                     WASMKEEP_HARNESS_INCLUDE ?= $(shell pkg-config --variable=includedir wasmkeep-harness)",
                ),
            )?;
            // The example's words are about the repository, which a registry user has not.
            makefile = replace_exact(
                &makefile,
                "# test in the native harness (`make test`). Outside this repository, set\n\
                 # WASMKEEP_C_SDK to the SDK's directory and WASMKEEP_TARGET to the repository's\n\
                 # target/debug (where libwasmkeep_c_harness.so is built).\n",
                "# test in the native harness (`make test`).\n",
            )?;
            makefile = replace_exact(
                &makefile,
                "$(error WASMKEEP_C_SDK ($(WASMKEEP_C_SDK)) is not the C SDK's directory: set it to sdk-c of \
                 the wasmkeep repository, here or with make WASMKEEP_C_SDK=...)",
                &format!(
                    "$(error pkg-config finds no wasmkeep C SDK {VERSION} or newer (WASMKEEP_C_SDK is \
                     '$(WASMKEEP_C_SDK)'): export PKG_CONFIG_PATH=<the SDK's prefix>/lib/pkgconfig, or make \
                     WASMKEEP_C_SDK=<the SDK's share/wasmkeep>)"
                ),
            )?;
            makefile = replace_exact(
                &makefile,
                "WASMKEEP_TARGET ?= $(WASMKEEP_C_SDK)/../target/debug",
                "WASMKEEP_TARGET ?= $(shell pkg-config --variable=libdir wasmkeep-harness)",
            )?;
            makefile = replace_exact(
                &makefile,
                "$(WASMKEEP_C_SDK)/include/wasmkeep_harness.h",
                "$(WASMKEEP_HARNESS_INCLUDE)/wasmkeep_harness.h",
            )?;
            makefile = replace_exact(
                &makefile,
                "-I$(WASMKEEP_C_SDK)/include ",
                "-I$(WASMKEEP_HARNESS_INCLUDE) ",
            )?;
        }
    }
    let makefile = replace_exact(&makefile, "WK_NAME := counter-c", &format!("WK_NAME := {}", p.name))?
        .replace("counter-c.wasm", &format!("{}.wasm", p.name))
        .replace("counter_test", "actor_test");
    let test = replace_exact(
        &example(p, "counter-c", "test/counter_test.c")?,
        "\"examples/counter-c\"",
        &format!("\"local/{}\"", p.name),
    )?
    .replace("counter_test", "actor_test");
    Ok(vec![
        ("Makefile", makefile),
        ("actor.c", example(p, "counter-c", "actor.c")?),
        ("test/actor_test.c", test),
        // The folder, not actor.c: a header of the actor's changed rebuilds
        // too (wasmkeep.mk tracks headers), as does a file added later.
        ("wasmkeep.toml", manifest(p, "make --quiet", &["."])),
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
