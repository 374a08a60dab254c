//! Going back in time from the command line (ADR 064): `actor history`
//! lists an actor's positions with their bookmarks and times; `actor
//! restore --to` puts the state at a time or bookmark on the head as a new
//! position (undone by another restore); `actor fork --to --into` starts a
//! new actor from it. They work on the bucket directly, as an operator: an
//! actor a node holds is refused (hibernate it, or stop the node, first).

use crate::operator_commands::{ActorArgs, format_ms};
use std::process::ExitCode;
use std::sync::Arc;
use wasmkeep_shim::faults::Faults;
use wasmkeep_shim::history::Pos;
use wasmkeep_shim::replica::{Acquired, Replica, ReplicaError, Target, fork};

/// The name the operator holds an actor under while it restores it.
const OPERATOR: &str = "operator";

#[derive(clap::Args)]
pub(crate) struct HistoryArgs {
    #[command(flatten)]
    pub(crate) of: ActorArgs,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(clap::Args)]
pub(crate) struct RestoreArgs {
    #[command(flatten)]
    pub(crate) of: ActorArgs,
    /// Where to go back to: a bookmark from `actor history`
    /// (`<generation>-<seq>` in hex), a time in ms since the epoch, or an
    /// RFC 3339 time (`2026-12-07T10:00:00Z`).
    #[arg(long)]
    pub(crate) to: String,
}

#[derive(clap::Args)]
pub(crate) struct ForkArgs {
    /// The actor to fork, its app and bucket.
    #[command(flatten)]
    pub(crate) of: ActorArgs,
    /// Where to go back to, as for `actor restore`.
    #[arg(long)]
    pub(crate) to: String,
    /// The new actor, `class/name` (of the same app); it must not exist.
    #[arg(long)]
    pub(crate) into: String,
}

/// Reads `--to`: a bookmark, ms since the epoch, or an RFC 3339 time.
fn parse_target(text: &str) -> anyhow::Result<Target> {
    if let Ok(p) = text.parse::<Pos>() {
        return Ok(Target::Bookmark(p));
    }
    if let Ok(ms) = text.parse::<u64>() {
        return Ok(Target::Time(ms));
    }
    let ms = rusqlite::Connection::open_in_memory()?
        .query_row(
            "SELECT CAST(round((julianday(?1) - 2440587.5) * 86400000) AS INTEGER)",
            [text],
            |r| r.get::<_, Option<i64>>(0),
        )?
        .and_then(|ms| u64::try_from(ms).ok());
    ms.map(Target::Time).ok_or_else(|| {
        anyhow::anyhow!(
            "--to {text:?} is neither a bookmark (`actor history` lists them), ms since the epoch, nor a time like 2026-12-07T10:00:00Z"
        )
    })
}

/// `actor history`: the actor's positions, oldest first.
pub(crate) fn history(args: &HistoryArgs) -> anyhow::Result<ExitCode> {
    let key = args.of.key()?;
    let bucket = args.of.place.open("actor history").map_err(anyhow::Error::msg)?;
    let records = wasmkeep_shim::actor_records::actor_records(bucket.as_ref(), &key)?;
    if args.json {
        println!("{}", serde_json::to_string(&records.history)?);
        return Ok(ExitCode::SUCCESS);
    }
    if records.history.is_empty() {
        println!("no history: {key} was never written in this bucket");
        return Ok(ExitCode::from(1));
    }
    println!("{:<33}  {:<23}  what", "bookmark", "written");
    for r in &records.history {
        let what = serde_json::to_value(&r.entry)?
            .get("kind")
            .and_then(|k| k.as_str().map(str::to_owned))
            .unwrap_or_default();
        println!(
            "{:<33}  {:<23}  {what}{}",
            r.bookmark,
            format_ms(r.written_at),
            if r.head { " (head)" } else { "" }
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn explain(e: &ReplicaError) -> (ExitCode, String) {
    match e {
        ReplicaError::Bucket(_) => (
            ExitCode::from(2),
            format!("the bucket failed: {e}; nothing is known to be changed, run again"),
        ),
        ReplicaError::BeforeDelete { .. } | ReplicaError::Chain(_) | ReplicaError::ForkTargetExists(_) => {
            (ExitCode::from(1), format!("refused: {e}"))
        }
        _ => (ExitCode::from(1), format!("{e}")),
    }
}

/// `actor restore`: the state at `--to` becomes the head, at a new position.
pub(crate) fn restore(args: &RestoreArgs) -> anyhow::Result<ExitCode> {
    let key = args.of.key()?;
    let to = parse_target(&args.to)?;
    let bucket = args.of.place.open("actor restore").map_err(anyhow::Error::msg)?;
    let live = |_: &str| true;
    let mut replica = Replica::new(bucket, Arc::new(Faults::default()), key.clone(), OPERATOR);
    match replica.acquire(&live) {
        Ok(Acquired::HeldBy(node)) => {
            eprintln!("refused: node {node} holds {key}: hibernate it there (or stop that node), then restore");
            return Ok(ExitCode::from(1));
        }
        Ok(Acquired::Held { head: None, .. }) => {
            let _ = replica.release();
            eprintln!("no history: {key} was never written in this bucket");
            return Ok(ExitCode::from(1));
        }
        Ok(Acquired::Held { .. }) => {}
        Err(e) => {
            let (code, message) = explain(&e);
            eprintln!("{message}");
            return Ok(code);
        }
    }
    let restored = replica.restore_to(to, &live);
    let released = replica.release();
    match restored {
        Ok((from, at, image)) => {
            println!(
                "restored {key} to {from} ({} bytes); the head is now {at}: `actor restore --to {}` undoes it",
                image.len(),
                Pos {
                    generation: at.generation,
                    seq: at.seq.saturating_sub(1),
                }
            );
            if let Err(e) = released {
                eprintln!("the actor could not be let go ({e}): the nodes take it over once this process is gone");
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            let (code, message) = explain(&e);
            eprintln!("{message}");
            Ok(code)
        }
    }
}

/// `actor fork`: a new actor starts from the state at `--to`.
pub(crate) fn fork_actor(args: &ForkArgs) -> anyhow::Result<ExitCode> {
    let key = args.of.key()?;
    let into = ActorArgs {
        app: args.of.app.clone(),
        actor: args.into.clone(),
        place: args.of.place.clone(),
    }
    .key()?;
    let to = parse_target(&args.to)?;
    let bucket = args.of.place.open("actor fork").map_err(anyhow::Error::msg)?;
    match fork(bucket, Arc::new(Faults::default()), &key, to, &into, OPERATOR, &|_| {
        true
    }) {
        Ok(from) => {
            println!("forked {key} at {from} into {into}");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            let (code, message) = explain(&e);
            eprintln!("{message}");
            Ok(code)
        }
    }
}
