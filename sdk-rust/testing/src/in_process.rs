//! The in-process driver (feature `in-process`): the host compiled into the
//! test binary, as the workspace's own tests run it, with the whole
//! [`TestHost`] reachable through [`ActorTest::host`](crate::ActorTest::host),
//! and the testing crate's chaos loop run on it.

use crate::chaos;
use crate::driver::{HarnessError, HostDriver, HostSetup, Verb};
use crate::harness::ActorTest;
use crate::types::{
    Access, ActorKey, AdminDeleted, CallFailure, ChaosFailure, DeletionStatus, HistoryPosition, HttpResponse, LogLine,
    Outbound, RestoreTo, Restored, SocketMessage,
};
use std::path::Path;
use std::time::Duration;
use wasmkeep_host_testing::{ChaosRunError, HasTestHost, TestHost, TestHostError, TestHostOptions};

/// A host compiled in.
pub(crate) struct InProcessHost {
    host: TestHost,
}

impl From<TestHostError> for HarnessError {
    fn from(e: TestHostError) -> Self {
        Self {
            message: e.to_string(),
            kind: Some(e.kind().as_str().to_owned()),
        }
    }
}

fn key_of(key: &ActorKey) -> wasmkeep_host::ActorKey {
    wasmkeep_host::ActorKey::new(&key.app, &key.class, &key.name)
}

/// The same address as the host's own type, for [`ActorTest::host`](crate::ActorTest::host).
impl From<ActorKey> for wasmkeep_host::ActorKey {
    fn from(key: ActorKey) -> Self {
        Self::new(key.app, key.class, key.name)
    }
}

impl InProcessHost {
    /// Starts a host.
    ///
    /// # Errors
    /// The host cannot start.
    pub(crate) fn start(setup: &HostSetup) -> Verb<Self> {
        let host = TestHost::new(TestHostOptions {
            nodes: setup.nodes,
            event_timeout: setup.event_timeout,
            history: setup.history,
            ..TestHostOptions::default()
        })?;
        Ok(Self { host })
    }
}

impl HostDriver for InProcessHost {
    fn add_class(&self, app: &str, class: &str, component: &Path, access: Access) -> Verb<()> {
        let access = match access {
            Access::Open => wasmkeep_host::Access::Open,
            Access::Existing => wasmkeep_host::Access::Existing,
            Access::Internal => wasmkeep_host::Access::Internal,
        };
        let spec = wasmkeep_host::ClassSpec {
            name: class.to_owned(),
            component: component.to_path_buf(),
            access,
        };
        Ok(self.host.add_app(app, &[spec])?)
    }

    fn request(
        &self,
        key: &ActorKey,
        method: &str,
        path: &str,
        body: &[u8],
        node: Option<usize>,
    ) -> Verb<HttpResponse> {
        let req = wasmkeep_host::HttpRequest::new(method, path, body.to_vec());
        // Worded as the C library words a refused request (the prebuilt driver's).
        let answer = self.host.request(&key_of(key), req, node).map_err(|e| {
            let on = node.map(|n| format!(" on node {n}")).unwrap_or_default();
            HarnessError {
                message: format!("{method} {path} to {key}{on}: {e}"),
                kind: Some(e.kind().as_str().to_owned()),
            }
        })?;
        if let Some(why) = answer.explanation {
            eprint!("{why}");
        }
        let r = answer.response;
        Ok(HttpResponse {
            status: r.status,
            headers: r.headers,
            body: r.body,
        })
    }

    fn call(&self, key: &ActorKey, payload: &[u8]) -> Verb<Result<Vec<u8>, CallFailure>> {
        use wasmkeep_host::CallFailure as F;
        Ok(self.host.call(&key_of(key), payload.to_vec())?.map_err(|f| match f {
            F::Refused { message, .. } => CallFailure::Refused(message),
            F::Rejected(message) => CallFailure::Rejected(message),
            F::Failed { message, .. } => CallFailure::Failed(message),
        }))
    }

    fn settle(&self, key: &ActorKey) -> Verb<()> {
        Ok(self.host.settle(&key_of(key))?)
    }

    fn now_ms(&self) -> Verb<u64> {
        Ok(self.host.now_ms()?)
    }

    fn advance_clock(&self, ms: u64) -> Verb<u64> {
        Ok(self.host.advance_clock(ms)?)
    }

    fn advance_clock_running_due(&self, ms: u64) -> Verb<(u64, usize)> {
        let advanced = self.host.advance_clock_running_due(ms)?;
        Ok((advanced.now, advanced.alarms_ran))
    }

    fn run_due_alarms(&self) -> Verb<usize> {
        Ok(self.host.run_due_alarms()?)
    }

    fn run_alarm(&self, node: Option<usize>, key: &ActorKey) -> Verb<bool> {
        Ok(match node {
            None => self.host.run_alarm(&key_of(key))?,
            Some(n) => self.host.run_alarm_on(n, &key_of(key))?,
        })
    }

    fn tables(&self, key: &ActorKey) -> Verb<serde_json::Value> {
        Ok(self.host.tables_json(&key_of(key))?)
    }

    fn exists(&self, key: &ActorKey) -> Verb<bool> {
        Ok(self.host.exists(&key_of(key))?)
    }

    fn logs_of(&self, key: &ActorKey) -> Verb<Vec<LogLine>> {
        Ok(self
            .host
            .logs_of(&key_of(key))?
            .into_iter()
            .map(|l| LogLine {
                at: l.at,
                actor: l.actor,
                level: l.level.to_owned(),
                message: l.message,
            })
            .collect())
    }

    fn arm_fault(&self, node: Option<usize>, name: &str, count: u32) -> Verb<()> {
        match node {
            None => self.host.arm_fault(name, count)?,
            Some(n) => self.host.arm_fault_on(n, name, count)?,
        }
        Ok(())
    }

    fn restart(&self, key: &ActorKey) -> Verb<()> {
        Ok(self.host.restart(&key_of(key))?)
    }

    fn operator_delete(&self, key: &ActorKey) -> Verb<AdminDeleted> {
        Ok(match self.host.delete_actor(&key_of(key))? {
            wasmkeep_host::AdminDeleted::Deleted => AdminDeleted::Deleted,
            wasmkeep_host::AdminDeleted::RemovedUnopenable => AdminDeleted::RemovedUnopenable,
            wasmkeep_host::AdminDeleted::Absent => AdminDeleted::Absent,
        })
    }

    fn deletion_status(&self, key: &ActorKey) -> Verb<DeletionStatus> {
        use wasmkeep_host::deletion::DeletionStatus as S;
        Ok(match self.host.deletion_status(&key_of(key))? {
            S::Deleted { at_ms, how } => DeletionStatus::Deleted { at_ms, how },
            S::NotDeleted => DeletionStatus::NotDeleted,
            S::Unknown { reason } => DeletionStatus::Unknown { reason },
        })
    }

    fn reset(&mut self) -> Verb<()> {
        Ok(self.host.reset()?)
    }

    fn restart_host(&mut self) -> Verb<()> {
        Ok(self.host.restart_host()?)
    }

    fn history(&self, key: &ActorKey) -> Verb<Vec<HistoryPosition>> {
        // Worded as the C library words it (the prebuilt driver's).
        let positions = self.host.history(&key_of(key)).map_err(|e| HarnessError {
            message: format!("the history of {key}: {e}"),
            kind: Some(e.kind().as_str().to_owned()),
        })?;
        Ok(positions
            .into_iter()
            .map(|p| HistoryPosition {
                bookmark: p.bookmark,
                kind: p.kind,
                at: p.at,
                head: p.head,
            })
            .collect())
    }

    fn restore(&self, key: &ActorKey, to: &RestoreTo) -> Verb<Restored> {
        use wasmkeep_host_testing::RestoreTo as T;
        let to = match to {
            RestoreTo::Bookmark(b) => T::Bookmark(b.clone()),
            RestoreTo::Time(ms) => T::Time(*ms),
        };
        // Worded as the C library words a refused restore (the prebuilt driver's).
        let done = self.host.restore(&key_of(key), &to).map_err(|e| HarnessError {
            message: format!("restoring {key}: {e}"),
            kind: Some(e.kind().as_str().to_owned()),
        })?;
        Ok(Restored {
            from: done.from,
            at: done.at,
            undo: done.undo,
        })
    }

    fn hibernate_all(&self) -> Verb<()> {
        Ok(self.host.hibernate_all()?)
    }

    fn open_socket(&self, key: &ActorKey, path: &str) -> Verb<u64> {
        Ok(self.host.open_socket(&key_of(key), path)?)
    }

    fn socket_send_text(&self, id: u64, text: &str) -> Verb<()> {
        Ok(self
            .host
            .socket_send(id, wasmkeep_host::SocketMessage::Text(text.into()))?)
    }

    fn socket_take(&self, id: u64) -> Verb<Vec<Outbound>> {
        use wasmkeep_host::{Outbound as O, SocketMessage as M};
        Ok(self
            .host
            .socket_take(id)?
            .into_iter()
            .map(|o| match o {
                O::Message(M::Text(t)) => Outbound::Message(SocketMessage::Text(t)),
                O::Message(M::Binary(b)) => Outbound::Message(SocketMessage::Binary(b)),
                O::Close { code, reason } => Outbound::Close { code, reason },
            })
            .collect())
    }

    fn cut_off(&self, n: usize) -> Verb<()> {
        Ok(self.host.cut_off(n)?)
    }

    fn request_operator_delete(&self, key: &ActorKey) -> Verb<String> {
        Ok(self.host.request_operator_delete(&key_of(key))?)
    }

    fn set_expire_after_idle(&self, app: &str, class: &str, limit: Option<Duration>) -> Verb<()> {
        Ok(self.host.set_expire_after_idle(app, class, limit)?)
    }

    fn run_expiry_passes(&self) -> Verb<usize> {
        Ok(self.host.run_expiry_passes()?)
    }

    fn delete_app(&self, app: &str) -> Verb<()> {
        Ok(self.host.delete_app(app)?)
    }

    fn start_chaos(&self, seed: u64) -> Verb<()> {
        self.host.start_chaos(seed);
        Ok(())
    }

    fn end_chaos(&self) -> Verb<Vec<String>> {
        Ok(self.host.end_chaos().iter().map(ToString::to_string).collect())
    }

    fn test_host(&self) -> Option<&TestHost> {
        Some(&self.host)
    }

    fn test_host_mut(&mut self) -> Option<&mut TestHost> {
        Some(&mut self.host)
    }
}

/// The chaos loop's target: the test, whose host the loop borrows for its
/// own steps (the reset, starting and ending the schedule) and lets go of
/// before it calls the body with the whole test.
struct Lent<'a>(&'a mut ActorTest);

impl HasTestHost for Lent<'_> {
    fn test_host(&mut self) -> &mut TestHost {
        self.0
            .driver_mut()
            .test_host_mut()
            .expect("the in-process chaos loop runs only on the in-process driver (run_chaos chose it)")
    }
}

/// [`run_chaos`](crate::run_chaos) on the host compiled in: the testing
/// crate's `run_chaos`, whose body is the closure's run
/// ([`chaos::run_body`]). A failing seed's explanations go to stderr
/// through `eprint!`, which libtest captures.
pub(crate) fn run_chaos(
    t: &mut ActorTest,
    seeds: Vec<u64>,
    body: &dyn Fn(&ActorTest),
) -> anyhow::Result<Result<usize, ChaosFailure>> {
    let outcome =
        wasmkeep_host_testing::run_chaos(&mut Lent(t), seeds, |lent, seed| chaos::run_body(lent.0, seed, body));
    match outcome {
        Ok(ran) => Ok(Ok(ran)),
        Err(ChaosRunError::Failed(f)) => {
            for why in &f.explanations {
                eprint!("{why}");
            }
            Ok(Err(ChaosFailure {
                seed: f.seed,
                schedule: f.schedule.iter().map(ToString::to_string).collect(),
                report: f.report(),
                message: f.message,
                passed: f.passed,
            }))
        }
        Err(ChaosRunError::Reset { seed, source }) => {
            Err(anyhow::Error::new(HarnessError::from(source))
                .context(format!("resetting the host before seed {seed}")))
        }
        Err(ChaosRunError::BadSeedVariable(message)) => Err(anyhow::anyhow!(message)),
    }
}
