//! The bucket's key layout (ADR 0028, docs/adr/006-cluster-mode.md): every
//! key the host writes or lists is built here, and read back here, so the
//! layout is written once.
//!
//! ```text
//! state/<tenant>/<app>/owners/<class>/<encoded name>           ownership record
//! state/<tenant>/<app>/history/<class>/<encoded name>/<pos>.<kind>   segments, resets, snapshots
//! state/<tenant>/<app>/deletes/<class>/<encoded name>/<id>     operator delete request (+ outcomes)
//! state/<tenant>/<app>/purges/<class>/<encoded name>           a purge to finish (ADR 031)
//! apps/<tenant>/<app>/deleted                              the app's tombstone
//! apps/<tenant>/<app>/nodes/<node>                         a serving node's heartbeat
//! cluster/nodes/<node>                                     a node process's lease (epoch, address)
//! cluster/control                                          the control lease (who runs the control pass)
//! cluster/secret                                           the token node processes show each other (ADR 034)
//! alarms/<tenant>/<app>/<class>/<encoded name>/<at>        an actor's alarm, for any node to wake
//! ```

use crate::address::ActorKey;

/// `state/`: everything actors keep, all apps.
pub const STATE_ROOT: &str = "state/";

/// `state/<tenant>/<app>/`: everything the app's actors keep.
pub fn app_state(app: &str) -> String {
    format!("state/{app}/")
}

/// `apps/<tenant>/<app>/`: the app's own records (tombstone, heartbeats).
pub fn app_records(app: &str) -> String {
    format!("apps/{app}/")
}

/// `state/<tenant>/<app>/owners/<class>/<encoded name>`: the ownership record.
pub fn owner(key: &ActorKey) -> String {
    format!("{}{}", owners_of_class(&key.app, &key.class), key.encoded_name())
}

/// `state/<tenant>/<app>/owners/`: every ownership record of the app.
pub fn owners_of_app(app: &str) -> String {
    format!("state/{app}/owners/")
}

/// `state/<tenant>/<app>/owners/<class>/`: every ownership record of a class.
pub fn owners_of_class(app: &str, class: &str) -> String {
    format!("state/{app}/owners/{class}/")
}

/// The actor an ownership record under [`owners_of_class`] is for; `None`
/// for a shortened name (ADR 0028 §4: such an actor is never expired).
pub fn actor_of_owner(app: &str, class: &str, object: &str) -> Option<ActorKey> {
    let encoded = object.strip_prefix(&owners_of_class(app, class))?;
    let name = ActorKey::name_from_encoded(encoded)?;
    Some(ActorKey::new(app, class, name))
}

/// `state/<tenant>/<app>/history/<class>/<encoded name>/`: segments, resets, snapshots.
pub fn history_prefix(key: &ActorKey) -> String {
    format!("state/{}/history/{}/{}/", key.app, key.class, key.encoded_name())
}

/// `state/<tenant>/<app>/history/`: every actor's history in the app.
pub fn history_of_app(app: &str) -> String {
    format!("state/{app}/history/")
}

/// `state/<tenant>/<app>/deletes/`: operator delete requests and their outcomes.
pub fn deletes_prefix(app: &str) -> String {
    format!("state/{app}/deletes/")
}

/// `state/<tenant>/<app>/deletes/<class>/<encoded name>/<id>`: one operator delete request.
pub fn delete_request(key: &ActorKey, id: &str) -> String {
    format!("{}{}/{}/{id}", deletes_prefix(&key.app), key.class, key.encoded_name())
}

/// `state/<tenant>/<app>/purges/`: the app's purges to finish (ADR 031).
pub fn purges_of_app(app: &str) -> String {
    format!("state/{app}/purges/")
}

/// `state/<tenant>/<app>/purges/<class>/<encoded name>`: the mark a delete
/// writes before its reset, so a purge cut short is finished by a control pass.
pub fn purge_mark(key: &ActorKey) -> String {
    format!("{}{}/{}", purges_of_app(&key.app), key.class, key.encoded_name())
}

/// Whether `object` is a purge mark (of any app).
pub fn is_purge_mark(object: &str) -> bool {
    object
        .strip_prefix(STATE_ROOT)
        .and_then(|rest| rest.split('/').nth(2))
        .is_some_and(|family| family == "purges")
}

/// The history prefix a purge mark of `app` is for (its key may hold a
/// shortened name, so it is mapped key to key, not through the actor).
pub fn history_of_purge_mark(app: &str, object: &str) -> Option<String> {
    let rest = object.strip_prefix(&purges_of_app(app))?;
    let (class, name) = rest.split_once('/')?;
    (!class.is_empty() && !name.is_empty() && !name.contains('/'))
        .then(|| format!("{}{class}/{name}/", history_of_app(app)))
}

/// `apps/<tenant>/<app>/deleted`: the app's tombstone (ADR 0028 §5).
pub fn tombstone(app: &str) -> String {
    format!("apps/{app}/deleted")
}

/// `apps/<tenant>/<app>/nodes/`: the heartbeats of the nodes serving the app.
pub fn heartbeats(app: &str) -> String {
    format!("apps/{app}/nodes/")
}

/// `apps/<tenant>/<app>/nodes/<node>`: one node's heartbeat for the app.
pub fn heartbeat(app: &str, node: &str) -> String {
    format!("{}{node}", heartbeats(app))
}

/// `cluster/nodes/`: the leases of the cluster's node processes.
pub const NODE_LEASES: &str = "cluster/nodes/";

/// `cluster/nodes/<node>`: one node's lease (docs/adr/028-node-processes.md).
pub fn node_lease(node: &str) -> String {
    format!("{NODE_LEASES}{node}")
}

/// `cluster/control`: the control lease, held by the node process that runs
/// the control pass and idle expiry (outside [`NODE_LEASES`]).
pub const CONTROL_LEASE: &str = "cluster/control";

/// `cluster/secret`: the token a node process shows another when it carries
/// a call there (ADR 034): whoever reads the bucket is of the cluster.
pub const CLUSTER_SECRET: &str = "cluster/secret";

/// The node a key under [`NODE_LEASES`] is the lease of.
pub fn node_of_lease(object: &str) -> Option<&str> {
    object
        .strip_prefix(NODE_LEASES)
        .filter(|n| !n.is_empty() && !n.contains('/'))
}

/// `alarms/`: every app's alarm entries (node processes' alarm index).
pub const ALARMS_ROOT: &str = "alarms/";

/// `alarms/<tenant>/<app>/`: the app's alarm entries.
pub fn alarms_of_app(app: &str) -> String {
    format!("{ALARMS_ROOT}{app}/")
}

/// `alarms/<tenant>/<app>/<class>/<encoded name>/`: one actor's alarm entries.
pub fn alarms_of_actor(key: &ActorKey) -> String {
    format!("{}{}/{}/", alarms_of_app(&key.app), key.class, key.encoded_name())
}

/// `alarms/<tenant>/<app>/<class>/<encoded name>/<at, 16 hex digits>`: an
/// alarm entry; the time is in the key, so a listing shows every entry's time.
pub fn alarm(key: &ActorKey, at: u64) -> String {
    format!("{}{at:016x}", alarms_of_actor(key))
}

/// The time of an alarm entry's key.
pub fn alarm_time(object: &str) -> Option<u64> {
    let (prefix, at) = object.rsplit_once('/')?;
    (prefix.starts_with(ALARMS_ROOT) && at.len() == 16)
        .then(|| u64::from_str_radix(at, 16).ok())
        .flatten()
}

/// The app (`<tenant>/<app>`) a key under [`STATE_ROOT`] belongs to.
pub fn app_of_state_key(object: &str) -> Option<String> {
    let mut parts = object.strip_prefix(STATE_ROOT)?.split('/');
    let (tenant, app) = (parts.next()?, parts.next()?);
    parts.next()?;
    Some(format!("{tenant}/{app}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_read_back_to_what_built_them() {
        let k = ActorKey::new("acme/shop", "cart", "u-1");
        assert_eq!(owner(&k), format!("state/acme/shop/owners/cart/{}", k.encoded_name()));
        assert_eq!(actor_of_owner("acme/shop", "cart", &owner(&k)), Some(k.clone()));
        assert_eq!(actor_of_owner("acme/shop", "other", &owner(&k)), None);
        assert_eq!(app_of_state_key(&history_prefix(&k)).as_deref(), Some("acme/shop"));
        assert_eq!(
            app_of_state_key(&delete_request(&k, "ab")).as_deref(),
            Some("acme/shop")
        );
        assert_eq!(app_of_state_key("state/acme"), None);
        assert!(history_prefix(&k).starts_with(&history_of_app("acme/shop")));
        assert!(owner(&k).starts_with(&owners_of_app("acme/shop")));
        assert!(delete_request(&k, "ab").starts_with(&deletes_prefix("acme/shop")));
        assert_eq!(
            history_of_purge_mark("acme/shop", &purge_mark(&k)),
            Some(history_prefix(&k))
        );
        assert_eq!(history_of_purge_mark("acme/shop", &owner(&k)), None);
        assert!(is_purge_mark(&purge_mark(&k)));
        assert!(!is_purge_mark(&owner(&k)));
        assert!(!is_purge_mark(&history_prefix(&k)));
        assert!(heartbeat("acme/shop", "n1").starts_with(&app_records("acme/shop")));
        assert!(tombstone("acme/shop").starts_with(&app_records("acme/shop")));
        assert!(owner(&k).starts_with(&app_state("acme/shop")));
        assert_eq!(node_of_lease(&node_lease("n1")), Some("n1"));
        assert_eq!(alarm_time(&alarm(&k, 0x1234)), Some(0x1234));
        assert!(alarm(&k, 1).starts_with(&alarms_of_actor(&k)));
        assert!(alarms_of_actor(&k).starts_with(&alarms_of_app("acme/shop")));
        assert_eq!(alarm_time(&owner(&k)), None);
        assert_eq!(node_of_lease("cluster/nodes/"), None);
        assert_eq!(node_of_lease(CONTROL_LEASE), None, "the control lease is no node's");
        assert_eq!(
            app_of_state_key(&node_lease("n1")),
            None,
            "leases are outside every app"
        );
    }
}
