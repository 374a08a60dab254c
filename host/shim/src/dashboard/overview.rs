//! The actors list as the page shows it: every actor the host knows, of
//! every app, with its status, alarm, open sockets and last event.

use super::activity::Activity;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use wasmkeep_host::Runtime;

/// Every actor by its id (`tenant/app:class/name`), as JSON rows.
/// Blocking: it lists the data directory.
pub(crate) fn actor_rows(rt: &Runtime, activity: &Activity) -> BTreeMap<String, Value> {
    let last = activity.snapshot();
    rt.actors()
        .into_iter()
        .map(|a| {
            let id = a.key.to_string();
            let sockets = rt.sockets_of(&a.key).len();
            let row = json!({
                "id": id,
                "app": a.key.app,
                "class": a.key.class,
                "name": a.key.name,
                "status": a.status,
                "alarm": a.alarm,
                "sockets": sockets,
                "last": last.get(&a.key),
            });
            (id, row)
        })
        .collect()
}

/// What changed from `before` to `after`: rows new or different, and ids gone.
pub(crate) fn diff(before: &BTreeMap<String, Value>, after: &BTreeMap<String, Value>) -> (Vec<Value>, Vec<String>) {
    let upsert = after
        .iter()
        .filter(|(id, row)| before.get(*id) != Some(row))
        .map(|(_, row)| row.clone())
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

    #[test]
    fn diff_names_new_changed_and_gone_rows() {
        let before: BTreeMap<String, Value> = [("a".into(), json!(1)), ("b".into(), json!(2))].into();
        let after: BTreeMap<String, Value> = [("b".into(), json!(3)), ("c".into(), json!(4))].into();
        let (upsert, gone) = diff(&before, &after);
        assert_eq!(upsert, vec![json!(3), json!(4)]);
        assert_eq!(gone, vec!["a".to_owned()]);
    }
}
