//! The time-bounded fuzz loop every target runs in: replay the corpus, then
//! generate (proptest strategies) and mutate (bytes of corpus inputs) until
//! the time is up; keep inputs with an outcome not seen before; on a failure
//! shrink it, save it as `crash-<hash>` and stop.

use proptest::strategy::{BoxedStrategy, Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::collections::HashSet;
use std::fmt::Write as _;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What one execution showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The boundary held; the outcome's classes, one a line (an input with a
    /// class not seen before is kept in the corpus).
    Pass(String),
    /// The boundary did not hold: why.
    Fail(String),
}

/// One fuzz target.
pub trait Target {
    /// One input.
    type Input: Clone + std::fmt::Debug;
    /// The target's name (and its corpus directory's).
    fn name(&self) -> &'static str;
    /// Random inputs.
    fn strategy(&self) -> BoxedStrategy<Self::Input>;
    /// The input as a corpus file.
    fn encode(&self, input: &Self::Input) -> Vec<u8>;
    /// A corpus file as an input; none if it is not one.
    fn decode(&self, bytes: &[u8]) -> Option<Self::Input>;
    /// Runs one input against the boundary.
    fn run(&mut self, input: &Self::Input) -> Verdict;
    /// Inputs always run first (edge cases worth running every time).
    fn seeds(&self) -> Vec<Self::Input> {
        Vec::new()
    }
    /// Observations that are not failures, printed after the result line.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
}

/// How a run goes.
#[derive(Debug, Clone)]
pub struct Options {
    /// How long to generate after the corpus replay (the replay always runs whole).
    pub budget: Duration,
    /// The random seed (printed, so a run can be repeated).
    pub seed: u64,
    /// Where the targets' corpus directories are.
    pub corpus_root: PathBuf,
    /// Keep inputs with new outcomes in the corpus.
    pub extend: bool,
    /// At most this many new corpus inputs per run and target.
    pub max_new: usize,
    /// A target directory is not extended past this many bytes.
    pub max_dir_bytes: u64,
    /// An execution that takes longer than this is a hang: the process saves
    /// the input and exits.
    pub hang_after: Duration,
    /// Replay only this file (no corpus, no generation).
    pub only_input: Option<PathBuf>,
}

/// A failure found.
#[derive(Debug, Clone)]
pub struct Crash {
    /// Why it failed.
    pub why: String,
    /// The (shrunk) input as its corpus file holds it.
    pub input: Vec<u8>,
    /// Where it was saved (none if saving failed).
    pub saved: Option<PathBuf>,
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct Report {
    /// The target.
    pub target: &'static str,
    /// Executions, replay included.
    pub execs: u64,
    /// How long it took.
    pub elapsed: Duration,
    /// Corpus inputs in the directory at the end (crash files included).
    pub corpus_inputs: usize,
    /// New corpus inputs this run.
    pub new_inputs: usize,
    /// The failure, if one was found.
    pub crash: Option<Crash>,
    /// The target's observations.
    pub notes: Vec<String>,
}

impl Report {
    /// The result line.
    pub fn line(&self) -> String {
        let s = self.elapsed.as_secs_f64();
        let rate = if s > 0.0 { self.execs as f64 / s } else { 0.0 };
        let end = match &self.crash {
            None => "no crash".to_owned(),
            Some(c) => format!("CRASH: {}", c.why),
        };
        format!(
            "fuzz {}: {} executions in {:.1} s ({:.0}/s), {} corpus inputs, {}",
            self.target, self.execs, s, rate, self.corpus_inputs, end
        )
    }
}

static PANICS: AtomicUsize = AtomicUsize::new(0);
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Counts every panic in the process, on any thread (a host worker's too),
/// and keeps the last one's message and place. Install once, before any target.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
            (*s).to_owned()
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            s.clone()
        } else {
            "(a panic without a message)".to_owned()
        };
        let place = info
            .location()
            .map_or_else(String::new, |l| format!(" at {}:{}", l.file(), l.line()));
        let thread = std::thread::current().name().unwrap_or("?").to_owned();
        let text = format!("panic in thread {thread}{place}: {msg}");
        eprintln!("{text}");
        *LAST_PANIC.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(text);
        PANICS.fetch_add(1, Ordering::SeqCst);
    }));
}

fn last_panic() -> String {
    LAST_PANIC
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
        .unwrap_or_default()
}

/// FNV-1a, for content-addressed corpus file names.
pub fn hash_name(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The input as text for a person: UTF-8 shown as it is, other bytes escaped.
pub fn show(bytes: &[u8]) -> String {
    let mut s = String::new();
    for chunk in bytes.utf8_chunks() {
        s.push_str(chunk.valid());
        for b in chunk.invalid() {
            let _ = write!(s, "\\x{b:02x}");
        }
    }
    s
}

/// Runs one input, a panic in it or anywhere in the process counting as a failure.
fn run_guarded<T: Target>(target: &mut T, input: &T::Input) -> Verdict {
    let before = PANICS.load(Ordering::SeqCst);
    let v = std::panic::catch_unwind(AssertUnwindSafe(|| target.run(input)));
    let after = PANICS.load(Ordering::SeqCst);
    match v {
        Err(_) => Verdict::Fail(format!("panicked: {}", last_panic())),
        Ok(_) if after != before => Verdict::Fail(format!("the host panicked: {}", last_panic())),
        Ok(v) => v,
    }
}

/// The execution in progress: since when, and its input.
type InProgress = Arc<Mutex<Option<(Instant, Vec<u8>)>>>;

/// Watches the execution in progress; one that runs past the limit is a hang.
struct Watchdog {
    current: InProgress,
}

impl Watchdog {
    fn start(target: &'static str, dir: PathBuf, limit: Duration) -> Self {
        let current: InProgress = Arc::new(Mutex::new(None));
        let watched = Arc::downgrade(&current);
        std::thread::Builder::new()
            .name("fuzz-watchdog".into())
            .spawn(move || {
                while let Some(cur) = watched.upgrade() {
                    let hung = cur
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .as_ref()
                        .filter(|(since, _)| since.elapsed() > limit)
                        .map(|(_, input)| input.clone());
                    drop(cur);
                    if let Some(input) = hung {
                        let path = dir.join(format!("crash-{}", hash_name(&input)));
                        let _ = std::fs::write(&path, &input);
                        println!(
                            "fuzz {target}: CRASH: an execution ran longer than {limit:?} (a hang); input saved as {}:\n{}",
                            path.display(),
                            show(&input)
                        );
                        std::process::exit(1);
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
            })
            .expect("the watchdog thread starts");
        Self { current }
    }

    fn begin(&self, input: Vec<u8>) {
        *self.current.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some((Instant::now(), input));
    }

    fn end(&self) {
        *self.current.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }
}

fn corpus_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| !n.starts_with('.') && !n.ends_with(".md"))
        })
        .collect();
    // Crash files first: a known failure is what a replay most needs to show.
    files.sort_by_key(|p| {
        let crash = p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("crash-"));
        (!crash, p.clone())
    });
    files
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

/// Byte-level mutations of a corpus input (AFL's havoc, small): flip, insert,
/// delete, duplicate a span, splice with another input.
fn mutate(rng: &mut fastrand::Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    let rounds = 1 + rng.usize(..4);
    for _ in 0..rounds {
        let len = out.len();
        match rng.u8(..6) {
            0 if len > 0 => {
                let i = rng.usize(..len);
                out[i] ^= 1 << rng.u8(..8);
            }
            1 => {
                let i = rng.usize(..=len);
                let interesting: &[&[u8]] = &[
                    b"%",
                    b"%2F",
                    b"%2e%2e",
                    b"..",
                    b"/",
                    b"?",
                    b"\"",
                    b"'",
                    b"\\",
                    b"\0",
                    b"\n",
                    b"[",
                    b"]",
                    b"{",
                    b"}",
                    b"=",
                    b",",
                    b"-1",
                    b"18446744073709551616",
                    b"1e400",
                    b"\xff",
                    b"\xc3\xa9",
                    b"\xf0\x9f\x92\xa9",
                ];
                let piece = interesting[rng.usize(..interesting.len())];
                out.splice(i..i, piece.iter().copied());
            }
            2 if len > 0 => {
                let i = rng.usize(..len);
                let n = rng.usize(..=(len - i).min(16));
                out.drain(i..i + n);
            }
            3 if len > 0 => {
                let i = rng.usize(..len);
                let n = rng.usize(..=(len - i).min(32));
                let span: Vec<u8> = out[i..i + n].to_vec();
                let at = rng.usize(..=len);
                out.splice(at..at, span);
            }
            4 if !other.is_empty() => {
                let cut = rng.usize(..=len);
                let from = rng.usize(..other.len());
                out.truncate(cut);
                out.extend_from_slice(&other[from..]);
            }
            _ if len > 0 => {
                let i = rng.usize(..len);
                out[i] = rng.u8(..);
            }
            _ => out.push(rng.u8(..)),
        }
    }
    out
}

/// Shrinks a failing generated input: simpler values while it still fails.
fn shrink<T: Target>(
    target: &mut T,
    tree: &mut dyn ValueTree<Value = T::Input>,
    watchdog: &Watchdog,
    until: Instant,
) -> T::Input {
    let mut best = tree.current();
    if !tree.simplify() {
        return best;
    }
    for _ in 0..5_000 {
        if Instant::now() > until {
            break;
        }
        let candidate = tree.current();
        watchdog.begin(target.encode(&candidate));
        let fails = matches!(run_guarded(target, &candidate), Verdict::Fail(_));
        watchdog.end();
        let more = if fails {
            best = candidate;
            tree.simplify()
        } else {
            tree.complicate()
        };
        if !more {
            break;
        }
    }
    best
}

fn save_crash<T: Target>(target: &T, dir: &Path, input: &T::Input, why: String) -> Crash {
    let bytes = target.encode(input);
    let path = dir.join(format!("crash-{}", hash_name(&bytes)));
    let saved = std::fs::write(&path, &bytes).ok().map(|()| path);
    Crash {
        why,
        input: bytes,
        saved,
    }
}

/// Runs `target` as `opts` say.
pub fn fuzz<T: Target>(target: &mut T, opts: &Options) -> Report {
    let name = target.name();
    let dir = opts.corpus_root.join(name);
    let _ = std::fs::create_dir_all(&dir);
    let watchdog = Watchdog::start(name, dir.clone(), opts.hang_after);
    let start = Instant::now();
    let mut execs = 0u64;
    let mut seen: HashSet<String> = HashSet::new();
    let mut pool: Vec<Vec<u8>> = Vec::new();
    let mut new_inputs = 0usize;
    let finish = |execs: u64, new_inputs: usize, crash: Option<Crash>, notes: Vec<String>| Report {
        target: name,
        execs,
        elapsed: start.elapsed(),
        corpus_inputs: corpus_files(&dir).len(),
        new_inputs,
        crash,
        notes,
    };

    // The seeds and the corpus, or the one input asked for.
    let mut replay: Vec<(String, Option<T::Input>)> = Vec::new();
    if let Some(only) = &opts.only_input {
        let bytes = std::fs::read(only).unwrap_or_default();
        replay.push((only.display().to_string(), target.decode(&bytes)));
    } else {
        for (i, s) in target.seeds().into_iter().enumerate() {
            replay.push((format!("seed {i}"), Some(s)));
        }
        for file in corpus_files(&dir) {
            let bytes = std::fs::read(&file).unwrap_or_default();
            let input = target.decode(&bytes);
            if input.is_some() {
                pool.push(bytes);
            }
            replay.push((file.display().to_string(), input));
        }
    }
    let mut undecodable = Vec::new();
    for (source, input) in replay {
        let Some(input) = input else {
            undecodable.push(source);
            continue;
        };
        watchdog.begin(target.encode(&input));
        let v = run_guarded(target, &input);
        watchdog.end();
        execs += 1;
        match v {
            Verdict::Pass(sig) => {
                seen.extend(sig.lines().map(str::to_owned));
            }
            Verdict::Fail(why) => {
                let crash = save_crash(target, &dir, &input, format!("{why} (replaying {source})"));
                return finish(execs, 0, Some(crash), target.notes());
            }
        }
    }
    let mut notes = Vec::new();
    if !undecodable.is_empty() {
        notes.push(format!(
            "not inputs of this target, skipped: {}",
            undecodable.join(", ")
        ));
    }
    if opts.only_input.is_some() {
        notes.extend(target.notes());
        return finish(execs, 0, None, notes);
    }

    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&opts.seed.to_le_bytes());
    seed_bytes[8..16].copy_from_slice(&hash_name(name.as_bytes()).as_bytes()[..8]);
    let mut runner = TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes));
    let mut rng =
        fastrand::Rng::with_seed(opts.seed ^ u64::from_str_radix(&hash_name(name.as_bytes()), 16).unwrap_or(0));
    let strategy = target.strategy();
    let deadline = start + opts.budget;
    while Instant::now() < deadline {
        // A third of the time a mutation of a corpus input, else a new one.
        let mutated = if !pool.is_empty() && rng.u8(..3) == 0 {
            let a = &pool[rng.usize(..pool.len())];
            let b = &pool[rng.usize(..pool.len())];
            target.decode(&mutate(&mut rng, a, b))
        } else {
            None
        };
        let (input, mut tree) = match mutated {
            Some(input) => (input, None),
            None => match strategy.new_tree(&mut runner) {
                Ok(tree) => (tree.current(), Some(tree)),
                Err(_) => continue,
            },
        };
        let encoded = target.encode(&input);
        watchdog.begin(encoded.clone());
        let v = run_guarded(target, &input);
        watchdog.end();
        execs += 1;
        match v {
            Verdict::Pass(sig) => {
                // Each line of the outcome is a feature; an input with a new one is kept.
                let mut new = false;
                for l in sig.lines() {
                    let fresh = seen.insert(l.to_owned());
                    if fresh && std::env::var_os("WASMKEEP_FUZZ_SHOW_OUTCOMES").is_some() {
                        eprintln!("new outcome: {l}");
                    }
                    new |= fresh;
                }
                if new
                    && opts.extend
                    && new_inputs < opts.max_new
                    && encoded.len() <= 16 << 10
                    && dir_bytes(&dir) + encoded.len() as u64 <= opts.max_dir_bytes
                {
                    let path = dir.join(hash_name(&encoded));
                    if !path.exists() && std::fs::write(&path, &encoded).is_ok() {
                        new_inputs += 1;
                    }
                }
                if pool.len() < 4096 && encoded.len() <= 16 << 10 {
                    pool.push(encoded);
                }
            }
            Verdict::Fail(why) => {
                let shrunk = match tree.as_mut() {
                    Some(t) => shrink(target, t.as_mut(), &watchdog, Instant::now() + Duration::from_secs(20)),
                    None => input.clone(),
                };
                // The shrunk input fails for its own reason, which may differ a
                // little; one that no longer fails (state) gives way to the original.
                watchdog.begin(target.encode(&shrunk));
                let (failing, why) = match run_guarded(target, &shrunk) {
                    Verdict::Fail(w) => (shrunk, w),
                    Verdict::Pass(_) => (input, why),
                };
                watchdog.end();
                let crash = save_crash(target, &dir, &failing, why);
                notes.extend(target.notes());
                return finish(execs, new_inputs, Some(crash), notes);
            }
        }
    }
    notes.extend(target.notes());
    notes.push(format!(
        "{} distinct outcomes, {new_inputs} new corpus inputs",
        seen.len()
    ));
    finish(execs, new_inputs, None, notes)
}

/// A strategy picking one of `items` (cloned).
pub fn pick<T: Clone + std::fmt::Debug + 'static>(items: Vec<T>) -> BoxedStrategy<T> {
    proptest::sample::select(items).boxed()
}
