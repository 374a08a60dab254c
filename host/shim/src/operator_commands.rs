//! The operator commands: `actor status`, `actor delete`, `app delete`, `verify`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use wasmkeep_shim::bucket::{LocalDirBucket, ObjectStore};
use wasmkeep_shim::bucket_url::open_bucket;
use wasmkeep_shim::clock::{Clock, SystemClock};

/// Where the operator commands find a data directory and a cluster's bucket.
#[derive(clap::Args, Clone)]
pub(crate) struct BucketArgs {
    /// The data directory `serve` used (a cluster's bucket is `<data-dir>/bucket`).
    #[arg(long, default_value = ".wasmkeep")]
    pub(crate) data_dir: PathBuf,
    /// The bucket directory, when it is not `<data-dir>/bucket`, or its URL
    /// (`s3://…`, `az://…`, `gs://…`, `file://…`, as `serve --bucket` takes
    /// it; every operator command opens it the same way).
    #[arg(long)]
    pub(crate) bucket: Option<PathBuf>,
}

impl BucketArgs {
    /// `--bucket` when it is a URL (`s3://…`, `file://…`), not a directory.
    fn url(&self) -> Option<&str> {
        self.bucket
            .as_ref()
            .and_then(|b| b.to_str())
            .filter(|b| b.contains("://"))
    }

    /// The bucket directory these arguments name.
    fn bucket_dir(&self) -> PathBuf {
        self.bucket.clone().unwrap_or_else(|| self.data_dir.join("bucket"))
    }

    /// The cluster's bucket, or a message saying where it was looked for and
    /// what to pass; `what` says why the command needs one. `--bucket` takes
    /// a directory, or a URL as `serve --bucket` does (`file://`, `s3://`,
    /// `az://`, `gs://`; node processes, ADR 028).
    pub(crate) fn open(&self, what: &str) -> Result<Arc<dyn ObjectStore>, String> {
        if let Some(url) = self.url() {
            return open_bucket(url, Arc::new(SystemClock)).map_err(|e| e.to_string());
        }
        let dir = self.bucket_dir();
        if !dir.is_dir() {
            return Err(format!(
                "no bucket at {}: {what} works on a cluster's bucket. Point --data-dir at a \
                 `serve --mode cluster` data directory, or --bucket at the bucket",
                dir.display()
            ));
        }
        Ok(Arc::new(LocalDirBucket::new(dir, Arc::new(SystemClock))))
    }
}

#[derive(clap::Args)]
pub(crate) struct AppDeleteArgs {
    /// The app, `tenant/app`.
    #[arg(long)]
    pub(crate) app: String,
    #[command(flatten)]
    pub(crate) place: BucketArgs,
    /// How long to wait for the nodes to stop serving the app, in seconds.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(0..=3000))]
    pub(crate) wait: u64,
    /// Remove the data even while nodes still look live.
    #[arg(long)]
    pub(crate) force: bool,
}

#[derive(clap::Args)]
pub(crate) struct VerifyArgs {
    #[command(flatten)]
    pub(crate) place: BucketArgs,
    /// Keep the finished report in FILE; a later run with the same FILE only
    /// replays it (exit 3). Remove FILE to sweep again.
    #[arg(long)]
    pub(crate) checkpoint: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(clap::Args)]
pub(crate) struct DeleteArgs {
    /// The app, `tenant/app`.
    #[arg(long)]
    pub(crate) app: String,
    /// The actor, `class/name`.
    pub(crate) actor: String,
    #[command(flatten)]
    pub(crate) place: BucketArgs,
    /// How long to wait for the outcome, in seconds (at most 3000, below the
    /// request's one-hour expiry).
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(0..=3000))]
    pub(crate) wait: u64,
    /// Write the request and return at once (exit 4, "requested").
    #[arg(long, conflicts_with = "wait")]
    pub(crate) no_wait: bool,
}

/// One actor of an app, and where its cluster's bucket is.
#[derive(clap::Args)]
pub(crate) struct ActorArgs {
    /// The app, `tenant/app`.
    #[arg(long)]
    pub(crate) app: String,
    /// The actor, `class/name`.
    pub(crate) actor: String,
    #[command(flatten)]
    pub(crate) place: BucketArgs,
}

impl ActorArgs {
    /// The actor these arguments name, or what is wrong with them.
    pub(crate) fn key(&self) -> anyhow::Result<wasmkeep_shim::ActorKey> {
        wasmkeep_shim::address::validate_app_name(&self.app).map_err(anyhow::Error::msg)?;
        let (class, name) = self
            .actor
            .split_once('/')
            .ok_or_else(|| anyhow::anyhow!("the actor is `class/name`, got {:?}", self.actor))?;
        Ok(wasmkeep_shim::ActorKey::new(self.app.clone(), class, name))
    }
}

#[derive(clap::Args)]
pub(crate) struct StatusArgs {
    #[command(flatten)]
    pub(crate) of: ActorArgs,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn app_delete(args: &AppDeleteArgs) -> std::process::ExitCode {
    use std::process::ExitCode;
    use wasmkeep_shim::app_delete::{remove_data, serving_nodes, write_tombstone};
    let fail = |code: u8, msg: String| {
        eprintln!("error: {msg}");
        ExitCode::from(code)
    };
    if let Err(e) = wasmkeep_shim::address::validate_app_name(&args.app) {
        return fail(2, e);
    }
    if args.app == "default/default" {
        println!("refused: default/default is the implicit app of nodes that follow no deploys; it cannot be deleted");
        return ExitCode::from(1);
    }
    let bucket = match args.place.open("an app delete") {
        Ok(b) => b,
        Err(e) => return fail(2, e),
    };
    let who = std::env::var("USER").unwrap_or_else(|_| "operator".into());
    let tomb = match write_tombstone(bucket.as_ref(), &args.app, &who, SystemClock.now_ms()) {
        Ok(t) => t,
        Err(e) => return fail(2, e.to_string()),
    };
    println!(
        "tombstone: app {} deleted at {} ms by {}",
        args.app, tomb.at_ms, tomb.by
    );
    let until = std::time::Instant::now() + Duration::from_secs(args.wait);
    let mut said = false;
    let spinner = crate::progress::Spinner::start("checking which nodes serve the app");
    let live = loop {
        let live = match serving_nodes(bucket.as_ref(), &args.app, SystemClock.now_ms()) {
            Ok(l) => l,
            Err(e) => return fail(2, e.to_string()),
        };
        if live.is_empty() || args.force || std::time::Instant::now() >= until {
            break live;
        }
        if !said {
            println!("waiting for the node(s) serving it to stop: {}", live.join(", "));
            said = true;
        }
        let left = until.saturating_duration_since(std::time::Instant::now()).as_secs();
        spinner.say(format!(
            "waiting for {} to stop serving it ({left} s left)",
            live.join(", ")
        ));
        std::thread::sleep(Duration::from_millis(200));
    };
    drop(spinner);
    if !live.is_empty() && !args.force {
        println!(
            "the tombstone is written and nothing was removed: node(s) {} still serve the app. \
             Run the command again to resume, or pass --force",
            live.join(", ")
        );
        return ExitCode::from(4);
    }
    match remove_data(bucket.as_ref(), &args.app) {
        Ok(n) => {
            println!(
                "Deleted app {} ({n} key(s) removed; the tombstone stays: `serve --recreate` uses the name again)",
                args.app
            );
            ExitCode::SUCCESS
        }
        Err(e) => fail(2, e.to_string()),
    }
}

pub(crate) fn verify(args: &VerifyArgs) -> std::process::ExitCode {
    use std::process::ExitCode;
    use wasmkeep_shim::verify::{Checkpoint, Report, sweep_bucket, sweep_node_dir};
    let print = |report: &Report, note: Option<String>| {
        if args.json {
            println!("{}", serde_json::json!({ "report": report, "note": note }));
            return;
        }
        if let Some(n) = &note {
            println!("{n}");
        }
        for o in &report.orphans {
            println!("orphan: {}: {}", o.kind, o.at);
        }
        for f in &report.failures {
            println!("not verified: {f}");
        }
        match report.exit_code() {
            0 => println!("clean"),
            1 => println!("{} orphan(s); nothing was deleted", report.orphans.len()),
            _ => println!("incomplete: the sweep could not see everything, so it reports nothing as clean"),
        }
    };
    if let Some(cp) = &args.checkpoint
        && let Ok(text) = std::fs::read_to_string(cp)
    {
        return match serde_json::from_str::<Checkpoint>(&text) {
            Ok(c) => {
                print(
                    &c.report,
                    Some(format!(
                        "replayed from the checkpoint {} (a sweep that finished at {} ms); remove it to sweep again",
                        cp.display(),
                        c.finished_at
                    )),
                );
                ExitCode::from(3)
            }
            Err(e) => {
                eprintln!(
                    "error: the checkpoint {} is not one this command wrote ({e}); remove it",
                    cp.display()
                );
                ExitCode::from(2)
            }
        };
    }
    let data_dir = &args.place.data_dir;
    if !data_dir.is_dir() && args.place.bucket.is_none() {
        eprintln!(
            "error: no data directory at {}: point --data-dir at the directory `serve` used",
            data_dir.display()
        );
        return ExitCode::from(2);
    }
    let mut report = Report::default();
    let bucket_dir = args.place.bucket_dir();
    let now = wasmkeep_shim::clock::Clock::now_ms(&SystemClock);
    // A URL is opened as `serve --bucket` opens it; one that does not open fails closed.
    let bucket: Option<Arc<dyn ObjectStore>> = match args.place.url() {
        Some(url) => match open_bucket(url, Arc::new(SystemClock)) {
            Ok(b) => Some(b),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
        None => bucket_dir
            .is_dir()
            .then(|| Arc::new(LocalDirBucket::new(bucket_dir, Arc::new(SystemClock))) as Arc<dyn ObjectStore>),
    };
    if let Some(b) = &bucket {
        let b = b.as_ref();
        sweep_bucket(b, now, &mut report);
        // A cluster's nodes keep their local files in <data-dir>/node-<i>.
        let mut nodes: Vec<PathBuf> = std::fs::read_dir(data_dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir() && p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("node-")))
            .collect();
        nodes.sort();
        for n in nodes {
            sweep_node_dir(&n, Some(b), &mut report);
        }
    } else {
        sweep_node_dir(data_dir, None, &mut report);
        // A single node's history (ADR 064) is laid out as a bucket.
        let history = data_dir.join("history");
        if history.is_dir() {
            sweep_bucket(&LocalDirBucket::new(history, Arc::new(SystemClock)), now, &mut report);
        }
    }
    print(&report, None);
    if let Some(cp) = &args.checkpoint
        && report.exit_code() != 2
    {
        let c = Checkpoint {
            finished_at: now,
            report: report.clone(),
        };
        if let Err(e) = serde_json::to_string(&c)
            .map_err(std::io::Error::other)
            .and_then(|t| std::fs::write(cp, t))
        {
            eprintln!("error: writing the checkpoint {}: {e}", cp.display());
            return ExitCode::from(2);
        }
    }
    ExitCode::from(report.exit_code())
}

pub(crate) fn operator_delete(args: &DeleteArgs) -> std::process::ExitCode {
    use std::process::ExitCode;
    use wasmkeep_shim::operator::{RequestError, Waited, request_delete, wait_for_outcome};
    let fail = |code: u8, msg: String| {
        eprintln!("error: {msg}");
        ExitCode::from(code)
    };
    if let Err(e) = wasmkeep_shim::address::validate_app_name(&args.app) {
        return fail(2, e);
    }
    let Some((class, name)) = args.actor.split_once('/') else {
        return fail(2, format!("the actor is `class/name`, got {:?}", args.actor));
    };
    let bucket = match args.place.open("an operator delete (a request in the bucket)") {
        Ok(b) => b,
        Err(e) => return fail(2, e),
    };
    let key = wasmkeep_shim::ActorKey::new(args.app.clone(), class, name);
    let req = match request_delete(bucket.as_ref(), &key) {
        Ok(r) => r,
        Err(RequestError::NoSuchActor(_)) => {
            println!("no such actor");
            return ExitCode::from(1);
        }
        Err(e @ RequestError::AppDeleted(_)) => {
            println!("refused: {e}");
            return ExitCode::from(1);
        }
        Err(e) => return fail(2, e.to_string()),
    };
    let wait = if args.no_wait { 0 } else { args.wait };
    let spinner = (wait > 0).then(|| {
        crate::progress::Spinner::start(format!("waiting for a node to carry out the delete (up to {wait} s)"))
    });
    let outcome = wait_for_outcome(bucket.as_ref(), &req, std::time::Duration::from_secs(wait));
    drop(spinner);
    match outcome {
        Ok(Waited::Deleted) => {
            println!("Deleted");
            ExitCode::SUCCESS
        }
        Ok(Waited::NoSuchActor) => {
            println!("no such actor");
            ExitCode::from(1)
        }
        Ok(Waited::Dropped) => {
            println!(
                "dropped: the request went without an outcome (expired, or not an actor address); nothing is known to be deleted"
            );
            ExitCode::from(3)
        }
        Ok(Waited::Pending { until }) => {
            println!(
                "requested; the cluster keeps trying until {} (request {})",
                format_ms(until),
                req.id
            );
            ExitCode::from(4)
        }
        Err(e) => fail(2, format!("waiting for the outcome: {e}")),
    }
}

/// Milliseconds since the epoch as UTC `YYYY-MM-DD HH:MM:SS UTC` (SQLite's
/// date functions, which the host links anyway).
pub(crate) fn format_ms(ms: u64) -> String {
    rusqlite::Connection::open_in_memory()
        .and_then(|c| {
            c.query_row(
                "SELECT datetime(?1 / 1000, 'unixepoch') || ' UTC'",
                [i64::try_from(ms).unwrap_or(i64::MAX)],
                |r| r.get::<_, String>(0),
            )
        })
        .unwrap_or_else(|_| format!("{ms} ms since the epoch"))
}

pub(crate) fn status(args: &StatusArgs) -> anyhow::Result<std::process::ExitCode> {
    use wasmkeep_shim::deletion::DeletionStatus;
    use wasmkeep_shim::replica::deletion_status;
    let key = args.of.key()?;
    let place = &args.of.place;
    let (dir, data_dir) = (place.bucket_dir(), &place.data_dir);
    let st = if place.url().is_some() {
        let bucket = place.open("actor status").map_err(anyhow::Error::msg)?;
        deletion_status(bucket.as_ref(), &key)
    } else if dir.is_dir() {
        deletion_status(&LocalDirBucket::new(dir, Arc::new(SystemClock)), &key)
    } else if place.bucket.is_none() && data_dir.join("state").is_dir() {
        // A single node's data directory: its removal records.
        let store = wasmkeep_shim::state_store::LocalStateStore::new(data_dir, Arc::default());
        wasmkeep_shim::state_store::deletion_status(&store, &key)
    } else {
        anyhow::bail!(
            "no bucket at {} and no single-node state under {}: point --data-dir at the data directory `serve` used, or --bucket at a cluster's bucket",
            dir.display(),
            data_dir.display()
        );
    };
    if args.json {
        println!("{}", serde_json::to_string(&st)?);
    } else {
        match &st {
            DeletionStatus::Deleted { at_ms, how } => println!("deleted at {at_ms} ({how})"),
            DeletionStatus::NotDeleted => println!("not deleted"),
            DeletionStatus::Unknown { reason } => println!("unknown: {reason}"),
        }
    }
    Ok(match st {
        DeletionStatus::Unknown { .. } => std::process::ExitCode::from(2),
        _ => std::process::ExitCode::SUCCESS,
    })
}
