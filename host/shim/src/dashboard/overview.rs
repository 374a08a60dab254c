//! The actors list as the page shows it: every actor the host knows, of
//! every app, with its status, alarm, open sockets and last event.

use serde::Serialize;
use std::collections::BTreeMap;
use wasmkeep_host::{ActorStatus, LastEvent, Runtime};

/// One actor as the list shows it. A struct rather than a JSON map: 10,000
/// of them are built, compared and written twice a second.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ActorRow {
    pub id: String,
    pub app: String,
    pub class: String,
    pub name: String,
    pub status: ActorStatus,
    pub alarm: Option<u64>,
    pub sockets: usize,
    pub last: Option<LastEvent>,
    /// In a cluster, the node that has it resident (holds it): this one, or
    /// the node of another process the bucket's record named when this node
    /// last sent it an event; none on a single node.
    pub holder: Option<String>,
}

/// Every actor by its id (`tenant/app:class/name`): of this node, or of
/// every node of its cluster when `cluster` names them (one process serves
/// them all), with the node that holds each. Blocking: it lists the data
/// directories.
pub(crate) fn actor_rows(rt: &Runtime, cluster: &[Runtime]) -> BTreeMap<String, ActorRow> {
    let nodes: Vec<&Runtime> = if cluster.is_empty() {
        vec![rt]
    } else {
        cluster.iter().collect()
    };
    let mut rows: BTreeMap<String, ActorRow> = BTreeMap::new();
    for node in nodes {
        for a in node.admin().actors_listing() {
            let id = a.key.to_string();
            let sockets = node.admin().sockets_of(&a.key).len();
            let held = a.status == ActorStatus::Resident && a.held_elsewhere.is_none();
            let holder = if held {
                node.node_id().map(str::to_owned)
            } else {
                a.held_elsewhere.clone()
            };
            if let Some(row) = rows.get_mut(&id) {
                row.sockets += sockets;
                row.alarm = row.alarm.or(a.alarm);
                // Each node knows the events it ran: the newest is the actor's last.
                if let Some(e) = a.last_event
                    && row.last.is_none_or(|r| e.is_newer_than(&r))
                {
                    row.last = Some(e);
                }
                if held {
                    row.status = ActorStatus::Resident;
                    row.holder = holder;
                } else if row.status != ActorStatus::Resident && a.status == ActorStatus::Deleted {
                    row.status = ActorStatus::Deleted;
                }
                continue;
            }
            let row = ActorRow {
                id: id.clone(),
                sockets,
                last: a.last_event,
                holder,
                app: a.key.app,
                class: a.key.class,
                name: a.key.name,
                status: a.status,
                alarm: a.alarm,
            };
            rows.insert(id, row);
        }
    }
    rows
}

/// What changed from `before` to `after`: rows new or different, and ids gone.
pub(crate) fn diff<'a, T: PartialEq>(
    before: &BTreeMap<String, T>,
    after: &'a BTreeMap<String, T>,
) -> (Vec<&'a T>, Vec<String>) {
    let upsert = after
        .iter()
        .filter(|(id, row)| before.get(*id) != Some(*row))
        .map(|(_, row)| row)
        .collect();
    let gone = before.keys().filter(|id| !after.contains_key(*id)).cloned().collect();
    (upsert, gone)
}

/// The counters of `/metrics` as `{"name{labels}": value}`.
pub(crate) fn counters(rt: &Runtime) -> BTreeMap<String, u64> {
    rt.admin()
        .metrics()
        .render()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (name, v) = l.rsplit_once(' ')?;
            Some((name.to_owned(), v.parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn diff_names_new_changed_and_gone_rows() {
        let before: BTreeMap<String, Value> = [("a".into(), json!(1)), ("b".into(), json!(2))].into();
        let after: BTreeMap<String, Value> = [("b".into(), json!(3)), ("c".into(), json!(4))].into();
        let (upsert, gone) = diff(&before, &after);
        assert_eq!(upsert, vec![&json!(3), &json!(4)]);
        assert_eq!(gone, vec!["a".to_owned()]);
    }
}
