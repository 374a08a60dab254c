//! The files of a TypeScript project: its package.json, the example's sources and tests.

use anyhow::Result;

use super::manifest::manifest;
use super::readme::readme;
use super::{File, Lang, Project, Sdk, Template, VERSION, example, example_dir, gitignore, replace_exact};

/// TypeScript: a package on `@wasmkeep/actor`, tested with `node --test`.
pub(super) fn ts(p: &Project) -> Result<Vec<File>> {
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
