//! What guest builds read of a cargo workspace: its packages (`cargo
//! metadata`) and the profile guests are built with.

use std::collections::BTreeSet;
use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, anyhow};

use crate::run_output;

/// A package of a cargo workspace, as far as guest builds care.
#[derive(Debug, Clone)]
pub(crate) struct Package {
    pub(crate) name: String,
    pub(crate) manifest_path: PathBuf,
    /// The lib target's name if it is a `cdylib`.
    pub(crate) cdylib: Option<String>,
    pub(crate) dependencies: BTreeSet<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct Metadata {
    pub(crate) workspace_root: PathBuf,
    pub(crate) target_directory: PathBuf,
    pub(crate) packages: Vec<Package>,
}

pub(crate) fn metadata(manifest: &Path) -> Result<Metadata> {
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let text = run_output(
        Command::new(cargo)
            .args(["metadata", "--format-version", "1", "--no-deps", "--manifest-path"])
            .arg(manifest),
    )?;
    let json: serde_json::Value = serde_json::from_str(&text).context("cargo metadata printed invalid JSON")?;
    let path = |key: &str| -> Result<PathBuf> {
        json[key]
            .as_str()
            .map(PathBuf::from)
            .ok_or_else(|| anyhow!("cargo metadata: no {key}"))
    };
    let mut packages = Vec::new();
    for p in json["packages"].as_array().into_iter().flatten() {
        let str_of = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
        let cdylib = p["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| {
                t["crate_types"]
                    .as_array()
                    .is_some_and(|c| c.iter().any(|c| c == "cdylib"))
            })
            .map(|t| str_of(&t["name"]).replace('-', "_"));
        packages.push(Package {
            name: str_of(&p["name"]),
            manifest_path: PathBuf::from(str_of(&p["manifest_path"])),
            cdylib,
            dependencies: p["dependencies"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|d| str_of(&d["name"]))
                .collect(),
        });
    }
    Ok(Metadata {
        workspace_root: path("workspace_root")?,
        target_directory: path("target_directory")?,
        packages,
    })
}

/// The profile guests are built with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Profile {
    /// The workspace's `[profile.guest]`.
    Guest,
    /// `--release` with `panic = "abort"` (for crates outside this repo).
    ReleaseAbort,
}

impl Profile {
    pub(crate) fn for_workspace(root: &Path) -> Result<Self> {
        let manifest = root.join("Cargo.toml");
        let text = fs::read_to_string(&manifest).with_context(|| format!("reading {}", manifest.display()))?;
        let toml: toml::Table = text
            .parse()
            .with_context(|| format!("parsing {}", manifest.display()))?;
        let has_guest = toml.get("profile").and_then(|p| p.get("guest")).is_some();
        Ok(if has_guest { Self::Guest } else { Self::ReleaseAbort })
    }

    pub(crate) fn apply(self, cmd: &mut Command) {
        match self {
            Self::Guest => {
                cmd.args(["--profile", "guest"]);
            }
            Self::ReleaseAbort => {
                cmd.arg("--release").env("CARGO_PROFILE_RELEASE_PANIC", "abort");
            }
        }
    }

    pub(crate) fn dir(self) -> &'static str {
        match self {
            Self::Guest => "guest",
            Self::ReleaseAbort => "release",
        }
    }
}
