//! Which function of this harness provides each verb every language's
//! harness has (`wasmkeep_host_testing::verbs`): an exhaustive match, so a
//! new verb does not compile here until it is bound, and each path below is
//! compiled, so a renamed method breaks the build rather than a text check.

use crate::chaos::run_chaos;
use crate::harness::{ActorTest, Builder};
use wasmkeep_host_testing::bound;
use wasmkeep_host_testing::verbs::{Binding, Verb};

/// The functions of the Rust harness that provide `verb`.
pub fn binding(verb: Verb) -> Binding {
    match verb {
        Verb::Request => Binding::by(&[
            bound!(ActorTest::request, |t: &ActorTest| t.request("a", "GET", "/", "")),
            bound!(ActorTest::get),
        ]),
        Verb::Call => Binding::by(&[bound!(ActorTest::call, |t: &ActorTest| t.call("a", ""))]),
        Verb::Sockets => Binding::by(&[
            bound!(ActorTest::open_socket),
            bound!(ActorTest::socket_send_text),
            bound!(ActorTest::socket_take),
        ]),
        Verb::VirtualClock => Binding::by(&[bound!(ActorTest::now_ms), bound!(ActorTest::advance_clock)]),
        Verb::Alarms => Binding::by(&[bound!(ActorTest::run_due_alarms)]),
        Verb::AdvanceRunningDue => Binding::by(&[bound!(ActorTest::advance_clock_running_due)]),
        Verb::Faults => Binding::by(&[bound!(ActorTest::arm_fault)]),
        Verb::AlarmOfOneActor => Binding::by(&[bound!(ActorTest::run_alarm), bound!(ActorTest::run_alarm_on)]),
        Verb::FaultsOnANode => Binding::by(&[bound!(ActorTest::arm_fault_on)]),
        Verb::Tables => Binding::by(&[bound!(ActorTest::tables)]),
        Verb::Logs => Binding::by(&[bound!(ActorTest::logs_of)]),
        Verb::Hibernate => Binding::by(&[bound!(ActorTest::hibernate_all)]),
        Verb::Restart => Binding::by(&[bound!(ActorTest::restart)]),
        Verb::OperatorDelete => Binding::by(&[bound!(ActorTest::operator_delete)]),
        Verb::Reset => Binding::by(&[bound!(ActorTest::reset)]),
        Verb::Cluster => Binding::by(&[
            bound!(Builder::nodes),
            bound!(ActorTest::request_on, |t: &ActorTest| t
                .request_on(1, "a", "GET", "/", "")),
            bound!(ActorTest::cut_off),
        ]),
        Verb::ClusterOperatorDelete => Binding::by(&[bound!(ActorTest::request_operator_delete)]),
        Verb::IdleExpiry => Binding::by(&[
            bound!(ActorTest::expire_after_idle),
            bound!(ActorTest::run_expiry_passes),
        ]),
        Verb::AppDelete => Binding::by(&[bound!(ActorTest::delete_app)]),
        Verb::SeededChaos => Binding::by(&[bound!(run_chaos, |b: &Builder| run_chaos(b, [1], |_| {}))]),
        Verb::DeletionStatus => Binding::by(&[bound!(ActorTest::deletion_status)]),
        Verb::ChaosSeed => Binding::by(&[bound!(ActorTest::chaos_seed)]),
        Verb::HostRestart => Binding::by(&[bound!(ActorTest::restart_host)]),
        Verb::History => Binding::by(&[
            bound!(Builder::history),
            bound!(ActorTest::history),
            bound!(ActorTest::try_history),
            bound!(ActorTest::restore),
            bound!(ActorTest::try_restore),
        ]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rust_harness_binds_every_verb() {
        for verb in Verb::ALL {
            assert!(
                matches!(binding(verb), Binding::Bound(_)),
                "{} is not bound",
                verb.name()
            );
        }
    }
}
