//! Which method of the native host provides each verb every language's
//! harness has (`wasmkeep_host_testing::verbs`): an exhaustive match, so a
//! new verb does not compile here until it is bound, and each path below is
//! compiled, so a renamed method breaks the build rather than a text check.
//! (`testing/src/` wraps these in the documented API; xtask's parity check
//! reads its declarations.)

use crate::NativeHost;
use wasmkeep_host_testing::bound;
use wasmkeep_host_testing::verbs::{Binding, Verb};

/// The native methods that provide `verb`.
pub fn binding(verb: Verb) -> Binding {
    match verb {
        Verb::Request => Binding::by(&[bound!(NativeHost::request)]),
        Verb::Call => Binding::by(&[bound!(NativeHost::call)]),
        Verb::Sockets => Binding::by(&[
            bound!(NativeHost::open_socket),
            bound!(NativeHost::socket_send),
            bound!(NativeHost::socket_close),
            bound!(NativeHost::socket_take),
        ]),
        Verb::VirtualClock => Binding::by(&[bound!(NativeHost::now), bound!(NativeHost::advance_clock)]),
        Verb::Alarms => Binding::by(&[bound!(NativeHost::run_due_alarms)]),
        Verb::AdvanceRunningDue => Binding::by(&[bound!(NativeHost::advance_clock_running_due)]),
        Verb::Faults => Binding::by(&[bound!(NativeHost::arm_fault), bound!(NativeHost::clear_faults)]),
        Verb::AlarmOfOneActor => Binding::by(&[bound!(NativeHost::run_alarm), bound!(NativeHost::run_alarm_on)]),
        Verb::FaultsOnANode => Binding::by(&[bound!(NativeHost::arm_fault)]),
        Verb::Tables => Binding::by(&[bound!(NativeHost::tables)]),
        Verb::Logs => Binding::by(&[bound!(NativeHost::logs), bound!(NativeHost::logs_of)]),
        Verb::Hibernate => Binding::by(&[bound!(NativeHost::hibernate_all)]),
        Verb::Restart => Binding::by(&[bound!(NativeHost::restart)]),
        Verb::OperatorDelete => Binding::by(&[bound!(NativeHost::delete_actor)]),
        Verb::Reset => Binding::by(&[bound!(NativeHost::reset)]),
        Verb::Cluster => Binding::by(&[
            bound!(NativeHost::new),
            bound!(NativeHost::node_count),
            bound!(NativeHost::cut_off),
        ]),
        Verb::ClusterOperatorDelete => Binding::by(&[bound!(NativeHost::request_operator_delete)]),
        Verb::IdleExpiry => Binding::by(&[
            bound!(NativeHost::set_expire_after_idle),
            bound!(NativeHost::run_expiry_passes),
        ]),
        Verb::AppDelete => Binding::by(&[bound!(NativeHost::delete_app)]),
        Verb::SeededChaos => Binding::by(&[
            bound!(NativeHost::run_chaos),
            bound!(NativeHost::start_chaos),
            bound!(NativeHost::end_chaos),
        ]),
        Verb::DeletionStatus => Binding::by(&[bound!(NativeHost::deletion_status)]),
        // The chaos loop hands the body its seed.
        Verb::ChaosSeed => Binding::by(&[bound!(NativeHost::run_chaos)]),
        Verb::HostRestart => Binding::by(&[bound!(NativeHost::restart_host)]),
        Verb::History => Binding::by(&[
            bound!(NativeHost::new),
            bound!(NativeHost::history),
            bound!(NativeHost::restore),
        ]),
    }
}
