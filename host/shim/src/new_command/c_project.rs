//! The files of a C project: the example's Makefile (finding the SDK with
//! pkg-config, or in a checkout), its actor and its test program.

use anyhow::{Result, bail};

use super::manifest::manifest;
use super::readme::readme;
use super::{File, Lang, Project, Sdk, Template, VERSION, example, example_dir, gitignore, replace_exact};

/// C: the SDK's Makefile fragment, and a test program on the native harness.
/// From a release archive, pkg-config finds the SDK (`wasmkeep.pc`'s `sdk`)
/// and the harness (`wasmkeep-harness.pc`); on a checkout, its `sdk-c/` and
/// its `target/debug`.
pub(super) fn c(p: &Project) -> Result<Vec<File>> {
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
