//! `wasmkeep-ts-compose <socket.wasm> --plug <plug.wasm> -o <out.wasm>`: plugs
//! the plug component's exports into the socket component's imports of the
//! same name and writes the composition, which exports what the socket
//! exports and imports what both still import.
//!
//! `wasmkeep-build` runs it for every QuickJS actor: the socket is the actor
//! componentized against `wasmkeep:actor-js`, the plug the storage adapter
//! (sdk-ts/native/quickjs-storage). It is `wac plug` (the same library, wac-graph)
//! without the rest of wac-cli, which would add a registry client and an
//! async runtime to what every TypeScript project has to build or ship.
//!
//! Exit status: 0 written, 1 the composition failed (the message says why),
//! 2 bad arguments.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use wac_graph::{CompositionGraph, EncodeOptions, types::Package};

const USAGE: &str = "usage: wasmkeep-ts-compose <socket.wasm> --plug <plug.wasm> -o <out.wasm>";

struct Args {
    socket: PathBuf,
    plug: PathBuf,
    out: PathBuf,
}

fn parse(mut argv: impl Iterator<Item = String>) -> Result<Args, String> {
    let (mut socket, mut plug, mut out) = (None, None, None);
    while let Some(arg) = argv.next() {
        let mut value = |what: &str| argv.next().ok_or_else(|| format!("{what} needs a value"));
        match arg.as_str() {
            "--plug" => plug = Some(value("--plug")?),
            "-o" | "--out" => out = Some(value("-o")?),
            "-h" | "--help" => return Err(String::new()),
            a if a.starts_with('-') => return Err(format!("unknown option {a}")),
            a if socket.is_some() => return Err(format!("one socket component only (got a second: {a})")),
            a => socket = Some(a.to_string()),
        }
    }
    match (socket, plug, out) {
        (Some(s), Some(p), Some(o)) => Ok(Args {
            socket: s.into(),
            plug: p.into(),
            out: o.into(),
        }),
        (None, ..) => Err("no socket component given".into()),
        (_, None, _) => Err("no plug given: add --plug <plug.wasm>".into()),
        (.., None) => Err("no output given: add -o <out.wasm>".into()),
    }
}

/// The composition of `plug` into `socket`, validated.
fn compose(socket: &[u8], plug: &[u8]) -> Result<Vec<u8>> {
    let mut graph = CompositionGraph::new();
    let socket = Package::from_bytes("socket", None, socket.to_vec(), graph.types_mut())
        .context("reading the socket component")?;
    let socket = graph.register_package(socket)?;
    let plug =
        Package::from_bytes("plug", None, plug.to_vec(), graph.types_mut()).context("reading the plug component")?;
    let plug = graph.register_package(plug)?;
    wac_graph::plug(&mut graph, vec![plug], socket).context("plugging")?;
    graph
        .encode(EncodeOptions::default())
        .context("encoding the composition")
}

fn run(args: &Args) -> Result<()> {
    let socket = std::fs::read(&args.socket).with_context(|| format!("reading {}", args.socket.display()))?;
    let plug = std::fs::read(&args.plug).with_context(|| format!("reading {}", args.plug.display()))?;
    let bytes = compose(&socket, &plug)
        .with_context(|| format!("composing {} with {}", args.socket.display(), args.plug.display()))?;
    std::fs::write(&args.out, bytes).with_context(|| format!("writing {}", args.out.display()))
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) if e.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("wasmkeep-ts-compose: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wasmkeep-ts-compose: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Result<Args, String> {
        parse(a.iter().map(|s| s.to_string()))
    }

    #[test]
    fn arguments_are_read_and_each_missing_one_is_named() {
        let a = args(&["s.wasm", "--plug", "p.wasm", "-o", "o.wasm"]).expect("read");
        assert_eq!(
            (a.socket, a.plug, a.out),
            ("s.wasm".into(), "p.wasm".into(), "o.wasm".into())
        );
        assert_eq!(
            args(&["--plug", "p", "-o", "o"]).err().expect("refused"),
            "no socket component given"
        );
        assert!(
            args(&["s", "-o", "o"])
                .err()
                .expect("refused")
                .starts_with("no plug given")
        );
        assert!(
            args(&["s", "--plug", "p"])
                .err()
                .expect("refused")
                .starts_with("no output given")
        );
        assert_eq!(args(&["s", "--plug"]).err().expect("refused"), "--plug needs a value");
        assert_eq!(args(&["s", "--frob"]).err().expect("refused"), "unknown option --frob");
    }

    #[test]
    fn garbage_is_refused_with_a_message() {
        let e = compose(b"not wasm", b"nor this").expect_err("refused");
        assert!(format!("{e:#}").contains("reading the socket component"), "{e:#}");
    }
}
