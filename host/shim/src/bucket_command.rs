//! `wasmkeep-shim bucket check URL`: prints the store's answers to the three
//! probes of `bucket_probe` (docs/adr/027).

use std::process::ExitCode;
use std::sync::Arc;
use wasmkeep_shim::bucket_probe::{ProbeOutcome, probe};
use wasmkeep_shim::bucket_url::{BUCKET_URL_FORMS, open_bucket};
use wasmkeep_shim::clock::SystemClock;

#[derive(clap::Args)]
pub(crate) struct BucketCheckArgs {
    /// The bucket: s3://BUCKET[/PREFIX], az://CONTAINER[/PREFIX],
    /// gs://BUCKET[/PREFIX], memory:// or file:///DIR. Credentials and
    /// endpoints come from the usual environment variables (AWS_*, AZURE_*,
    /// GOOGLE_*; e.g. AWS_ENDPOINT_URL and AWS_ALLOW_HTTP=true for a local
    /// server).
    pub(crate) url: String,
}

/// Exit 0 when the store refused all three writes, 1 when it accepted one,
/// 2 when it failed or the URL did not open.
pub(crate) fn bucket_check(args: &BucketCheckArgs) -> ExitCode {
    let bucket = match open_bucket(&args.url, Arc::new(SystemClock)) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let report = probe(bucket.as_ref());
    print!("{report}");
    if report.passed() {
        println!("{}: conditional writes hold", args.url);
        return ExitCode::SUCCESS;
    }
    let accepted = report.checks().iter().any(|(_, o)| **o == ProbeOutcome::Accepted);
    if accepted {
        println!(
            "{}: the store does not honour the conditions a cluster needs ({BUCKET_URL_FORMS} on a store with If-None-Match and If-Match)",
            args.url
        );
        ExitCode::FAILURE
    } else {
        ExitCode::from(2)
    }
}
