//! The actors list as the page shows it: every actor the host knows, of
//! every app, with its status, alarm, open sockets and last event.

use super::activity::{Activity, LastEvent};
use serde::Serialize;
use std::collections::BTreeMap;
use wasmkeep_host::{ActorStatus, Runtime};

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
}

/// Every actor by its id (`tenant/app:class/name`).
/// Blocking: it lists the data directory.
pub(crate) fn actor_rows(rt: &Runtime, activity: &Activity) -> BTreeMap<String, ActorRow> {
    let mut last = activity.snapshot();
    rt.actors()
        .into_iter()
        .map(|a| {
            let id = a.key.to_string();
            let row = ActorRow {
                id: id.clone(),
                sockets: rt.sockets_of(&a.key).len(),
                last: last.remove(&a.key),
                app: a.key.app,
                class: a.key.class,
                name: a.key.name,
                status: a.status,
                alarm: a.alarm,
            };
            (id, row)
        })
        .collect()
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
    rt.metrics()
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
