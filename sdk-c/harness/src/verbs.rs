//! Which `wkh_` functions provide each verb every language's harness has
//! (`wasmkeep_host_testing::verbs`): an exhaustive match, so a new verb does
//! not compile here until it is bound, and each path below is compiled, so a
//! renamed function breaks the build rather than a text check. (The header,
//! `wasmkeep_harness.h`, is generated from these functions by cbindgen.)

use crate::*;
use wasmkeep_host_testing::bound;
use wasmkeep_host_testing::verbs::{Binding, Verb};

/// The C functions that provide `verb`.
pub fn binding(verb: Verb) -> Binding {
    match verb {
        Verb::Request => Binding::by(&[bound!(wkh_request), bound!(wkh_response_header)]),
        Verb::Call => Binding::by(&[bound!(wkh_call)]),
        Verb::Sockets => Binding::by(&[
            bound!(wkh_socket_open),
            bound!(wkh_socket_send_text),
            bound!(wkh_socket_send_binary),
            bound!(wkh_socket_close),
            bound!(wkh_socket_take),
        ]),
        Verb::VirtualClock => Binding::by(&[bound!(wkh_now), bound!(wkh_advance_clock)]),
        Verb::Alarms => Binding::by(&[bound!(wkh_run_due_alarms)]),
        Verb::AdvanceRunningDue => Binding::by(&[bound!(wkh_advance_clock_running_due)]),
        Verb::Faults => Binding::by(&[bound!(wkh_arm_fault), bound!(wkh_clear_faults)]),
        Verb::AlarmOfOneActor => Binding::by(&[bound!(wkh_run_alarm)]),
        Verb::FaultsOnANode => Binding::by(&[bound!(wkh_arm_fault_on)]),
        Verb::Tables => Binding::by(&[bound!(wkh_table_read)]),
        Verb::Logs => Binding::by(&[bound!(wkh_logs_json)]),
        Verb::Hibernate => Binding::by(&[bound!(wkh_hibernate_all)]),
        Verb::Restart => Binding::by(&[bound!(wkh_restart)]),
        Verb::OperatorDelete => Binding::by(&[bound!(wkh_operator_delete)]),
        Verb::Reset => Binding::by(&[bound!(wkh_reset)]),
        Verb::Cluster => Binding::by(&[bound!(wkh_host_new), bound!(wkh_request_on), bound!(wkh_cut_off)]),
        Verb::ClusterOperatorDelete => Binding::by(&[bound!(wkh_request_operator_delete)]),
        Verb::IdleExpiry => Binding::by(&[bound!(wkh_set_expire_after_idle), bound!(wkh_run_expiry_passes)]),
        Verb::AppDelete => Binding::by(&[bound!(wkh_delete_app)]),
        Verb::SeededChaos => Binding::by(&[
            bound!(wkh_run_chaos),
            bound!(wkh_run_chaos_seeds),
            bound!(wkh_chaos_start),
            bound!(wkh_chaos_end),
        ]),
        Verb::DeletionStatus => Binding::by(&[bound!(wkh_deletion_status)]),
        // The body of wkh_run_chaos is given its seed as an argument.
        Verb::ChaosSeed => Binding::by(&[bound!(wkh_run_chaos)]),
        Verb::HostRestart => Binding::by(&[bound!(wkh_restart_host)]),
        Verb::History => Binding::by(&[bound!(wkh_history), bound!(wkh_restore), bound!(wkh_restored_free)]),
    }
}
