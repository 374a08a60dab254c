//! The files of a Python project: its pyproject.toml, the example's module and pytest tests.

use anyhow::Result;

use super::manifest::manifest;
use super::readme::readme;
use super::{
    File, Lang, Project, Sdk, Template, VERSION, example, example_dir, gitignore, next_breaking, python_module,
    python_of, replace_exact,
};

/// Python: a module and its pytest tests (the SDK's pytest plugin builds it).
pub(super) fn python(p: &Project) -> Result<Vec<File>> {
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
