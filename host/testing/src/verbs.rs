//! The verbs every language's harness has, named once as a type, so that
//! each harness's native layer (the Rust harness, the napi addon, the pyo3
//! module, the C ABI) says in an exhaustive `match` which of its functions
//! provides each one. A verb added here does not compile in a layer until it
//! binds it (or says why not), and a binding that names a function that does
//! not exist does not compile either: the check is by type, not by text.
//!
//! Each layer's `verbs.rs` is `pub fn binding(verb: Verb) -> Binding`.
//!
//! `conformance/harness-parity/verbs.toml` describes the same verbs for the
//! parity table and the languages' public files (TypeScript, Python, C
//! headers, which no Rust compiler reads); a test holds its names to
//! [`Verb::ALL`].

/// One verb of the harnesses: what a test can ask its host to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verb {
    /// An HTTP event to an actor, waiting for its answer.
    Request,
    /// `on-call` as the host.
    Call,
    /// Open a WebSocket, send to it, close it, read what the actor sent.
    Sockets,
    /// The host's time and moving it.
    VirtualClock,
    /// Run the due alarms.
    Alarms,
    /// Move the clock and run what falls due on the way, each alarm at its time.
    AdvanceRunningDue,
    /// Arm a fault by name.
    Faults,
    /// Run one actor's alarm, through a given node of a cluster.
    AlarmOfOneActor,
    /// Arm a fault on any node of a cluster.
    FaultsOnANode,
    /// Read an actor's tables.
    Tables,
    /// What actors logged.
    Logs,
    /// Hibernate every actor.
    Hibernate,
    /// Restart one actor, as a crash and recovery.
    Restart,
    /// Delete an actor as an operator would (no guest code).
    OperatorDelete,
    /// Start over between tests, sockets included.
    Reset,
    /// N nodes, a request to a given node, cutting a node off.
    Cluster,
    /// A cluster's operator delete request.
    ClusterOperatorDelete,
    /// `expire-after-idle` on the virtual clock.
    IdleExpiry,
    /// Delete the app.
    AppDelete,
    /// Run a body under many seeded fault schedules; replay one seed.
    SeededChaos,
    /// Whether an actor was deleted, from positive evidence only.
    DeletionStatus,
    /// The chaos body knows its seed.
    ChaosSeed,
    /// Restart the whole host on the same data.
    HostRestart,
    /// An actor's history (bookmarks, times) and a restore to a bookmark or
    /// a time, undone by another.
    History,
}

impl Verb {
    /// Every verb, in the order of the parity table.
    pub const ALL: [Verb; 24] = [
        Verb::Request,
        Verb::Call,
        Verb::Sockets,
        Verb::VirtualClock,
        Verb::Alarms,
        Verb::AdvanceRunningDue,
        Verb::Faults,
        Verb::AlarmOfOneActor,
        Verb::FaultsOnANode,
        Verb::Tables,
        Verb::Logs,
        Verb::Hibernate,
        Verb::Restart,
        Verb::OperatorDelete,
        Verb::Reset,
        Verb::Cluster,
        Verb::ClusterOperatorDelete,
        Verb::IdleExpiry,
        Verb::AppDelete,
        Verb::SeededChaos,
        Verb::DeletionStatus,
        Verb::ChaosSeed,
        Verb::HostRestart,
        Verb::History,
    ];

    /// Its name in `verbs.toml` and the parity table (`alarm-of-one-actor`).
    pub fn name(self) -> &'static str {
        match self {
            Verb::Request => "request",
            Verb::Call => "call",
            Verb::Sockets => "sockets",
            Verb::VirtualClock => "virtual-clock",
            Verb::Alarms => "alarms",
            Verb::AdvanceRunningDue => "advance-running-due",
            Verb::Faults => "faults",
            Verb::AlarmOfOneActor => "alarm-of-one-actor",
            Verb::FaultsOnANode => "faults-on-a-node",
            Verb::Tables => "tables",
            Verb::Logs => "logs",
            Verb::Hibernate => "hibernate",
            Verb::Restart => "restart",
            Verb::OperatorDelete => "operator-delete",
            Verb::Reset => "reset",
            Verb::Cluster => "cluster",
            Verb::ClusterOperatorDelete => "cluster-operator-delete",
            Verb::IdleExpiry => "idle-expiry",
            Verb::AppDelete => "app-delete",
            Verb::SeededChaos => "seeded-chaos",
            Verb::DeletionStatus => "deletion-status",
            Verb::ChaosSeed => "chaos-seed",
            Verb::HostRestart => "host-restart",
            Verb::History => "history",
        }
    }
}

/// How one harness layer provides a verb: the functions that do it, named by
/// their paths (so the compiler checks they exist), or why it has none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binding {
    /// The functions, as [`bound!`](crate::bound) names them.
    Bound(Vec<&'static str>),
    /// Not bound in this layer, and why (the verb is then listed in
    /// `conformance/harness-parity/missing/<language>.toml` too).
    Missing(&'static str),
}

impl Binding {
    /// Bound by these functions (each given as [`bound!`](crate::bound)`(path::to::function)`).
    pub fn by(functions: &[&'static str]) -> Self {
        Binding::Bound(functions.to_vec())
    }
}

/// Names a function that binds a verb, as a [`Binding`]'s entry: the path
/// itself is compiled (`let _ = path;`), so a renamed or removed function is
/// a compile error in the layer that binds it, not a text that no longer
/// matches. A generic function (an `impl Into<…>` argument) cannot be named
/// without its types: give it with a closure that calls it,
/// `bound!(ActorTest::request, |t: &ActorTest| t.request("a", "GET", "/", ""))`.
#[macro_export]
macro_rules! bound {
    ($path:path) => {{
        let _ = $path;
        stringify!($path)
    }};
    ($path:path, $call:expr) => {{
        let _ = $call;
        stringify!($path)
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_verb_has_its_own_name() {
        let names: std::collections::HashSet<&str> = Verb::ALL.iter().map(|v| v.name()).collect();
        assert_eq!(names.len(), Verb::ALL.len());
    }

    #[test]
    fn a_binding_names_the_function_it_was_given() {
        fn request() {}
        fn generic(_body: impl Into<Vec<u8>>) {}
        assert_eq!(crate::bound!(request), "request");
        assert_eq!(crate::bound!(generic, || generic("")), "generic");
    }
}
