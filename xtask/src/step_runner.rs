//! Runs the steps of a long command (`cargo xtask test`): each says when it
//! began, the end lists what each took, a step can be chosen by name, and a
//! failure prints its whole output and still ends with the table.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, anyhow, bail};

/// Which steps run: all of them, those whose name contains one of `only`,
/// or every step from the first whose name contains `from`. Names are
/// matched without regard to case.
#[derive(Debug, Default)]
pub struct Selection {
    pub only: Vec<String>,
    pub from: Option<String>,
    /// Print the steps' names and run nothing.
    pub list: bool,
}

/// What one step took, for the table at the end.
struct Timing {
    took: Duration,
    name: String,
    failed: bool,
}

/// A command of [`Runner::summarised_at_once`]: the line printed before
/// its output (if any), the lines of its output kept when it passes, the
/// command, and the group of jobs it never runs beside.
pub struct Job {
    pub title: Option<String>,
    pub lines: fn(&str) -> bool,
    pub cmd: Command,
    /// Jobs of the same group never run at the same time.
    pub apart: Option<&'static str>,
}

impl Job {
    pub fn new(lines: fn(&str) -> bool, cmd: Command) -> Self {
        Self {
            title: None,
            lines,
            cmd,
            apart: None,
        }
    }

    /// The same, with `title` printed before what it shows.
    pub fn titled(title: impl Into<String>, lines: fn(&str) -> bool, cmd: Command) -> Self {
        Self {
            title: Some(title.into()),
            ..Self::new(lines, cmd)
        }
    }

    /// The same, never run beside another job of `group`: it waits, and a
    /// later job that may run goes first.
    #[must_use]
    pub fn never_beside(self, group: &'static str) -> Self {
        Self {
            apart: Some(group),
            ..self
        }
    }
}

/// A job that has started.
struct Running {
    job: Job,
    child: std::process::Child,
    log: PathBuf,
    began: Instant,
}

pub struct Runner {
    root: PathBuf,
    began: Instant,
    selection: Selection,
    /// `--from`'s step has been reached.
    from_reached: bool,
    /// The step running now and when it began.
    current: Option<(String, Instant)>,
    timings: Vec<Timing>,
    /// Every step's name, chosen or not (for `--list` and a selection that matched none).
    names: Vec<String>,
    /// How many steps were chosen.
    chosen: usize,
    /// Set for every command, in order (a later value of a name wins).
    env: Vec<(String, String)>,
    /// What `cargo run` added to xtask's environment, taken away again.
    outer: OuterEnv,
}

impl Runner {
    /// A runner whose clock started at `clock_from` (seconds since the
    /// epoch; now if `None`).
    pub fn new(root: &Path, selection: Selection, clock_from: Option<u64>) -> Self {
        let now = Instant::now();
        let already = clock_from.map_or(Duration::ZERO, |from| {
            let now_unix = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
            now_unix.saturating_sub(Duration::from_secs(from))
        });
        Self {
            root: root.to_path_buf(),
            began: now.checked_sub(already).unwrap_or(now),
            selection,
            from_reached: false,
            current: None,
            timings: Vec::new(),
            names: Vec::new(),
            chosen: 0,
            env: Vec::new(),
            outer: OuterEnv::new(root),
        }
    }

    /// The repository's root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Sets `name` for every command run from now on.
    pub fn set_env(&mut self, name: &str, value: impl Into<String>) {
        self.env.push((name.to_owned(), value.into()));
    }

    /// Records a step that ran before this runner (the bootstrap's setup),
    /// taking the time since the clock started.
    pub fn record_before(&mut self, name: &str) {
        self.names.push(name.to_owned());
        self.timings.push(Timing {
            took: self.began.elapsed(),
            name: name.to_owned(),
            failed: false,
        });
    }

    /// Ends the step before, and begins `name` if it is chosen: prints
    /// "==> [at N min] name" and returns true. A step not chosen returns
    /// false and is not timed.
    pub fn step(&mut self, name: &str) -> bool {
        self.end_step(false);
        self.names.push(name.to_owned());
        let lower = name.to_lowercase();
        let chosen = if self.selection.list {
            println!("{name}");
            false
        } else if let Some(from) = &self.selection.from {
            self.from_reached |= lower.contains(&from.to_lowercase());
            self.from_reached
        } else if self.selection.only.is_empty() {
            true
        } else {
            self.selection.only.iter().any(|o| lower.contains(&o.to_lowercase()))
        };
        if chosen {
            self.chosen += 1;
            self.begin(name);
        }
        chosen
    }

    /// Like [`Runner::step`], but begins `name` whatever the selection
    /// chose (a part of setup that later steps need); it is listed by
    /// `--list` and timed, and does not count as chosen.
    pub fn required_step(&mut self, name: &str) -> bool {
        self.end_step(false);
        self.names.push(name.to_owned());
        if self.selection.list {
            println!("{name}");
            return false;
        }
        self.begin(name);
        true
    }

    fn begin(&mut self, name: &str) {
        println!();
        println!("==> [at {} min] {name}", self.began.elapsed().as_secs() / 60);
        flush();
        self.current = Some((name.to_owned(), Instant::now()));
    }

    fn end_step(&mut self, failed: bool) {
        if let Some((name, began)) = self.current.take() {
            self.timings.push(Timing {
                took: began.elapsed(),
                name,
                failed,
            });
        }
    }

    /// A command run from the repository root with the runner's environment.
    pub fn command(&self, program: impl AsRef<OsStr>, args: &[&str]) -> Command {
        let mut cmd = Command::new(in_root(&self.root, program.as_ref()));
        cmd.args(args).current_dir(&self.root);
        self.outer.restore(&mut cmd);
        for (name, value) in &self.env {
            cmd.env(name, value);
        }
        cmd
    }

    /// Runs `program args`, its output going straight through.
    ///
    /// # Errors
    /// It could not start or it failed.
    pub fn run(&self, program: &str, args: &[&str]) -> Result<()> {
        self.run_command(self.command(program, args))
    }

    /// Runs `cmd`, its output going straight through.
    ///
    /// # Errors
    /// It could not start or it failed.
    pub fn run_command(&self, mut cmd: Command) -> Result<()> {
        let began = Instant::now();
        let outcome = run_command(&mut cmd);
        self.took(began, &cmd);
        outcome
    }

    /// Runs `cmd`, whose output is long, with its stdout and stderr into one
    /// file: on success prints only the lines `lines` keeps; on failure all
    /// of it, so that a failure keeps its context (issue 56).
    ///
    /// # Errors
    /// It could not start or it failed (after printing all of its output).
    pub fn summarised(&self, lines: fn(&str) -> bool, cmd: Command) -> Result<()> {
        self.summarised_at_once(1, vec![Job::new(lines, cmd)])
    }

    /// Runs `jobs` in their order, `at_once` of them at a time (the next
    /// starts when one ends), each one's stdout and stderr into a file of
    /// its own. As each ends, prints its title, what it took and, as
    /// [`Runner::summarised`] does, its kept lines, or all of its output
    /// when it failed. After a failure no job starts; those running are
    /// waited for and shown. For commands that mostly wait (on servers,
    /// leases, sleeps), not for compiles: 2 cores run two such at once. A
    /// job never runs beside another of its group ([`Job::never_beside`]):
    /// the first job in order that may run starts.
    ///
    /// # Errors
    /// A job could not start or failed (after printing all of its output);
    /// the error names the first that failed.
    pub fn summarised_at_once(&self, at_once: usize, jobs: Vec<Job>) -> Result<()> {
        let mut waiting: Vec<Job> = jobs;
        let mut running: Vec<Running> = Vec::new();
        let mut first_error: Option<anyhow::Error> = None;
        loop {
            while first_error.is_none() && running.len() < at_once.max(1) {
                let may_run = |job: &Job| {
                    job.apart
                        .is_none_or(|group| running.iter().all(|r| r.job.apart != Some(group)))
                };
                let Some(next) = waiting.iter().position(may_run) else {
                    break;
                };
                let job = waiting.remove(next);
                match self.spawn(job) {
                    Ok(run) => running.push(run),
                    Err(e) => first_error = Some(e),
                }
            }
            if running.is_empty() {
                break;
            }
            let mut ended = None;
            for (i, run) in running.iter_mut().enumerate() {
                match run.child.try_wait() {
                    Ok(Some(status)) => {
                        ended = Some((i, Ok(status)));
                        break;
                    }
                    Ok(None) => {}
                    Err(e) => {
                        ended = Some((i, Err(e)));
                        break;
                    }
                }
            }
            let Some((i, status)) = ended else {
                std::thread::sleep(Duration::from_millis(50));
                continue;
            };
            let run = running.remove(i);
            let outcome = self.report(run, status);
            if let Err(e) = outcome {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    fn spawn(&self, mut job: Job) -> Result<Running> {
        let shown = shown(&job.cmd);
        let log = Self::log_file();
        let began = Instant::now();
        let out = fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
        let child = job
            .cmd
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()
            .with_context(|| format!("cannot run `{shown}`"));
        match child {
            Ok(child) => Ok(Running { job, child, log, began }),
            Err(e) => {
                let _ = fs::remove_file(&log);
                Err(e)
            }
        }
    }

    /// Prints what an ended job said: its title, what it took, its kept
    /// lines, or all of its output when it failed.
    fn report(&self, run: Running, status: std::io::Result<std::process::ExitStatus>) -> Result<()> {
        let Running { job, log, began, .. } = run;
        let shown = shown(&job.cmd);
        let output = fs::read(&log).unwrap_or_default();
        let _ = fs::remove_file(&log);
        if let Some(title) = &job.title {
            println!("{title}");
        }
        self.took(began, &job.cmd);
        let status = status.with_context(|| format!("waiting for `{shown}`"))?;
        let text = String::from_utf8_lossy(&output);
        let mut stdout = std::io::stdout().lock();
        if status.success() {
            for line in text.lines().filter(|l| (job.lines)(l)) {
                let _ = writeln!(stdout, "{line}");
            }
            let _ = stdout.flush();
            return Ok(());
        }
        let code = status.code().map_or_else(|| status.to_string(), |c| c.to_string());
        let _ = writeln!(
            stdout,
            "--- all of the output of `{shown}`, which failed (exit {code}):"
        );
        let _ = stdout.write_all(&output);
        let _ = stdout.flush();
        bail!("`{shown}` failed ({status}; all of its output is above)")
    }

    /// "  [12.3 s] program args": what one command of a step took, printed
    /// after it ends (passed or failed), so that a slow step shows where its
    /// time went; a program in the root is named relative to it.
    fn took(&self, began: Instant, cmd: &Command) {
        let shown = shown(cmd);
        let root = format!("{}/", self.root.display());
        let shown = shown.strip_prefix(&root).unwrap_or(&shown);
        println!("  [{:.1} s] {}", began.elapsed().as_secs_f64(), short(shown));
        flush();
    }

    fn log_file() -> PathBuf {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        std::env::temp_dir().join(format!("xtask-step-{}-{stamp}-{n}.log", std::process::id()))
    }

    /// Ends the last step and prints what each took; with a failure, names
    /// the step that failed and why, last, and returns the error.
    ///
    /// # Errors
    /// `outcome`'s, or the selection chose no step.
    pub fn finish(mut self, outcome: Result<()>) -> Result<()> {
        let failed_step = outcome
            .as_ref()
            .err()
            .and(self.current.as_ref().map(|(n, _)| n.clone()));
        self.end_step(outcome.is_err());
        if self.selection.list {
            return outcome;
        }
        let outcome = outcome.and_then(|()| {
            if self.chosen == 0 {
                Err(anyhow!(
                    "no step's name contains {}; the steps are:\n  {}",
                    self.selection
                        .from
                        .iter()
                        .chain(&self.selection.only)
                        .map(|s| format!("`{s}`"))
                        .collect::<Vec<_>>()
                        .join(" or "),
                    self.names.join("\n  ")
                ))
            } else {
                Ok(())
            }
        });
        println!();
        println!("what each step took (of {} min):", self.began.elapsed().as_secs() / 60);
        for t in &self.timings {
            let name: String = t.name.chars().take(90).collect();
            let mark = if t.failed { "  FAILED" } else { "" };
            println!("{:5} s  {name}{mark}", t.took.as_secs());
        }
        flush();
        if let (Err(e), Some(step)) = (&outcome, failed_step) {
            return Err(anyhow!("the step \"{}\" failed: {e:#}", short(&step)));
        }
        outcome
    }
}

/// A step's name cut to 90 characters, as the table cuts it, and marked so.
fn short(name: &str) -> String {
    let mut short: String = name.chars().take(90).collect();
    if short.len() < name.len() {
        short.push('…');
    }
    short
}

fn flush() {
    let _ = std::io::stdout().flush();
}

/// Runs `cmd`, its output going straight through.
///
/// # Errors
/// It could not start or it failed.
pub fn run_command(cmd: &mut Command) -> Result<()> {
    let shown = shown(cmd);
    let status = cmd.status().with_context(|| format!("cannot run `{shown}`"))?;
    if !status.success() {
        bail!("`{shown}` failed ({status})");
    }
    Ok(())
}

/// A program named by a relative path (`target/debug/…`) is the root's,
/// wherever xtask was started; a bare name is looked up in PATH.
fn in_root(root: &Path, program: &OsStr) -> OsString {
    let path = Path::new(program);
    if path.is_relative() && path.components().count() > 1 {
        root.join(path).into_os_string()
    } else {
        program.to_os_string()
    }
}

/// A command as a reader would type it.
pub fn shown(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// What `cargo run` puts in xtask's environment that the commands of
/// `bash scripts/test.sh` did not see before the test command moved into
/// xtask: the package's variables, `CARGO`, rustup's toolchain choice, and
/// the target and toolchain folders in the library path (which would come
/// before a packaged library's own run path when a trial loads it).
struct OuterEnv {
    remove: Vec<OsString>,
    set: Vec<(OsString, OsString)>,
}

impl OuterEnv {
    fn new(root: &Path) -> Self {
        let mut remove = Vec::new();
        let mut set = Vec::new();
        for (name, _) in std::env::vars_os() {
            let Some(text) = name.to_str() else { continue };
            if text.starts_with("CARGO_PKG_")
                || matches!(
                    text,
                    "CARGO"
                        | "CARGO_MANIFEST_DIR"
                        | "CARGO_MANIFEST_PATH"
                        | "CARGO_CRATE_NAME"
                        | "CARGO_BIN_NAME"
                        | "CARGO_PRIMARY_PACKAGE"
                        | "RUST_RECURSION_COUNT"
                )
            {
                remove.push(name.clone());
            }
        }
        // rustup names the toolchain it chose; kept only when the user set it.
        if std::env::var_os("RUSTUP_TOOLCHAIN").is_some()
            && std::env::var("RUSTUP_TOOLCHAIN_SOURCE").is_ok_and(|s| s != "env")
        {
            remove.push("RUSTUP_TOOLCHAIN".into());
            remove.push("RUSTUP_TOOLCHAIN_SOURCE".into());
        }
        // Cargo puts the target folder and the toolchain's libraries first.
        let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
        // Only a rustup toolchain's own folder: with a system cargo
        // (`/usr/bin/cargo`) that would be `/usr`, whose libraries the user
        // may have put there on purpose.
        let toolchain = std::env::var_os("CARGO")
            .map(PathBuf::from)
            .and_then(|cargo| cargo.parent().and_then(Path::parent).map(Path::to_path_buf))
            .filter(|t| t.parent().is_some_and(|p| p.ends_with("toolchains")));
        for var in ["LD_LIBRARY_PATH", "DYLD_FALLBACK_LIBRARY_PATH", "DYLD_LIBRARY_PATH"] {
            let Some(value) = std::env::var_os(var) else { continue };
            let kept: Vec<PathBuf> = std::env::split_paths(&value)
                .filter(|p| !p.starts_with(&target) && !toolchain.as_ref().is_some_and(|t| p.starts_with(t)))
                .collect();
            match std::env::join_paths(&kept) {
                Ok(joined) if !kept.is_empty() => set.push((var.into(), joined)),
                _ => remove.push(var.into()),
            }
        }
        Self { remove, set }
    }

    fn restore(&self, cmd: &mut Command) {
        for name in &self.remove {
            cmd.env_remove(name);
        }
        for (name, value) in &self.set {
            cmd.env(name, value);
        }
    }
}

/// A command run with the environment `bash scripts/test.sh` gave it (see
/// [`OuterEnv`]), from the repository root.
pub fn outer_command(root: &Path, program: impl AsRef<OsStr>) -> Command {
    let mut cmd = Command::new(in_root(root, program.as_ref()));
    cmd.current_dir(root);
    OuterEnv::new(root).restore(&mut cmd);
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runner(selection: Selection) -> Runner {
        Runner::new(Path::new("."), selection, None)
    }

    #[test]
    fn only_chooses_by_substring_without_case() {
        let mut r = runner(Selection {
            only: vec!["FORMAT".into()],
            ..Selection::default()
        });
        assert!(!r.step("set up what is missing"));
        assert!(r.step("format (cargo fmt --check)"));
        assert!(!r.step("lints"));
        assert_eq!(r.timings.len(), 1);
    }

    #[test]
    fn from_chooses_that_step_and_every_later_one() {
        let mut r = runner(Selection {
            from: Some("lints".into()),
            ..Selection::default()
        });
        assert!(!r.step("format"));
        assert!(r.step("lints (cargo clippy)"));
        assert!(r.step("tests"));
    }

    #[test]
    fn a_required_step_runs_whatever_was_chosen_and_does_not_count() {
        let mut r = runner(Selection {
            only: vec!["format".into()],
            ..Selection::default()
        });
        assert!(r.required_step("build what setup needs"));
        assert!(r.step("format"));
        assert!(!r.step("lints"));
        assert_eq!(r.chosen, 1);
        let mut listed = runner(Selection {
            list: true,
            ..Selection::default()
        });
        assert!(!listed.required_step("build what setup needs"));
        assert_eq!(listed.names, ["build what setup needs"]);
    }

    #[test]
    fn a_selection_that_chose_nothing_fails_naming_the_steps() {
        let mut r = runner(Selection {
            only: vec!["nothing like it".into()],
            ..Selection::default()
        });
        r.step("format");
        let e = r.finish(Ok(())).expect_err("chose nothing");
        assert!(format!("{e}").contains("  format"), "{e}");
    }

    #[test]
    fn a_failure_names_its_step() {
        let mut r = runner(Selection::default());
        r.step("format");
        let e = r.finish(Err(anyhow!("`cargo fmt` failed"))).expect_err("failed");
        assert_eq!(format!("{e}"), "the step \"format\" failed: `cargo fmt` failed");
    }

    #[test]
    fn summarised_shows_the_matching_lines_and_fails_with_the_rest() {
        let root = std::env::temp_dir().join(format!("xtask-runner-test-{}", std::process::id()));
        fs::create_dir_all(&root).expect("temp dir");
        let r = Runner::new(&root, Selection::default(), None);
        let ok = r.command("sh", &["-c", "echo keep; echo drop"]);
        r.summarised(|l| l.contains("keep"), ok).expect("succeeds");
        let bad = r.command("sh", &["-c", "echo drop >&2; exit 3"]);
        let e = r.summarised(|l| l.contains("keep"), bad).expect_err("fails");
        assert!(format!("{e}").contains("exit status: 3"), "{e}");
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn jobs_at_once_run_together_and_a_failure_stops_the_ones_not_started() {
        let root = std::env::temp_dir().join(format!("xtask-runner-jobs-{}", std::process::id()));
        fs::create_dir_all(&root).expect("temp dir");
        let r = Runner::new(&root, Selection::default(), None);
        // Two jobs of 0.5 s each: at once, well under their sum.
        let began = Instant::now();
        let jobs = (0..2)
            .map(|_| Job::new(|_| false, r.command("sh", &["-c", "sleep 0.5"])))
            .collect();
        r.summarised_at_once(2, jobs).expect("both pass");
        assert!(began.elapsed() < Duration::from_millis(950), "{:?}", began.elapsed());
        // The first fails while the second runs: the second ends and is
        // shown, the third never starts.
        let marker = root.join("third-ran");
        let third = format!("touch {}", marker.display());
        let jobs = vec![
            Job::new(|_| false, r.command("sh", &["-c", "exit 4"])),
            Job::titled("second", |_| false, r.command("sh", &["-c", "sleep 0.3"])),
            Job::new(|_| false, r.command("sh", &["-c", &third])),
        ];
        let e = r.summarised_at_once(2, jobs).expect_err("the first fails");
        assert!(format!("{e}").contains("exit 4"), "{e}");
        assert!(!marker.exists(), "a job started after a failure");
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn jobs_of_one_group_never_run_beside_each_other() {
        let root = std::env::temp_dir().join(format!("xtask-runner-apart-{}", std::process::id()));
        fs::create_dir_all(&root).expect("temp dir");
        let r = Runner::new(&root, Selection::default(), None);
        // Each of the group fails if it finds the other's mark: they must
        // not overlap, though two run at once. The third, of no group, runs
        // beside the first instead of the second.
        let mark = root.join("busy");
        let apart = format!("test ! -e {m} && touch {m} && sleep 0.3 && rm {m}", m = mark.display());
        let began = Instant::now();
        let jobs = vec![
            Job::new(|_| false, r.command("sh", &["-c", &apart])).never_beside("servers"),
            Job::new(|_| false, r.command("sh", &["-c", &apart])).never_beside("servers"),
            Job::new(|_| false, r.command("sh", &["-c", "sleep 0.3"])),
        ];
        r.summarised_at_once(2, jobs).expect("the group's jobs never overlap");
        let took = began.elapsed();
        assert!(
            took >= Duration::from_millis(600) && took < Duration::from_millis(850),
            "the group's two one after another, the third beside the first: {took:?}"
        );
        let _ = fs::remove_dir_all(&root);
    }
}
