//! `wasmkeep:actor/http`: the request's response, set through its outparam.

use super::HostState;
use super::{CRASHED_AFTER_ANSWER, CrashAfterAnswer, R};
use crate::bindings::http;
use crate::http_types::HttpResponse;
use crate::outparam::Outparam;
use wasmtime::component::Resource;

impl http::Host for HostState {}

impl http::HostResponseOutparam for HostState {
    fn set(&mut self, out: Resource<Outparam>, response: http::Response) -> R<()> {
        let op = self.table.delete(out)?;
        let tx = crate::unpoisoned::lock(&op.tx).take();
        if let Some(tx) = tx {
            let _ = tx.send(HttpResponse {
                status: response.status,
                headers: response.headers,
                body: response.body,
                failure: None,
                held_elsewhere: None,
            });
            if self.ev.crash == CrashAfterAnswer::Armed {
                // The answer is out; the host "crashes" here: the guest is
                // trapped before anything it does after its answer.
                self.ev.crash = CrashAfterAnswer::Crashed;
                return Err(wasmtime::Error::msg(CRASHED_AFTER_ANSWER));
            }
        }
        Ok(())
    }

    fn drop(&mut self, rep: Resource<Outparam>) -> R<()> {
        // Dropped without an answer: the sender goes, and the event's end answers 500.
        self.table.delete(rep)?;
        Ok(())
    }
}
