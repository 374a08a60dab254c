//! Many resident actors, each with one open WebSocket: issue 25's shape of a
//! chat room per actor. The figure is the RSS of the process that serves
//! them once they are idle, and the time an event of theirs takes then.
//!
//! The server runs in a child process (`--socket-child`) and the clients in
//! this one: each side holds a descriptor per socket, and one process's
//! open-files limit (20,000 on some machines) would not hold both sides.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::Ipv4Addr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use futures_util::{SinkExt as _, StreamExt as _};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::memory::{mib, status_kib};
use crate::report::{Met, Report, Row, thousands};
use crate::resident::{IDLE_WAIT, raise_open_files};
use crate::setup;

/// Actors, each with one socket.
pub const ACTORS: usize = 10_000;
/// Sockets opened per second at most. Each open is an event that opens
/// the actor's database and its WAL, which stay open until the actor has
/// been idle ten seconds (ADR 045): at this pace the server holds about
/// 6,000 such files beside its 10,000 sockets, under a 20,000 open-files
/// limit (at 400/s it reached 19,940 on a loaded machine).
const OPENS_PER_SECOND: usize = 300;
/// Sockets opened at once.
const OPEN_BATCH: usize = 50;
/// Issue 25's targets for 10,000 resident Rust actors with a socket each.
const TARGET_MIB: f64 = 1024.0;
const TARGET_P99_MS: f64 = 5.0;
/// What the child prints before its row's fields.
const ROW: &str = "socket-row\t";

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Opens a socket to each of `n` bench guests served by a child process,
/// and adds the child's row.
///
/// # Errors
/// The child could not start or serve, or a socket could not open.
pub fn run(guest: &Path, n: usize, report: &mut Report) -> Result<()> {
    raise_open_files(n);
    let exe = std::env::current_exe().context("finding this benchmark's executable")?;
    let mut child = Command::new(&exe)
        .arg("--socket-child")
        .arg(format!("{}|{n}", guest.display()))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting the socket child")?;
    let mut to_child = child.stdin.take().context("the child's stdin")?;
    let mut from_child = BufReader::new(child.stdout.take().context("the child's stdout")?).lines();
    let addr = loop {
        match from_child.next() {
            Some(line) => {
                if let Some(addr) = line?.strip_prefix("addr ") {
                    break addr.to_owned();
                }
            }
            None => bail!("the socket child ended before it served ({})", child.wait()?),
        }
    };
    let tokio_rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting tokio")?;
    let started = Instant::now();
    let mut sockets = match tokio_rt.block_on(open_sockets(&addr, n)) {
        Ok(s) => s,
        Err(e) => {
            drop(to_child);
            let _ = child.wait();
            return Err(e);
        }
    };
    let took = started.elapsed();
    writeln!(to_child, "opened").context("telling the child")?;
    to_child.flush()?;
    let mut row = None;
    for line in from_child.by_ref() {
        if let Some(fields) = line?.strip_prefix(ROW) {
            let f: Vec<String> = fields.split('\t').map(str::to_owned).collect();
            let f: [String; 4] = f
                .try_into()
                .map_err(|_| anyhow::anyhow!("the socket child printed {fields:?}"))?;
            row = Some(f);
            break;
        }
    }
    // The sockets are still open after all that: ten actors across the
    // range each count one.
    let step = (n / 10).max(1);
    let counted = tokio_rt.block_on(count_on(sockets.iter_mut().step_by(step)));
    drop(sockets);
    drop(to_child);
    let status = child.wait()?;
    let Some([figure, shim, target, is_met]) = row else {
        bail!("the socket child gave no figure ({status})");
    };
    let counted_ok = matches!(&counted, Ok(counts) if counts.iter().all(|c| c == "1"));
    report.row(Row {
        figure,
        shim,
        baseline: format!("sockets opened in {:.1} s", took.as_secs_f64()),
        ratio: "-".into(),
        target,
        met: if counted_ok && is_met == "yes" {
            Met::Yes
        } else {
            Met::No
        },
    });
    if !counted_ok {
        report.note(format!(
            "resident sockets: after the figure, the first actors' counts of their sockets were {counted:?}"
        ));
    }
    report.note(format!(
        "resident sockets: {} bench guests (Rust) served over 127.0.0.1 by a child process, each with one WebSocket \
         opened from this process ({OPENS_PER_SECOND}/s at most); RSS growth of the child read {:.1} s after the last \
         open (and just after it); p50 and p99 of 500 `noop` events to those actors after that, each idle since",
        thousands(n as f64),
        IDLE_WAIT.as_secs_f64()
    ));
    Ok(())
}

/// Opens a socket to each actor `r<i>`, at most [`OPENS_PER_SECOND`].
async fn open_sockets(addr: &str, n: usize) -> Result<Vec<Socket>> {
    let started = Instant::now();
    let mut sockets = Vec::with_capacity(n);
    for from in (0..n).step_by(OPEN_BATCH) {
        let batch = (from..n.min(from + OPEN_BATCH)).map(|i| async move {
            let url = format!("ws://{addr}/bench/r{i}");
            tokio_tungstenite::connect_async(&url)
                .await
                .map(|(socket, _)| socket)
                .with_context(|| format!("opening {url}"))
        });
        for socket in futures_util::future::join_all(batch).await {
            sockets.push(socket?);
        }
        let due = Duration::from_secs_f64(sockets.len() as f64 / OPENS_PER_SECOND as f64);
        if let Some(wait) = due.checked_sub(started.elapsed()) {
            tokio::time::sleep(wait).await;
        }
    }
    Ok(sockets)
}

/// Each socket's actor's count of its open sockets.
async fn count_on(sockets: impl Iterator<Item = &mut Socket>) -> Result<Vec<String>> {
    let mut counts = Vec::new();
    for socket in sockets {
        socket.send(Message::Text("count".into())).await?;
        let answer = tokio::time::timeout(Duration::from_secs(10), socket.next())
            .await
            .context("no answer within 10 s")?;
        match answer {
            Some(Ok(Message::Text(t))) => counts.push(t.trim().to_owned()),
            other => counts.push(format!("{other:?}")),
        }
    }
    Ok(counts)
}

/// The child's side: `spec` is `wasm|count`. Serves the bench guest, says
/// where, and once the parent has opened its sockets, measures and prints
/// one row; then waits for the parent to close its stdin.
///
/// # Errors
/// The runtime or the server could not start, or the events failed.
pub fn child(spec: &str) -> Result<()> {
    let Some((wasm, n)) = spec.rsplit_once('|') else {
        bail!("--socket-child {spec:?}: give wasm|count");
    };
    let n: usize = n.parse().with_context(|| format!("--socket-child: count {n:?}"))?;
    raise_open_files(n);
    let cache = tempfile::Builder::new()
        .prefix("wasmkeep-bench-sockets-cache-")
        .tempdir()
        .context("creating a temporary directory")?;
    let (rt, _dir) = setup::resident_runtime_of("bench", Path::new(wasm), cache.path(), Some(n))?;
    setup::call(&rt, &setup::key("bench", "warm-up"), "noop")?;
    rt.dev().hibernate_all();
    let tokio_rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting tokio")?;
    let listener = tokio_rt.block_on(tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)))?;
    let addr = listener.local_addr()?;
    let app = wasmkeep_shim::server::router(rt.clone(), setup::APP.to_owned());
    tokio_rt.spawn(async move { axum::serve(listener, app).await });
    let rss_before = status_kib("VmRSS")?;
    let threads_before = status_kib("Threads").unwrap_or(0);
    println!("addr {addr}");
    std::io::stdout().flush()?;
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    if line.trim() != "opened" {
        return Ok(()); // The parent gave up; it says why.
    }
    let busy = mib(status_kib("VmRSS")?.saturating_sub(rss_before));
    std::thread::sleep(IDLE_WAIT);
    let grown = mib(status_kib("VmRSS")?.saturating_sub(rss_before));
    let threads = status_kib("Threads").unwrap_or(0).saturating_sub(threads_before);
    let resident = rt.admin().resident_count();
    let with_socket = (0..n)
        .filter(|i| rt.admin().sockets_of(&setup::key("bench", format!("r{i}"))).len() == 1)
        .count();
    let mut took = Vec::with_capacity(500);
    for i in 0..500 {
        let key = setup::key("bench", format!("r{}", (i * 7919) % n));
        let started = Instant::now();
        setup::call(&rt, &key, "noop")?;
        took.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    took.sort_by(f64::total_cmp);
    let (p50, p99) = (took[took.len() / 2], took[took.len() * 99 / 100]);
    let is_met = n == ACTORS && resident >= n && with_socket == n && grown <= TARGET_MIB && p99 <= TARGET_P99_MS;
    println!(
        "{ROW}{} resident bench guests, one WebSocket each\t+{grown:.1} MiB idle ({:.0} KiB each; +{busy:.1} MiB just \
         after the last open), {resident} resident, {with_socket} with a socket, {threads} threads, p50 {p50:.2} ms, p99 {p99:.2} ms\t\
         ≤ {TARGET_MIB:.0} MiB, p99 ≤ {TARGET_P99_MS:.0} ms\t{}",
        thousands(n as f64),
        grown * 1024.0 / n as f64,
        if is_met { "yes" } else { "no" }
    );
    std::io::stdout().flush()?;
    let _ = std::io::stdin().read_line(&mut line);
    Ok(())
}
