//! The table printed at the end.

/// Whether a row's target is met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Met {
    Yes,
    No,
    /// Not measured (the reason is in the row's baseline or the notes).
    Unknown,
}

/// One figure.
pub struct Row {
    pub figure: String,
    pub shim: String,
    pub baseline: String,
    pub ratio: String,
    pub target: String,
    pub met: Met,
}

/// The figures and the notes that explain them.
#[derive(Default)]
pub struct Report {
    rows: Vec<Row>,
    notes: Vec<String>,
}

impl Report {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn row(&mut self, row: Row) {
        self.rows.push(row);
    }

    /// A line printed under the table (and on stderr now, as progress).
    pub fn note(&mut self, line: impl Into<String>) {
        let line = line.into();
        eprintln!("  {line}");
        self.notes.push(line);
    }

    pub fn print(&self) {
        let headers = ["figure", "shim", "baseline", "ratio", "target", "met"];
        let cells: Vec<[String; 6]> = self
            .rows
            .iter()
            .map(|r| {
                [
                    r.figure.clone(),
                    r.shim.clone(),
                    r.baseline.clone(),
                    r.ratio.clone(),
                    r.target.clone(),
                    match r.met {
                        Met::Yes => "yes".to_owned(),
                        Met::No => "NO".to_owned(),
                        Met::Unknown => "n/a".to_owned(),
                    },
                ]
            })
            .collect();
        let mut widths = headers.map(str::len);
        for row in &cells {
            for (w, c) in widths.iter_mut().zip(row) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |row: &[String]| {
            let parts: Vec<String> = row.iter().zip(widths).map(|(c, w)| format!("{c:<w$}")).collect();
            println!("| {} |", parts.join(" | "));
        };
        println!();
        println!("wasmkeep-bench {}", env!("CARGO_PKG_VERSION"));
        println!();
        line(&headers.map(str::to_owned));
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        println!("|-{}-|", rule.join("-|-"));
        for row in &cells {
            line(row);
        }
        let met = self.rows.iter().filter(|r| r.met == Met::Yes).count();
        let missed = self.rows.iter().filter(|r| r.met == Met::No).count();
        let unknown = self.rows.len() - met - missed;
        println!();
        println!("targets met: {met}, missed: {missed}, not measured: {unknown}");
        if !self.notes.is_empty() {
            println!();
            for n in &self.notes {
                println!("- {n}");
            }
        }
    }
}

/// `value` in a human unit of time.
pub fn time(seconds: f64) -> String {
    if seconds >= 1.0 {
        format!("{seconds:.2} s")
    } else if seconds >= 1e-3 {
        format!("{:.2} ms", seconds * 1e3)
    } else {
        format!("{:.2} µs", seconds * 1e6)
    }
}

/// `a / b` as "N.NN×".
pub fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 {
        format!("{:.2}×", a / b)
    } else {
        "n/a".to_owned()
    }
}

/// Whether `ok` holds, as [`Met`].
pub fn met(ok: bool) -> Met {
    if ok { Met::Yes } else { Met::No }
}

/// `v` rounded, with thousands separators: 12,345.
pub fn thousands(v: f64) -> String {
    let s = format!("{:.0}", v.max(0.0));
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}
