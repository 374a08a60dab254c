//! `wasmkeep.toml`: the app, its classes, their components and access.

use crate::address::{validate_app_name, validate_class_name};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Who may reach an actor of a class from outside the app (over HTTP).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// Any request creates the actor if it does not exist.
    Open,
    /// Requests reach only actors that exist already (created by calls from the app's actors).
    Existing,
    /// Not reachable from outside: only calls from the app's own actors.
    Internal,
}

impl Access {
    /// Every access, as manifests spell them.
    pub const ALL: [Access; 3] = [Access::Open, Access::Existing, Access::Internal];

    /// Its name as manifests and every harness spell it (`open`, `existing`, `internal`).
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Open => "open",
            Access::Existing => "existing",
            Access::Internal => "internal",
        }
    }
}

/// A name that is no [`Access`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("access {0:?} is not open, existing or internal")]
pub struct UnknownAccess(pub String);

impl std::str::FromStr for Access {
    type Err = UnknownAccess;

    /// # Errors
    /// Not `open`, `existing` or `internal`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Access::ALL
            .into_iter()
            .find(|a| a.as_str() == s)
            .ok_or_else(|| UnknownAccess(s.to_owned()))
    }
}

/// How each language builds an actor into a component, for messages about
/// a component that is missing or is not one.
pub(crate) const BUILD_HINT: &str = "Rust: `wasmkeep-shim build --manifest-path <crate>/Cargo.toml -o <file>.wasm`; \
     TypeScript: `npx wasmkeep-build src/actor.ts -o <file>.wasm`; \
     Python: `python -m wasmkeep_actor build app.py -o <file>.wasm`; \
     C: `make` with sdk-c/mk/wasmkeep.mk; inside the wasmkeep repository: `cargo xtask guests`";

/// A class as the manifest describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassSpec {
    /// The class name.
    pub name: String,
    /// The component file (absolute, or relative to the working directory).
    pub component: PathBuf,
    /// Who may reach it.
    pub access: Access,
}

/// How `serve --watch` rebuilds a class: `build = "…"` run in the
/// manifest's directory when a file under one of `watch = […]` changes.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassBuild {
    /// The shell command that rebuilds the component.
    pub command: String,
    /// The directory it runs in (the manifest's).
    pub dir: PathBuf,
    /// The files and directories whose changes start it (default: the
    /// manifest's directory).
    pub watch: Vec<PathBuf>,
}

/// A parsed manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// `tenant/app`.
    pub app: String,
    /// `mode = "single" | "cluster"` (single by default).
    pub mode: Mode,
    /// `nodes = n` in cluster mode (2 by default).
    pub nodes: usize,
    /// The classes, by name.
    pub classes: Vec<ClassSpec>,
    /// `expire-after-idle` per class (ADR 0028 §4): how long an actor of the
    /// class may stay idle before it is deleted (cluster mode).
    pub expire_after_idle: BTreeMap<String, std::time::Duration>,
    /// `build` and `watch` per class, for `serve --watch`.
    pub builds: BTreeMap<String, ClassBuild>,
    /// `retention`: how far back every acknowledged state of the app's
    /// actors stays restorable (ADR 064); seven days by default.
    pub retention: std::time::Duration,
}

/// The shortest `expire-after-idle` (ADR 0028 §4).
pub const MIN_EXPIRE_AFTER_IDLE: std::time::Duration = std::time::Duration::from_secs(3600);

/// Parses an idle limit: a number with `s`, `m`, `h` or `d`, at least one hour.
///
/// # Errors
/// A message saying what is wrong and what is accepted.
pub fn parse_idle_limit(text: &str) -> Result<std::time::Duration, String> {
    let d = parse_duration(text)?;
    if d < MIN_EXPIRE_AFTER_IDLE {
        return Err(format!("{text:?} is below the minimum of one hour (\"1h\")"));
    }
    Ok(d)
}

/// Parses a duration: a whole number with `s`, `m`, `h` or `d`.
///
/// # Errors
/// A message saying what is wrong and what is accepted.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let t = text.trim();
    let (n, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => {
            return Err(format!(
                "{text:?} is not a duration: write a number with s, m, h or d (e.g. \"7d\")"
            ));
        }
    };
    let n: u64 = n
        .parse()
        .map_err(|_| format!("{text:?} is not a duration: write a number with s, m, h or d (e.g. \"7d\")"))?;
    Ok(std::time::Duration::from_secs(n.saturating_mul(scale)))
}

/// Why a manifest was refused.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The file could not be read. (The I/O error is in the message and not
    /// a `source`: a report that prints causes would say it twice.)
    #[error("cannot read manifest {path}: {error}")]
    Read {
        /// The manifest path.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
    /// The TOML is malformed or has unknown keys.
    #[error("manifest {path} is not valid: {message}")]
    Invalid {
        /// The manifest path.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    app: String,
    #[serde(default)]
    mode: Mode,
    nodes: Option<usize>,
    retention: Option<String>,
    #[serde(default)]
    classes: BTreeMap<String, RawClass>,
}

/// How the app is hosted: one node with local files, or emulated nodes sharing a bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// One node; the durable delete removes the local files.
    #[default]
    Single,
    /// Several nodes in one process sharing a bucket (a local directory).
    Cluster,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClass {
    component: PathBuf,
    #[serde(default = "default_access")]
    access: Access,
    #[serde(rename = "expire-after-idle")]
    expire_after_idle: Option<String>,
    /// The command that rebuilds the component (`serve --watch`).
    build: Option<String>,
    /// What `serve --watch` watches, relative to the manifest.
    watch: Option<Vec<PathBuf>>,
}

fn default_access() -> Access {
    Access::Open
}

impl Manifest {
    /// Reads and checks a manifest; component paths are resolved against its directory.
    ///
    /// # Errors
    /// The file cannot be read, is not valid TOML, has unknown keys, bad names,
    /// no class, or names a component file that does not exist.
    pub fn load(path: &Path) -> Result<Self, ManifestError> {
        let text = std::fs::read_to_string(path).map_err(|error| ManifestError::Read {
            path: path.to_owned(),
            error,
        })?;
        Self::parse(&text, path.parent().unwrap_or(Path::new(".")), path)
    }

    /// Parses manifest text; `base` is the directory component paths are relative to.
    ///
    /// # Errors
    /// As [`Manifest::load`], except reading.
    pub fn parse(text: &str, base: &Path, shown_as: &Path) -> Result<Self, ManifestError> {
        let invalid = |message: String| ManifestError::Invalid {
            path: shown_as.to_owned(),
            message,
        };
        let raw: RawManifest = toml::from_str(text).map_err(|e| invalid(e.to_string()))?;
        validate_app_name(&raw.app).map_err(invalid)?;
        if raw.classes.is_empty() {
            return Err(invalid(
                "no class: add a [classes.<name>] table with `component = \"path/to/actor.wasm\"`".into(),
            ));
        }
        let mut classes = Vec::new();
        let mut expire_after_idle = BTreeMap::new();
        let mut builds = BTreeMap::new();
        for (name, c) in raw.classes {
            validate_class_name(&name).map_err(invalid)?;
            if let Some(limit) = &c.expire_after_idle {
                let d = parse_idle_limit(limit).map_err(|e| invalid(format!("class {name}: expire-after-idle {e}")))?;
                expire_after_idle.insert(name.clone(), d);
            }
            match (&c.build, &c.watch) {
                (Some(command), watch) => {
                    let watch = watch.as_ref().map_or_else(
                        || vec![base.to_path_buf()],
                        |w| w.iter().map(|p| base.join(p)).collect(),
                    );
                    builds.insert(
                        name.clone(),
                        ClassBuild {
                            command: command.clone(),
                            dir: base.to_path_buf(),
                            watch,
                        },
                    );
                }
                (None, Some(_)) => {
                    return Err(invalid(format!(
                        "class {name}: `watch` needs `build`, the command that rebuilds the component \
                         (e.g. build = \"npm run build\")"
                    )));
                }
                (None, None) => {}
            }
            let component = base.join(&c.component);
            if !component.is_file() {
                return Err(invalid(format!(
                    "class {name}: component {} does not exist: build it first ({BUILD_HINT})",
                    component.display()
                )));
            }
            classes.push(ClassSpec {
                name,
                component,
                access: c.access,
            });
        }
        let nodes = raw.nodes.unwrap_or(match raw.mode {
            Mode::Single => 1,
            Mode::Cluster => 2,
        });
        if raw.mode == Mode::Single && nodes != 1 {
            return Err(invalid(format!("nodes = {nodes} needs mode = \"cluster\"")));
        }
        if !(1..=16).contains(&nodes) {
            return Err(invalid(format!("nodes = {nodes}: a local cluster has 1 to 16 nodes")));
        }
        let retention = match &raw.retention {
            None => crate::storage::retention::DEFAULT_RETENTION,
            Some(text) => parse_duration(text).map_err(|e| invalid(format!("retention {e}")))?,
        };
        Ok(Self {
            app: raw.app,
            mode: raw.mode,
            nodes,
            retention,
            expire_after_idle,
            builds,
            classes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_are_checked() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("a.wasm"), b"x").expect("write");
        let p = dir.path().join("wasmkeep.toml");
        let ok = Manifest::parse(
            "app = \"acme/shop\"\n[classes.cart]\ncomponent = \"a.wasm\"\naccess = \"existing\"\n",
            dir.path(),
            &p,
        )
        .expect("valid");
        assert_eq!(ok.classes[0].access, Access::Existing, "access is read");
        let idle = Manifest::parse(
            "app = \"acme/shop\"\n[classes.cart]\ncomponent = \"a.wasm\"\nexpire-after-idle = \"7d\"\n",
            dir.path(),
            &p,
        )
        .expect("valid");
        assert_eq!(
            idle.expire_after_idle.get("cart"),
            Some(&std::time::Duration::from_secs(7 * 86_400)),
            "expire-after-idle is read per class"
        );
        for (bad, why) in [
            (
                "app = \"acme/shop\"\n[classes.cart]\ncomponent = \"a.wasm\"\nexpire-after-idle = \"30m\"",
                "below the minimum of one hour",
            ),
            (
                "app = \"acme/shop\"\n[classes.cart]\ncomponent = \"a.wasm\"\nexpire-after-idle = \"a week\"",
                "is not a duration",
            ),
            ("app = \"shop\"\n[classes.cart]\ncomponent = \"a.wasm\"", "tenant/app"),
            ("app = \"acme/shop\"", "no class"),
            (
                "app = \"acme/shop\"\n[classes.cart]\ncomponent = \"missing.wasm\"",
                "does not exist",
            ),
            (
                "app = \"acme/shop\"\n[classes.cart]\ncomponent = \"a.wasm\"\naccess = \"public\"",
                "unknown variant",
            ),
            (
                "app = \"acme/shop\"\n[classes.cart]\ncomponent = \"a.wasm\"\ncolour = 1",
                "unknown field",
            ),
        ] {
            let e = Manifest::parse(bad, dir.path(), &p).expect_err(bad).to_string();
            assert!(e.contains(why), "a bad manifest's error says why ({why}): {e}");
        }
    }
}
