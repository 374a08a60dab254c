//! The response outparam handed to `on-request` (the WIT resource
//! `response-outparam`): a leaf, so the bindings and the imports both use it.

use crate::http_types::HttpResponse;
use std::sync::Arc;
use tokio::sync::oneshot;

/// The response outparam handed to `on-request`: sends the answer when set.
#[derive(Debug)]
pub struct Outparam {
    /// Also held by the event runner, which answers 500 if the event ends with it unset.
    pub(crate) tx: ResponseSlot,
}

/// Where an event's HTTP answer goes; taken by whoever answers first.
pub(crate) type ResponseSlot = Arc<std::sync::Mutex<Option<oneshot::Sender<HttpResponse>>>>;
