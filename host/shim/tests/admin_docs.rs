//! The admin API as documented: docs/operations.md (which the README links)
//! names every fault kind, the JSON bodies of the clock and the faults, and
//! every route the server and the dashboard put under `/_shim/` (issue 58:
//! the clock's body and the fault kinds were found only in error texts).

use std::path::Path;
use wasmkeep_shim::faults::FaultKind;

fn read(path: &str) -> String {
    let at = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path);
    std::fs::read_to_string(&at).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

/// docs/operations.md from its section `## Admin API` on.
fn admin_api() -> String {
    let text = read("docs/operations.md");
    let at = text.find("## Admin API").expect("docs/operations.md has ## Admin API");
    text[at..].to_owned()
}

/// Every route under `/_shim/` the server (`.route("/_shim/…"`) and the
/// dashboard (`.route(&format!("{a}/…")`, per actor) declare, with `<class>`,
/// `<name>` and `<table>` as the docs write them.
fn routes() -> Vec<String> {
    let docs_words = |path: &str| {
        path.replace("{{", "{")
            .replace("}}", "}")
            .replace("{class}", "<class>")
            .replace("{name}", "<name>")
            .replace("{table}", "<table>")
    };
    let mut found = Vec::new();
    for file in ["host/shim/src/server.rs", "host/shim/src/dashboard/mod.rs"] {
        for line in read(file).lines() {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix(".route(\"/_shim/") {
                let path = rest.split('"').next().unwrap_or_default();
                if !path.starts_with('{') {
                    found.push(docs_words(&format!("/_shim/{path}")));
                }
            } else if let Some(rest) = line.strip_prefix(".route(&format!(\"{a}/") {
                let path = rest.split('"').next().unwrap_or_default();
                found.push(docs_words(&format!("/_shim/actors/{{class}}/{{name}}/{path}")));
            }
        }
    }
    found
}

#[test]
fn the_admin_docs_name_every_route_body_and_fault_kind() {
    let api = admin_api();
    for kind in FaultKind::ALL {
        assert!(
            api.contains(&format!("`{}`", kind.name())),
            "docs/operations.md's admin API names the fault kind `{}`",
            kind.name()
        );
    }
    for body in [
        "`POST /_shim/clock/advance` `{\"ms\": n}`",
        "`POST /_shim/faults` `{\"kind\": K, \"count\": n}`",
        "`{\"to\": \"<bookmark>\"}` or `{\"to\": <ms>}`",
        "`{\"sql\": \"SELECT …\"}`",
        "-d '{\"ms\": 86400000}'",
        "`Content-Type:\napplication/json` on every POST and DELETE",
    ] {
        assert!(api.contains(body), "docs/operations.md's admin API shows {body}");
    }
    let routes = routes();
    assert!(routes.len() >= 20, "the routes are read off the sources: {routes:?}");
    for route in routes {
        // In a table cell: `GET /_shim/clock`, `DELETE /_shim/faults`, or a
        // call of one actor's as `…/history` (`/_shim/actors/<class>/<name>/…`).
        let short = route
            .strip_prefix("/_shim/actors/<class>/<name>/")
            .map(|rest| format!("…/{rest}"));
        let named = std::iter::once(route.as_str()).chain(short.as_deref()).any(|r| {
            [format!(" {r}`"), format!(" {r} "), format!(" {r}?")]
                .iter()
                .any(|w| api.contains(w))
        });
        assert!(named, "docs/operations.md's admin API describes {route}");
    }
}
