//! `wasmkeep:actor/calls`: calls to other actors of the app.

use super::HostState;
use super::R;
use crate::address::ActorKey;
use crate::bindings::calls;
use crate::bindings::types;
use crate::job::CallFailure;

impl calls::Host for HostState {
    fn call(&mut self, target: types::Address, payload: Vec<u8>) -> R<Result<Vec<u8>, calls::CallError>> {
        let mut chain = self.ev.chain.clone();
        chain.push(self.key.clone());
        let target = ActorKey::new(self.key.app.clone(), target.class, target.name);
        let wait = self.ev.deadline.map_or(self.event_timeout, |d| {
            d.saturating_duration_since(std::time::Instant::now())
        });
        Ok(self
            .node
            .call(&target, Some(self.key.clone()), payload, chain, wait)
            .map_err(|e| match e {
                CallFailure::Refused { message, .. } => calls::CallError::Refused(message),
                CallFailure::Rejected(m) => calls::CallError::Rejected(m),
                CallFailure::Failed { message, .. } => calls::CallError::Failed(message),
            }))
    }
}
