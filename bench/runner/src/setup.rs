//! Where things are, and building the guests that are missing.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use wasmkeep_shim::{Access, ActorKey, ClassSpec, HttpRequest, Runtime, RuntimeConfig};

/// The repository and its components directory.
pub struct Paths {
    /// The repository root.
    pub root: PathBuf,
    /// `<target>/components`.
    pub components: PathBuf,
}

impl Paths {
    /// The repository this binary was built from.
    pub fn find() -> Result<Self> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .canonicalize()
            .context("finding the repository root")?;
        let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
        Ok(Self {
            components: target.join("components"),
            root,
        })
    }

    /// `<components>/<name>.wasm`, built from the crate at `crate_dir` if it is missing.
    pub fn component(&self, name: &str, crate_dir: &str) -> Result<PathBuf> {
        let wasm = self.components.join(format!("{name}.wasm"));
        if wasm.exists() {
            return Ok(wasm);
        }
        eprintln!("{} is missing: building {crate_dir}", wasm.display());
        wasmkeep_guest_build::build_rust_guest(&self.root.join(crate_dir).join("Cargo.toml"), Some(&wasm))
            .with_context(|| format!("building {crate_dir} (or run `cargo xtask guests` first)"))
    }
}

/// The app every figure loads its one class into.
pub const APP: &str = "bench/app";

/// A runtime on a fresh temporary directory (real clock, its own compiled
/// cache) with one open class.
pub fn runtime(class: &str, component: &Path) -> Result<(Runtime, tempfile::TempDir)> {
    let dir = tempfile::Builder::new()
        .prefix("wasmkeep-bench-")
        .tempdir()
        .context("creating a temporary directory")?;
    let mut config = RuntimeConfig::new(dir.path());
    config.cache_dir = dir.path().join("cache");
    let rt = Runtime::new(config)?;
    rt.add_app(
        APP,
        &[ClassSpec {
            name: class.to_owned(),
            component: component.to_owned(),
            access: Access::Open,
        }],
    )
    .with_context(|| format!("loading {}", component.display()))?;
    Ok((rt, dir))
}

/// A runtime for counters kept resident (class `counter`): a fresh
/// temporary directory, the compiled cache `cache` (shared by a figure's
/// runs), an hour's idle timeout (only `hibernate_all` ends a residency), and
/// room for `resident` actors plus a margin (`None`: the machine's cap).
pub fn resident_runtime(
    component: &Path,
    cache: &Path,
    resident: Option<usize>,
) -> Result<(Runtime, tempfile::TempDir)> {
    resident_runtime_of("counter", component, cache, resident)
}

/// [`resident_runtime`] with the component loaded as `class`.
pub fn resident_runtime_of(
    class: &str,
    component: &Path,
    cache: &Path,
    resident: Option<usize>,
) -> Result<(Runtime, tempfile::TempDir)> {
    let dir = tempfile::Builder::new()
        .prefix("wasmkeep-bench-resident-")
        .tempdir()
        .context("creating a temporary directory")?;
    let mut config = RuntimeConfig::new(dir.path());
    config.cache_dir = cache.to_owned();
    config.idle_timeout = std::time::Duration::from_secs(3600);
    if let Some(n) = resident {
        config.max_resident = n + 16;
    }
    let rt = Runtime::new(config)?;
    rt.add_app(
        APP,
        &[ClassSpec {
            name: class.to_owned(),
            component: component.to_owned(),
            access: Access::Open,
        }],
    )
    .with_context(|| format!("loading {}", component.display()))?;
    Ok((rt, dir))
}

/// `GET /` of the counter `name` (class `counter`): how long it took; an
/// error unless it answered 200.
pub fn get_counter(rt: &Runtime, name: &str) -> Result<std::time::Duration> {
    let started = std::time::Instant::now();
    let answer = rt
        .request(&key("counter", name), HttpRequest::new("GET", "/", ""))?
        .wait();
    let took = started.elapsed();
    anyhow::ensure!(
        answer.status == 200,
        "counter {name} answered {}: {}",
        answer.status,
        String::from_utf8_lossy(&answer.body)
    );
    Ok(took)
}

/// The actor `name` of `class` in [`APP`].
pub fn key(class: &str, name: impl Into<String>) -> ActorKey {
    ActorKey::new(APP, class, name)
}

/// Runs `on-call` with a text command and returns the text answer.
pub fn call(rt: &Runtime, key: &ActorKey, command: &str) -> Result<String> {
    let answer = rt
        .call(key, command.as_bytes().to_vec())?
        .map_err(|e| anyhow::anyhow!("{key}: {command:?} failed: {e:?}"))?;
    String::from_utf8(answer).with_context(|| format!("{key}: {command:?}: the answer is not text"))
}

/// The median of `v` (sorted in place); 0 when empty.
pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}
