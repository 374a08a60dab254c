//! Reading a served node's metrics.

use crate::common::http;

/// The value of a metric line `name{label}` (0 when absent).
pub fn metric(base: &str, line_start: &str) -> u64 {
    let (_, text) = http("GET", &format!("{base}/metrics"));
    text.lines()
        .find(|l| l.starts_with(line_start))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}
