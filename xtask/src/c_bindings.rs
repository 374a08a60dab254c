//! The C SDK's bindings of `wit/` (`sdk-c/gen/`), made by the wit-bindgen
//! library in this process: the same generator `wit-bindgen c` runs, without
//! a `cargo install` of the whole wit-bindgen CLI (about 5 minutes on a
//! fresh machine; docs/adr/021-c-bindings-from-xtask.md).

use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use wit_bindgen_core::Files;
use wit_bindgen_core::wit_parser::Resolve;

/// Where the bindings go, relative to the repository root.
const OUT_DIR: &str = "sdk-c/gen";
/// The world the C SDK implements.
const WORLD: &str = "actor";

/// What `wit-bindgen c wit --world actor` writes, by file name.
///
/// # Errors
/// `wit/` does not parse, or the generator refused it.
fn generate(root: &Path) -> Result<BTreeMap<PathBuf, Vec<u8>>> {
    let mut resolve = Resolve::default();
    let (pkg, _) = resolve.push_path(root.join("wit")).context("parsing wit/")?;
    let world = resolve
        .select_world(&[pkg], Some(WORLD))
        .context("selecting the world")?;
    let mut files = Files::default();
    let mut generator = wit_bindgen_c::Opts::default().build();
    generator
        .generate(&mut resolve, world, &mut files)
        .context("generating the C bindings")?;
    Ok(files
        .iter()
        .map(|(name, contents)| (PathBuf::from(name), contents.to_vec()))
        .collect())
}

/// Brings `sdk-c/gen/` in line with `wit/` (with `check`, only compares).
/// Returns what differed, one line per file.
///
/// # Errors
/// Generating failed, or a file could not be read or written.
pub fn bring_up_to_date(root: &Path, check: bool) -> Result<Vec<String>> {
    let fresh = generate(root)?;
    let dir = root.join(OUT_DIR);
    let mut stale = Vec::new();
    for (name, bytes) in &fresh {
        let path = dir.join(name);
        match fs::read(&path) {
            Ok(old) if &old == bytes => continue,
            Ok(_) => stale.push(format!("{OUT_DIR}/{} differs from what wit/ makes", name.display())),
            Err(_) => stale.push(format!("{OUT_DIR}/{} is missing", name.display())),
        }
        if !check {
            fs::create_dir_all(&dir)?;
            fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
        }
    }
    let existing = fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| PathBuf::from(e.file_name()));
    for name in existing.filter(|n| !fresh.contains_key(n)).collect::<Vec<_>>() {
        stale.push(format!("{OUT_DIR}/{} is not made from wit/ any more", name.display()));
        if !check {
            fs::remove_file(dir.join(&name)).with_context(|| format!("removing {OUT_DIR}/{}", name.display()))?;
        }
    }
    Ok(stale)
}
