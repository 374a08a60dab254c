//! Cluster: the control pass, once a second: apps with a tombstone are
//! stopped, the others' serving marks written, and the collecting node's
//! purge of deleted generations run.

use super::app_stop::stop_app;
use super::operator::operator_pass;
use crate::node::Host;
use std::sync::Arc;

/// Cluster: one control pass: apps with a tombstone are stopped, the
/// others' heartbeats written, operator delete requests queued.
pub(crate) fn control_pass(host: &Arc<Host>) {
    let Some(c) = host.cluster() else { return };
    if host.is_stopping() || !c.cluster.is_live(&c.node) {
        return;
    }
    let apps = app_names(host);
    for app in apps {
        match crate::app_delete::read_tombstone(c.bucket.as_ref(), &app) {
            Ok(Some(_)) => stop_app(host, &app),
            Ok(None) => mark_serving(host, c, &app),
            Err(e) => tracing::warn!(app = %app, "reading the tombstone: {e}"),
        }
    }
    operator_pass(host);
    purge_pass(host);
}

/// Writes this node's mark that it serves `app` (ADR 077): once per lease
/// epoch for a node process, whose lease says it is live; every pass for
/// nodes of one process, whose mark is a heartbeat.
fn mark_serving(host: &Host, c: &crate::cluster::ClusterNode, app: &str) {
    let epoch = c.cluster.epoch(&c.node);
    let written = host.pass_book().mark_serving_once(app, epoch, || {
        crate::app_delete::write_serving_mark(c.records_bucket().as_ref(), app, &c.node, epoch)
    });
    match written {
        Ok(()) => {}
        // Written again at the next pass.
        Err(e) => tracing::warn!(app = %app, "writing this node's mark that it serves the app: {e}"),
    }
}

/// The apps this node serves.
fn app_names(host: &Host) -> Vec<String> {
    host.apps().names()
}

/// The leading node finishes purges cut short (ADR 031): every app's purge
/// marks are listed, and what lies before each actor's newest reset erased.
fn purge_pass(host: &Arc<Host>) {
    let Some(c) = host.cluster() else { return };
    if !c.cluster.leads(&c.node) {
        return;
    }
    let now = host.clock().now_ms();
    let apps = app_names(host);
    for app in apps {
        match crate::purge::pass(c.bucket.as_ref(), &app, now) {
            Ok(p) if p.failed > 0 => {
                host.metrics().inc(crate::metrics::HISTORY_COLLECT_FAILURES_TOTAL, "");
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(app = %app, "listing purges: {e}"),
        }
    }
}
