//! The files of a Rust project: its Cargo.toml, the example's sources and tests.

use anyhow::{Context as _, Result};

use super::manifest::manifest_of;
use super::readme::readme;
use super::{File, Lang, Project, Sdk, Template, VERSION, example, example_dir, gitignore, replace_exact, shim};
use crate::new_templates::{PROFILES, profiles_of};

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
pub(super) fn rust(p: &Project) -> Result<Vec<File>> {
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
