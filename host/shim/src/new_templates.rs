//! The examples `new` copies (`--template counter`, `bank`, `chat`), built
//! into this binary: a `wasmkeep-shim` installed from a registry has no
//! checkout to read them from (ADR 029). They are copies of
//! `examples/counter-*`, `examples/bank-*`, `examples/chat-ts` and of the
//! workspace's cargo profiles; `templates_are_the_examples` fails when one
//! differs from the checkout's, so there is still one example of each to keep
//! working.

/// A file of an example, by its path under `examples/`, which is also its
/// path under `host/shim/templates/` unless `as` names another: a
/// `Cargo.toml` there is stored as `Cargo.toml.in`, since `cargo package`
/// leaves out every folder that holds a `Cargo.toml` (another package).
macro_rules! templates {
    ($($path:literal $(as $stored:literal)?),* $(,)?) => {
        &[$(templates!(@one $path $(as $stored)?)),*]
    };
    (@one $path:literal) => {
        ($path, $path, include_str!(concat!("../templates/", $path)))
    };
    (@one $path:literal as $stored:literal) => {
        ($path, $stored, include_str!(concat!("../templates/", $stored)))
    };
}

/// (path under `examples/`, path under `host/shim/templates/`, contents).
pub(crate) const TEMPLATES: &[(&str, &str, &str)] = templates![
    "counter-rust/src/lib.rs",
    "counter-rust/tests/counter.rs",
    "counter-ts/tsconfig.json",
    "counter-ts/src/actor.ts",
    "counter-ts/test/counter.test.js",
    "counter-py/pyproject.toml",
    "counter-py/counter.py",
    "counter-py/tests/conftest.py",
    "counter-py/tests/test_counter.py",
    "counter-c/Makefile",
    "counter-c/actor.c",
    "counter-c/test/counter_test.c",
    "bank-rust/Cargo.toml" as "bank-rust/Cargo.toml.in",
    "bank-rust/src/lib.rs",
    "bank-rust/tests/bank.rs",
    "bank-rust/tests/chaos.rs",
    "bank-ts/tsconfig.json",
    "bank-ts/src/actor.ts",
    "bank-ts/src/bank.ts",
    "bank-ts/src/broken.ts",
    "bank-ts/test/bank.test.js",
    "bank-ts/test/chaos.test.js",
    "bank-py/pyproject.toml",
    "bank-py/bank.py",
    "bank-py/bank_broken.py",
    "bank-py/tests/conftest.py",
    "bank-py/tests/test_bank.py",
    "bank-py/tests/test_chaos.py",
    "bank-c/Makefile",
    "bank-c/actor.c",
    "bank-c/test/bank_test.c",
    "chat-ts/tsconfig.json",
    "chat-ts/src/actor.ts",
    "chat-ts/test/chat.test.js",
];

/// The workspace's `[profile.*]` tables as `new` writes them into a Rust
/// project on the registries' crates (`registry_profiles` of the
/// workspace's Cargo.toml): the guest profile builds the component.
pub(crate) const PROFILES: &str = include_str!("../templates/profiles.toml");

/// The embedded copy of `examples/<path>`.
pub(crate) fn template(path: &str) -> Option<&'static str> {
    TEMPLATES.iter().find(|(p, _, _)| *p == path).map(|(_, _, text)| *text)
}

/// The `[profile]` tables of a Cargo.toml, as TOML.
///
/// # Errors
/// When `cargo_toml` is not TOML.
pub(crate) fn profiles_of(cargo_toml: &str) -> Result<String, toml::de::Error> {
    let root: toml::Table = cargo_toml.parse()?;
    let mut profiles = toml::Table::new();
    if let Some(profile) = root.get("profile") {
        profiles.insert("profile".into(), profile.clone());
    }
    // A Table always serialises.
    Ok(toml::to_string(&profiles).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The packages of the workspace's `[profile.dev.package.*]` tables that a
    /// project on the registries' crates builds. The others (wasmtime,
    /// cranelift, SQLite) are compiled only into a host, and such a project's
    /// tests drive the release's prebuilt harness instead (ADR 035): cargo
    /// would warn at every command that a profile names a package it does not
    /// build. The registry trial fails on that warning.
    const REGISTRY_PROJECT_PACKAGES: &[&str] = &["*", "wasmparser"];

    /// The `[profile]` tables of a Cargo.toml as a project on the registries'
    /// crates needs them: [`profiles_of`], with the dev profile's per-package
    /// tables only for the packages such a project builds.
    ///
    /// # Errors
    /// When `cargo_toml` is not TOML.
    fn registry_profiles(cargo_toml: &str) -> Result<String, toml::de::Error> {
        let mut profiles: toml::Table = profiles_of(cargo_toml)?.parse()?;
        let packages = profiles
            .get_mut("profile")
            .and_then(|p| p.get_mut("dev"))
            .and_then(|d| d.get_mut("package"))
            .and_then(toml::Value::as_table_mut);
        if let Some(packages) = packages {
            packages.retain(|name, _| REGISTRY_PROJECT_PACKAGES.contains(&name));
        }
        Ok(toml::to_string(&profiles).unwrap_or_default())
    }

    /// The copies match the checkout's examples and profiles. To bring them
    /// up to date: `WASMKEEP_BLESS_TEMPLATES=1 cargo test -p wasmkeep-shim
    /// --bin wasmkeep-shim templates` writes them.
    #[test]
    fn templates_are_the_examples() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        if !repo.join("examples").is_dir() {
            // A packaged crate (cargo package's verify) has no checkout around it.
            return;
        }
        let templates = repo.join("host/shim/templates");
        let mut wanted: Vec<(String, String, &str)> = TEMPLATES
            .iter()
            .map(|(path, stored, text)| {
                let example = std::fs::read_to_string(repo.join("examples").join(path)).unwrap_or_default();
                ((*stored).to_owned(), example, *text)
            })
            .collect();
        let workspace = std::fs::read_to_string(repo.join("Cargo.toml")).unwrap_or_default();
        wanted.push((
            "profiles.toml".into(),
            registry_profiles(&workspace).unwrap_or_default(),
            PROFILES,
        ));
        let stale: Vec<&(String, String, &str)> = wanted.iter().filter(|(_, want, have)| want != have).collect();
        if std::env::var_os("WASMKEEP_BLESS_TEMPLATES").is_some() {
            for (path, want, _) in &stale {
                std::fs::write(templates.join(path), want).unwrap_or_else(|e| panic!("writing {path}: {e}"));
            }
            return;
        }
        let names: Vec<&str> = stale.iter().map(|(path, _, _)| path.as_str()).collect();
        assert!(
            names.is_empty(),
            "host/shim/templates/ differs from examples/ (or the workspace's profiles) in {names:?}: \
             WASMKEEP_BLESS_TEMPLATES=1 cargo test -p wasmkeep-shim --bin wasmkeep-shim templates writes them"
        );
    }
}
