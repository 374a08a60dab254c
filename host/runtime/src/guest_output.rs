//! What the guest printed during an event, cleaned for a failure's answer:
//! the engines' own lines that say nothing about the failure are left out,
//! and QuickJS's panic line is unwrapped to the text the SDK threw. Only a
//! component built against 0.2.0 to 0.2.2 is answered this way; a newer SDK
//! reports its failure through `context.report-failure` (ADR 026), whose
//! text goes through [`for_answer`] only for its length.

/// Lines the engines print on every failure, which say nothing about it.
const OUTPUT_NOISE: &[&str] = &[
    "Redirecting call to abort() to mozalloc_abort",
    "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
    // componentize-py's runtime, after the SDK's own report.
    "panicked at runtime/src/lib.rs",
    "Python function threw an unexpected exception",
    // QuickJS's interpreter, before the value the export threw.
    "panicked at crates/runtime/src/interpreter.rs",
];

/// At most this many lines are kept whole; a longer output keeps its first
/// [`HEAD_LINES`] (where the SDKs put the message) and its last [`TAIL_LINES`].
const MAX_LINES: usize = 40;
const HEAD_LINES: usize = 30;
const TAIL_LINES: usize = 10;

/// The output for a failure's answer (see the module's documentation).
pub(crate) fn for_answer(text: &str) -> String {
    let unwrapped: Vec<String> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !OUTPUT_NOISE.iter().any(|n| l.contains(n)))
        .map(|l| quickjs_thrown(l).unwrap_or_else(|| l.to_string()))
        .collect();
    // An unwrapped value may itself be several lines (a message and its stack).
    let lines: Vec<&str> = unwrapped
        .iter()
        .flat_map(|l| l.lines())
        .filter(|l| !l.trim().is_empty())
        .collect();
    if lines.len() <= MAX_LINES {
        return lines.join("\n");
    }
    let skipped = lines.len() - HEAD_LINES - TAIL_LINES;
    format!(
        "{}\n… ({skipped} lines left out)\n{}",
        lines[..HEAD_LINES].join("\n"),
        lines[lines.len() - TAIL_LINES..].join("\n")
    )
}

/// The string a QuickJS export threw, from the line its runtime (jco's
/// componentize-qjs) panics with: `Failed to call 'onRequest':
/// Value(String(Ok("<the string, escaped as Rust's Debug does>")))`. The
/// TypeScript SDK throws its whole report there, because QuickJS has no
/// console to print it with. `None` for any other line.
fn quickjs_thrown(line: &str) -> Option<String> {
    let rest = line.strip_prefix("Failed to call '")?;
    let (_export, rest) = rest.split_once("': Value(String(Ok(\"")?;
    let escaped = rest.strip_suffix("\")))")?;
    unescape_debug(escaped)
}

/// Undoes `{:?}` of a `str`: `\"`, `\\`, `\'`, `\n`, `\r`, `\t`, `\0` and
/// `\u{…}`. `None` when the text is not such an escape (left as it was).
fn unescape_debug(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            '"' => out.push('"'),
            '\\' => out.push('\\'),
            '\'' => out.push('\''),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            '0' => out.push('\0'),
            'u' => {
                if chars.next()? != '{' {
                    return None;
                }
                let hex: String = chars.by_ref().take_while(|&c| c != '}').collect();
                out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
            }
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_value_a_quickjs_export_threw_is_unwrapped_into_its_lines() {
        let out = "thread '<unnamed>' panicked at crates/runtime/src/interpreter.rs:99:9:\n\
                   Failed to call 'onRequest': Value(String(Ok(\"Error: boom\\n    at fail (/actor.bundle.js:649:17)\\n    at \\\"q\\\" \\u{1b}x\")))\n\
                   note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        assert_eq!(
            for_answer(out),
            "Error: boom\n    at fail (/actor.bundle.js:649:17)\n    at \"q\" \u{1b}x"
        );
    }

    #[test]
    fn other_lines_and_bad_escapes_are_left_as_they_are() {
        assert_eq!(
            for_answer("TypeError: x\n    at f (a.js:1:2)"),
            "TypeError: x\n    at f (a.js:1:2)"
        );
        let odd = "Failed to call 'onRequest': Value(String(Ok(\"bad \\q escape\")))";
        assert_eq!(for_answer(odd), odd);
        let other = "Failed to call 'onRequest': Value(Object)";
        assert_eq!(for_answer(other), other);
    }

    #[test]
    fn a_long_output_keeps_its_head_and_tail() {
        let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let out = for_answer(&text);
        assert!(out.starts_with("line 0\n"), "{out}");
        assert!(out.contains("… (60 lines left out)"), "{out}");
        assert!(out.ends_with("line 99"), "{out}");
    }
}
