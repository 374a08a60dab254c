//! `wasmkeep-shim bucket check URL`, run as the binary: its exit codes over
//! stores that hold the conditions, a URL it cannot open, and (when the test
//! command's moto server is named) a real S3 server signed and unsigned.

use std::process::Command;

fn check(url: &str, env: &[(&str, &str)]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_wasmkeep-shim"))
        .args(["bucket", "check", url])
        .envs(env.iter().copied())
        .output()
        .expect("run wasmkeep-shim");
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn stores_with_conditional_writes_pass() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file_url = format!("file://{}", dir.path().display());
    for url in ["memory://", file_url.as_str()] {
        let (code, out) = check(url, &[]);
        assert_eq!(code, Some(0), "{url}: {out}");
        assert_eq!(
            out.lines().filter(|l| l.starts_with("ok ")).count(),
            3,
            "{url}: three probes: {out}"
        );
    }
    assert_eq!(
        std::fs::read_dir(dir.path().join("wasmkeep-bucket-check"))
            .map(|d| d
                .flat_map(|e| std::fs::read_dir(e.expect("entry").path()).expect("dir"))
                .count())
            .unwrap_or(0),
        0,
        "the probe removes what it wrote"
    );
}

#[test]
fn a_url_that_does_not_open_exits_2() {
    for url in ["ftp://host/x", "not a url", "file://elsewhere/dir"] {
        assert_eq!(check(url, &[]).0, Some(2), "{url}");
    }
}

/// With the test command's moto server (`WASMKEEP_TEST_S3` and the AWS_*
/// exports of scripts/s3-server.sh): signed, it passes; unsigned, moto
/// answers 403 instead of 412, which the check reports as a failure (exit 2),
/// never as passing.
#[test]
fn an_s3_server_passes_signed_and_is_not_trusted_unsigned() {
    let Ok(url) = std::env::var("WASMKEEP_TEST_S3") else {
        eprintln!("WASMKEEP_TEST_S3 is not set: skipped (scripts/s3-server.sh starts a server)");
        return;
    };
    let (code, out) = check(&url, &[]);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = check(&url, &[("AWS_SKIP_SIGNATURE", "true")]);
    assert_ne!(code, Some(0), "unsigned requests must not pass: {out}");
}
