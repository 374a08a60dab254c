//! Cluster: the pass over operator delete requests (ADR 0028 §3): the
//! requests queued as jobs on the node that holds each actor, and records
//! that served their time deleted.

use super::holders::{held_by_another_process, held_here};
use crate::job::{HostJob, Job};
use crate::node::Host;
use std::sync::Arc;

/// One control pass over operator delete requests (ADR 0028 §3); see
/// [`crate::ClusterPasses::run_operator_pass`].
pub(crate) fn operator_pass(host: &Arc<Host>) -> usize {
    use crate::operator::{Listed, MAX_PER_PASS, Outcome, REQUEST_TTL_MS};
    let Some(c) = host.cluster() else { return 0 };
    // One node of the cluster lists and queues: the lowest live id (ADR 008),
    // or among node processes the control lease's holder (ADR 028). The job
    // goes to whichever node of this process holds the actor. A node process
    // holding an actor is not reached by another process's job, so every node
    // process lists too, and acts on the actors it holds (ADR 031).
    let leads = c.cluster.leads(&c.node);
    // A node process advertises where it answers; nodes of one process do not.
    let other_processes = c.cluster.address(&c.node).is_some();
    if !leads && !other_processes {
        return 0;
    }
    let now = host.clock().now_ms();
    let apps = host.apps().all();
    let mut queued = 0;
    for (name, app) in apps {
        let listed = match crate::operator::list(c.bucket.as_ref(), &name) {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(app = %name, "listing operator delete requests: {e}");
                continue;
            }
        };
        let outcomes: std::collections::HashSet<&str> = listed
            .iter()
            .filter_map(|l| match l {
                Listed::Outcome { object, .. } => Some(object.as_str()),
                Listed::Request(_) => None,
            })
            .collect();
        for l in &listed {
            match l {
                Listed::Outcome { object, t } if t + REQUEST_TTL_MS < now => {
                    delete_record(c, object);
                }
                Listed::Outcome { .. } => {}
                Listed::Request(r) if r.t + REQUEST_TTL_MS < now => {
                    delete_record(c, &r.object);
                }
                // Its outcome is written; only deleting the request failed.
                Listed::Request(r)
                    if [Outcome::Done, Outcome::Absent]
                        .iter()
                        .any(|o| outcomes.contains(r.outcome_key(*o).as_str())) =>
                {
                    delete_record(c, &r.object);
                }
                // A class this node does not serve: left to the nodes that do (or to expiry).
                Listed::Request(r) if !app.classes.contains_key(&r.key.class) => {}
                // Among node processes: the holder acts on its own; the leader
                // on actors no live node of another process holds.
                Listed::Request(r)
                    if other_processes
                        && (if leads {
                            held_by_another_process(host, &r.key)
                        } else {
                            !held_here(host, &r.key)
                        }) => {}
                Listed::Request(r) => {
                    if !host.pass_book().claim_operator_request(&r.object, MAX_PER_PASS) {
                        continue;
                    }
                    host.enqueue(&r.key, Job::new(HostJob::OperatorDelete { req: r.clone() }, Vec::new()));
                    queued += 1;
                }
            }
        }
    }
    queued
}

/// Deletes an operator request's or outcome's record that has served its
/// time; one that stays is tried again at the next pass.
fn delete_record(c: &crate::cluster::ClusterNode, object: &str) {
    if let Err(e) = c.records_bucket().delete(object) {
        tracing::warn!("operator delete: deleting {object}, which has served its time: {e}");
    }
}
