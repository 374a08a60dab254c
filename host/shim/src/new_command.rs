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
                    "note: the project runs `{SHIM}`, which is not on PATH: add its folder to PATH \
                     (export PATH={dir}:$PATH)"
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
                format!(
                    "{py} -m wasmkeep_actor build {} -o {}.wasm",
                    python_module(p.template),
                    p.name
                ),
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

/// The module a Python project builds: the counter's is renamed `actor.py`;
/// the bank's keeps its name, which its broken variant imports.
fn python_module(template: Template) -> &'static str {
    match template {
        Template::Bank => "bank.py",
        Template::Counter | Template::Chat => "actor.py",
    }
}

/// What the README says the actor is, and its first request with the answer.
fn what_it_is(p: &Project) -> (String, String) {
    let name = &p.name;
    match p.template {
        Template::Counter => (
            format!(
                "a counter. `GET /{name}/<actor>`\n\
                 reads its count, `POST` adds one, `DELETE` deletes the actor (durably, before it answers)."
            ),
            format!("`curl -X POST http://127.0.0.1:8787/{name}/a` answers `1`"),
        ),
        Template::Bank => (
            format!(
                "a bank account whose every\n\
                 `200` is kept. `POST /{name}/<account>/deposit?op=<id>&amount=<n>` and `.../withdraw?op=<id>&amount=<n>`\n\
                 move money once per operation id (a retry with the same id changes nothing and answers\n\
                 the same; a withdrawal beyond the balance is refused with 409), `GET /{name}/<account>`\n\
                 answers `{{\"balance\": <n>, \"interest\": <total paid>}}`, its alarm pays 1% interest every\n\
                 day, and `DELETE` closes the account durably. Its tests check each rule, then run seeded\n\
                 chaos on one node and on two (lost answers, restarts, failed uploads, a node cut off),\n\
                 where a variant whose deposits forget their id must be caught."
            ),
            format!("`curl -X POST 'http://127.0.0.1:8787/{name}/ada/deposit?op=d1&amount=100'` answers `100`"),
        ),
        Template::Chat => (
            format!(
                "a chat room, one actor per\n\
                 room. A WebSocket to `ws://127.0.0.1:8787/{name}/<room>/?name=<nickname>` joins it: it\n\
                 receives the latest messages, then every message sent to the room as JSON.\n\
                 `POST /{name}/<room>/messages?name=<who>` with the text as its body sends one,\n\
                 `GET /{name}/<room>/history` reads them, `DELETE /{name}/<room>/` deletes the room durably."
            ),
            format!(
                "`curl -d hello 'http://127.0.0.1:8787/{name}/lobby/messages?name=me'` answers the message\n\
                 it stored, as JSON"
            ),
        ),
    }
}

fn readme(lang: Lang, p: &Project, what: &str) -> String {
    let (is, first) = what_it_is(p);
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
         A wasmkeep actor in {what}, made by `wasmkeep-shim new`: {is}\n\n\
         ```sh\n\
         {commands}\n\
         ```\n\n\
         Then {first}.\n\
         While it serves, the dashboard is at http://127.0.0.1:8787/_shim/ui: every actor with\n\
         its tables, alarm and log lines, the virtual clock and the faults. With `serve --watch`,\n\
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
    let dir = example_dir(p, Lang::Rust)?;
    // The example's features (the bank's broken variant, which its chaos test builds).
    let features = match p.template {
        Template::Counter => String::new(),
        _ => features_table(&example(p, dir, "Cargo.toml")?)?,
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
         {features}\
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
    let tests = match p.template {
        Template::Counter => vec![(
            "tests/actor.rs",
            replace_exact(
                &example(p, dir, "tests/counter.rs")?,
                "cargo test -p counter-rust",
                "cargo test",
            )?,
        )],
        _ => vec![
            ("tests/bank.rs", example(p, dir, "tests/bank.rs")?),
            ("tests/chaos.rs", example(p, dir, "tests/chaos.rs")?),
        ],
    };
    let mut files = vec![
        ("Cargo.toml", cargo_toml),
        ("src/lib.rs", example(p, dir, "src/lib.rs")?),
    ];
    files.extend(tests);
    files.extend([
        (
            "wasmkeep.toml",
            // The component `cargo test` builds (wasmkeep-actor-testing) and
            // `wasmkeep-shim build` writes by default: after a green `cargo
            // test`, `serve` serves what was tested.
            manifest_of(p, &rust_component(p), &format!("{} build", shim(p)), &["src"]),
        ),
        ("README.md", readme(Lang::Rust, p, "Rust")),
        (".gitignore", gitignore(&["target/"])),
    ]);
    files.extend(extra);
    Ok(files)
}

/// The `[features]` table of an example's Cargo.toml as it is written there,
/// with the comment above it, then a blank line.
fn features_table(cargo_toml: &str) -> Result<String> {
    let lines: Vec<&str> = cargo_toml.lines().collect();
    let at = lines.iter().position(|l| l.trim() == "[features]").context(
        "the template's Cargo.toml no longer has [features]: wasmkeep-shim new needs updating with its example",
    )?;
    let mut start = at;
    while start > 0 && lines[start - 1].starts_with('#') {
        start -= 1;
    }
    let end = lines[at + 1..]
        .iter()
        .position(|l| l.trim().is_empty() || l.starts_with('['))
        .map_or(lines.len(), |n| at + 1 + n);
    Ok(format!("{}\n\n", lines[start..end].join("\n")))
}

/// TypeScript: a package on `@wasmkeep/actor`, tested with `node --test`.
fn ts(p: &Project) -> Result<Vec<File>> {
    let sdk = match &p.sdk {
        Sdk::Registry => format!("^{VERSION}"),
        Sdk::Checkout(root) => format!("file:{}/sdk-ts", root.display()),
    };
    let dir = example_dir(p, Lang::Ts)?;
    let mut scripts = serde_json::json!({
        "build": format!("wasmkeep-build src/actor.ts -o {}.wasm", p.name),
        "test": "node --test test/*.test.js",
    });
    // A test reads the component the example's test command builds (its
    // environment variable), else the one `npm run build` writes here.
    let own = |test: &str, env: &str, wasm: &str| -> Result<String> {
        let test = replace_exact(test, &format!("process.env.{env} ?? "), "")?;
        replace_exact(&test, &format!("../{wasm}"), &format!("../{}.wasm", p.name))
    };
    let (sources, tests): (&[&str], Vec<File>) = match p.template {
        Template::Counter => (
            &["src/actor.ts"],
            vec![(
                "test/actor.test.js",
                own(
                    &example(p, dir, "test/counter.test.js")?,
                    "COUNTER_WASM",
                    "counter.wasm",
                )?,
            )],
        ),
        Template::Bank => {
            // The chaos test's broken variant, built before `npm test` runs.
            let broken = format!("{}-broken.wasm", p.name);
            scripts["pretest"] = format!("wasmkeep-build src/broken.ts -o {broken}").into();
            let chaos = own(&example(p, dir, "test/chaos.test.js")?, "BANK_WASM", "bank.wasm")?;
            let chaos = replace_exact(&chaos, "../bank-broken.wasm", &format!("../{broken}"))?;
            (
                &["src/actor.ts", "src/bank.ts", "src/broken.ts"],
                vec![
                    (
                        "test/bank.test.js",
                        own(&example(p, dir, "test/bank.test.js")?, "BANK_WASM", "bank.wasm")?,
                    ),
                    (
                        "test/chaos.test.js",
                        replace_exact(&chaos, "process.env.BANK_BROKEN_WASM ?? ", "")?,
                    ),
                ],
            )
        }
        Template::Chat => (
            &["src/actor.ts"],
            vec![(
                "test/chat.test.js",
                own(&example(p, dir, "test/chat.test.js")?, "CHAT_WASM", "chat.wasm")?,
            )],
        ),
    };
    let package = serde_json::json!({
        "name": p.name,
        "version": "0.1.0",
        "private": true,
        "type": "module",
        "scripts": scripts,
        "dependencies": { "@wasmkeep/actor": sdk },
    });
    let mut files = vec![
        ("package.json", format!("{}\n", serde_json::to_string_pretty(&package)?)),
        ("tsconfig.json", example(p, dir, "tsconfig.json")?),
    ];
    for source in sources {
        files.push((source, example(p, dir, source)?));
    }
    files.extend(tests);
    files.extend([
        ("wasmkeep.toml", manifest(p, "npm run build --silent", &["src"])),
        ("README.md", readme(Lang::Ts, p, "TypeScript")),
        (".gitignore", gitignore(&["node_modules/"])),
    ]);
    Ok(files)
}

/// Python: a module and its pytest tests (the SDK's pytest plugin builds it).
fn python(p: &Project) -> Result<Vec<File>> {
    let dir = example_dir(p, Lang::Python)?;
    let module = python_module(p.template);
    let mut pyproject = example(p, dir, "pyproject.toml")?;
    let mut files = Vec::new();
    match p.template {
        Template::Counter => {
            pyproject = pyproject
                .replace("counter.py", module)
                .replace("counter.wasm", &format!("{}.wasm", p.name));
            pyproject = replace_exact(&pyproject, "name = \"counter-py\"", &format!("name = \"{}\"", p.name))?;
            // The class is the project's, as in its wasmkeep.toml; the module is actor.py.
            let conftest = example(p, dir, "tests/conftest.py")?.replace("counter.py", module);
            let conftest = replace_exact(&conftest, "{\"counter\":", &format!("{{\"{}\":", p.name))?
                .replace("COUNTER_PY_WASM", "ACTOR_WASM");
            let test = replace_exact(
                &example(p, dir, "tests/test_counter.py")?,
                "actor(\"counter\"",
                &format!("actor(\"{}\"", p.name),
            )?;
            files.push((module, example(p, dir, "counter.py")?));
            files.push(("tests/conftest.py", conftest));
            files.push(("tests/test_actor.py", test));
        }
        Template::Bank | Template::Chat => {
            pyproject = pyproject.replace("bank.wasm", &format!("{}.wasm", p.name));
            pyproject = replace_exact(&pyproject, "name = \"bank-py\"", &format!("name = \"{}\"", p.name))?;
            // The tests' class stays the example's; the components they may be given
            // built elsewhere are the project's.
            let conftest = replace_exact(
                &example(p, dir, "tests/conftest.py")?,
                "BANK_PY_BROKEN_WASM",
                "ACTOR_BROKEN_WASM",
            )?;
            let conftest = replace_exact(&conftest, "BANK_PY_WASM", "ACTOR_WASM")?;
            files.push((module, example(p, dir, "bank.py")?));
            files.push(("bank_broken.py", example(p, dir, "bank_broken.py")?));
            files.push(("tests/conftest.py", conftest));
            files.push(("tests/test_bank.py", example(p, dir, "tests/test_bank.py")?));
            files.push(("tests/test_chaos.py", example(p, dir, "tests/test_chaos.py")?));
        }
    }
    if let Sdk::Registry = p.sdk {
        let next = next_breaking(VERSION);
        pyproject = replace_exact(
            &pyproject,
            &format!("dependencies = [\"wasmkeep-actor=={VERSION}\"]"),
            // [testing] brings the harness, which carries the host (ADR 032).
            &format!("dependencies = [\"wasmkeep-actor[testing]>={VERSION},<{next}\"]"),
        )?;
    }
    let mut ignore = vec!["__pycache__/", ".pytest_cache/"];
    if let Sdk::Registry = p.sdk {
        ignore.push(".venv/");
    }
    files.insert(0, ("pyproject.toml", pyproject));
    files.extend([
        (
            "wasmkeep.toml",
            manifest(
                p,
                &format!("{} -m wasmkeep_actor build {module} -o {}.wasm", python_of(p), p.name),
                &["."],
            ),
        ),
        ("README.md", readme(Lang::Python, p, "Python")),
        (".gitignore", gitignore(&ignore)),
    ]);
    Ok(files)
}

/// C: the SDK's Makefile fragment, and a test program on the native harness.
/// From a release archive, pkg-config finds the SDK (`wasmkeep.pc`'s `sdk`)
/// and the harness (`wasmkeep-harness.pc`); on a checkout, its `sdk-c/` and
/// its `target/debug`.
fn c(p: &Project) -> Result<Vec<File>> {
    let dir = example_dir(p, Lang::C)?;
    let mut makefile = example(p, dir, "Makefile")?;
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
            makefile = drop_checkout_note(&makefile)?;
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
    let (makefile, files) = match p.template {
        Template::Counter => {
            let makefile = replace_exact(&makefile, "WK_NAME := counter-c", &format!("WK_NAME := {}", p.name))?
                .replace("counter-c.wasm", &format!("{}.wasm", p.name))
                .replace("counter_test", "actor_test");
            let test = replace_exact(
                &example(p, dir, "test/counter_test.c")?,
                "\"examples/counter-c\"",
                &format!("\"local/{}\"", p.name),
            )?
            .replace("counter_test", "actor_test");
            (
                makefile,
                vec![("actor.c", example(p, dir, "actor.c")?), ("test/actor_test.c", test)],
            )
        }
        Template::Bank | Template::Chat => {
            // The broken variant (`make broken`, which `make test` builds) is `<name>-broken`.
            let broken = format!("{}-broken", p.name);
            let makefile = replace_exact(&makefile, "bank-c-broken", &broken)?;
            let makefile = replace_exact(&makefile, "WK_NAME := bank-c", &format!("WK_NAME := {}", p.name))?
                .replace("bank-c.wasm", &format!("{}.wasm", p.name));
            let test = replace_exact(
                &example(p, dir, "test/bank_test.c")?,
                "\"examples/bank-c\"",
                &format!("\"local/{}\"", p.name),
            )?
            .replace("bank-c-broken", &broken)
            .replace("bank-c.wasm", &format!("{}.wasm", p.name));
            (
                makefile,
                vec![("actor.c", example(p, dir, "actor.c")?), ("test/bank_test.c", test)],
            )
        }
    };
    let mut files = [vec![("Makefile", makefile)], files].concat();
    files.extend([
        // The folder, not actor.c: a header of the actor's changed rebuilds
        // too (wasmkeep.mk tracks headers), as does a file added later.
        ("wasmkeep.toml", manifest(p, "make --quiet", &["."])),
        ("README.md", readme(Lang::C, p, "C")),
        (".gitignore", gitignore(&["build/"])),
    ]);
    Ok(files)
}

/// An example Makefile without its words for a checkout ("Outside this
/// repository, set WASMKEEP_C_SDK ... is built)."), which a registry user
/// has not: the project's Makefile finds the SDK with pkg-config.
fn drop_checkout_note(makefile: &str) -> Result<String> {
    const FROM: &str = "Outside this repository,";
    const TO: &str = "is built).";
    let (Some(start), Some(len)) = (
        makefile.find(FROM),
        makefile.find(FROM).and_then(|s| makefile[s..].find(TO)),
    ) else {
        bail!("the template no longer has {FROM:?} ... {TO:?}: wasmkeep-shim new needs updating with its example");
    };
    let before = makefile[..start].trim_end_matches([' ', '#']);
    let after = &makefile[start + len + TO.len()..];
    // A note on lines of its own leaves no empty comment line behind.
    let after = if before.ends_with('\n') {
        after.strip_prefix('\n').unwrap_or(after)
    } else {
        after
    };
    Ok(format!("{before}{after}"))
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
