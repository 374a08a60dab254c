//! The generated README.md: what the actor is, its first request, and the
//! project's commands (which `new` also prints).

use super::host_command::SHIM;
use super::{Lang, Project, Sdk, Template, VERSION, next_breaking, python_module, python_of, shim};

/// The README's commands, each with what it does: (install,) build, test, serve.
pub(super) fn commands(lang: Lang, p: &Project) -> Vec<(String, &'static str)> {
    let runner = match (&p.sdk, lang) {
        (Sdk::Registry, Lang::Ts) => format!("npx {SHIM}"),
        (Sdk::Registry, Lang::Python) => format!("{} -m wasmkeep_actor", python_of(p)),
        _ => shim(p).to_owned(),
    };
    let serve = (
        format!("{runner} serve"),
        "serve wasmkeep.toml on http://127.0.0.1:8787",
    );
    let test = "run the tests in the local host";
    let build = "build the component";
    match lang {
        Lang::Rust => vec![
            (
                format!("{} build", shim(p)),
                "build the component (cargo test builds it too)",
            ),
            ("cargo test".to_owned(), test),
            serve,
        ],
        Lang::Ts => vec![
            ("npm install && npm run build".to_owned(), build),
            ("npm test".to_owned(), test),
            serve,
        ],
        Lang::Python => {
            let py = python_of(p);
            let mut all = Vec::new();
            if let Sdk::Registry = p.sdk {
                let next = next_breaking(VERSION);
                all.push((
                    format!(
                        "python3 -m venv .venv && .venv/bin/pip install \"wasmkeep-actor[testing]>={VERSION},<{next}\""
                    ),
                    "install the SDK, its test harness and the host",
                ));
            }
            all.push((
                format!(
                    "{py} -m wasmkeep_actor build {} -o {}.wasm",
                    python_module(p.template),
                    p.name
                ),
                build,
            ));
            all.push((format!("{py} -m pytest"), test));
            all.push(serve);
            all
        }
        Lang::C => vec![("make".to_owned(), build), ("make test".to_owned(), test), serve],
    }
}

/// What the README says the actor is, and its first request with the answer.
fn what_it_is(p: &Project) -> (String, String) {
    let name = &p.name;
    match p.template {
        Template::Counter => (
            format!(
                "a counter. `GET /{name}/<actor>`\n\
                 reads its count, `POST` adds one, `DELETE` deletes the actor (durably, before it answers)."
            ),
            format!("`curl -X POST http://127.0.0.1:8787/{name}/a` answers `1`"),
        ),
        Template::Bank => (
            format!(
                "a bank account whose every\n\
                 `200` is kept. `POST /{name}/<account>/deposit?op=<id>&amount=<n>` and `.../withdraw?op=<id>&amount=<n>`\n\
                 move money once per operation id (a retry with the same id changes nothing and answers\n\
                 the same; a withdrawal beyond the balance is refused with 409), `GET /{name}/<account>`\n\
                 answers `{{\"balance\": <n>, \"interest\": <total paid>}}`, its alarm pays 1% interest every\n\
                 day, and `DELETE` closes the account durably. Its tests check each rule, then run seeded\n\
                 chaos on one node and on two (lost answers, restarts, failed uploads, a node cut off),\n\
                 where a variant whose deposits forget their id must be caught."
            ),
            format!("`curl -X POST 'http://127.0.0.1:8787/{name}/ada/deposit?op=d1&amount=100'` answers `100`"),
        ),
        Template::Chat => (
            format!(
                "a chat room, one actor per\n\
                 room. A WebSocket to `ws://127.0.0.1:8787/{name}/<room>/?name=<nickname>` joins it: it\n\
                 receives the latest messages, then every message sent to the room as JSON.\n\
                 `POST /{name}/<room>/messages?name=<who>` with the text as its body sends one,\n\
                 `GET /{name}/<room>/history` reads them, `DELETE /{name}/<room>/` deletes the room durably."
            ),
            format!(
                "`curl -d hello 'http://127.0.0.1:8787/{name}/lobby/messages?name=me'` answers the message\n\
                 it stored, as JSON"
            ),
        ),
    }
}

pub(super) fn readme(lang: Lang, p: &Project, what: &str) -> String {
    let (is, first) = what_it_is(p);
    let commands: Vec<String> = commands(lang, p)
        .into_iter()
        .map(|(command, does)| format!("{command}   # {does}"))
        .collect();
    let sdk = match (&p.sdk, lang) {
        (Sdk::Checkout(root), _) => format!("It uses the SDK of the wasmkeep checkout {}.", root.display()),
        (Sdk::Registry, Lang::C) => format!(
            "It uses the wasmkeep C SDK {VERSION} from its release archive, unpacked into a prefix:\n\
             `make` finds it with pkg-config (PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig), and\n\
             `wasmkeep-shim` is its bin/ (PATH=$PREFIX/bin:$PATH)."
        ),
        (Sdk::Registry, _) => format!("It uses the wasmkeep {what} SDK {VERSION} from its package registry."),
    };
    format!(
        "# {name}\n\n\
         A wasmkeep actor in {what}, made by `wasmkeep-shim new`: {is}\n\n\
         ```sh\n\
         {commands}\n\
         ```\n\n\
         Then {first}.\n\
         While it serves, the dashboard is at http://127.0.0.1:8787/_shim/ui: every actor with\n\
         its tables, alarm and log lines, the virtual clock and the faults. With `serve --watch`,\n\
         a change to the sources rebuilds the component and swaps it in while the actors keep\n\
         their state, alarms and open sockets. {sdk}\n",
        name = p.name,
        commands = commands.join("\n"),
    )
}
