//! The [`Actor`] trait and the glue between it and the generated exports.

use core::marker::PhantomData;

use crate::__private::bindings::exports::wasmkeep::actor::events as wit_events;
use crate::__private::bindings::wasmkeep::actor::{http as wit_http, types as wit_types};
use crate::context::Address;
use crate::http::{Request, Responder, Response};
use crate::sockets::{Message, SocketId};

/// The events an actor answers. Every handler has a default, so implement
/// only the ones your actor needs, then export the type with
/// [`export!`](crate::export).
///
/// The host runs one event at a time per actor. A panic traps the event: a
/// transaction still open is rolled back, and a request not yet answered is
/// answered `500`.
///
/// Handlers are associated functions (no `self`): the instance's memory may
/// or may not survive between events, so keep state in
/// [`storage`](crate::storage).
///
/// ```no_run
/// use wasmkeep_actor::{Actor, Request, Response};
///
/// struct Echo;
///
/// impl Actor for Echo {
///     fn on_request(request: Request) -> Response {
///         Response::new(200).with_body(request.body)
///     }
/// }
///
/// wasmkeep_actor::export!(Echo);
/// ```
pub trait Actor {
    /// Runs once per new database, before any other event and in the same
    /// event: create your tables here. It runs again after the actor was
    /// deleted. If it panics, it runs again before the next event.
    ///
    /// The default does nothing.
    ///
    /// ```no_run
    /// # struct A;
    /// impl wasmkeep_actor::Actor for A {
    ///     fn on_init() {
    ///         wasmkeep_actor::storage::exec("CREATE TABLE t(x)", []).expect("create");
    ///     }
    /// }
    /// ```
    fn on_init() {}

    /// Answers a request for `/<class>/<name>/<path>`.
    ///
    /// This is the simple form: the returned response is sent when the
    /// handler returns, once the event's writes are kept (see
    /// [`Responder::send`]). To answer earlier (for example before deleting
    /// the actor), override [`Actor::on_request_with`] instead.
    ///
    /// The default answers `404 Not Found`.
    ///
    /// ```no_run
    /// # use wasmkeep_actor::{Actor, Request, Response};
    /// # struct A;
    /// impl Actor for A {
    ///     fn on_request(request: Request) -> Response {
    ///         match request.method.as_str() {
    ///             "GET" => Response::text(200, "hi"),
    ///             _ => Response::text(405, "method not allowed"),
    ///         }
    ///     }
    /// }
    /// ```
    fn on_request(request: Request) -> Response {
        let _ = request;
        Response::not_found()
    }

    /// Answers a request through a [`Responder`], which sends the response
    /// the moment [`Responder::send`] is called, before the event ends and
    /// whatever the event does afterwards.
    ///
    /// The default calls [`Actor::on_request`] and sends its answer. A
    /// responder dropped without sending makes the host answer `500`.
    ///
    /// ```no_run
    /// # use wasmkeep_actor::{storage, Actor, Request, Responder, Response};
    /// # struct A;
    /// impl Actor for A {
    ///     fn on_request_with(request: Request, responder: Responder) {
    ///         if request.method == "DELETE" {
    ///             // The client hears "bye" even if the delete fails after.
    ///             responder.send(Response::text(202, "bye"));
    ///             storage::delete_self();
    ///         } else {
    ///             responder.send(Self::on_request(request));
    ///         }
    ///     }
    /// }
    /// ```
    fn on_request_with(request: Request, responder: Responder) {
        responder.send(Self::on_request(request));
    }

    /// The alarm's time has come (see [`alarms`](crate::alarms)). The alarm is
    /// already cleared when this runs; set it again to repeat.
    ///
    /// The default does nothing.
    ///
    /// ```no_run
    /// # struct A;
    /// impl wasmkeep_actor::Actor for A {
    ///     fn on_alarm() {
    ///         wasmkeep_actor::context::info("tick");
    ///         wasmkeep_actor::alarms::set_in(std::time::Duration::from_secs(60));
    ///     }
    /// }
    /// ```
    fn on_alarm() {}

    /// Another actor of the app called this one (`caller` is its address), or
    /// the host did (`caller` is `None`). The `Ok` bytes are the answer,
    /// given once the call's writes are kept ([`storage::flush`](crate::storage::flush);
    /// if they are not known to be, the caller is rejected with a message
    /// saying so); an `Err` reaches the caller as
    /// [`CallError::Rejected`](crate::CallError::Rejected).
    ///
    /// The default rejects every call with "calls not supported".
    ///
    /// ```no_run
    /// # use wasmkeep_actor::{Actor, Address};
    /// # struct A;
    /// impl Actor for A {
    ///     fn on_call(_caller: Option<Address>, payload: Vec<u8>) -> Result<Vec<u8>, String> {
    ///         Ok(payload) // echo
    ///     }
    /// }
    /// ```
    ///
    /// # Errors
    ///
    /// The error string is given to the caller as a rejection.
    fn on_call(caller: Option<Address>, payload: Vec<u8>) -> Result<Vec<u8>, String> {
        let _ = (caller, payload);
        Err("calls not supported".to_string())
    }

    /// A WebSocket opened on `/<class>/<name>/<path>`.
    ///
    /// The default does nothing (the socket stays open).
    ///
    /// ```no_run
    /// # use wasmkeep_actor::{sockets, Actor, SocketId};
    /// # struct A;
    /// impl Actor for A {
    ///     fn on_socket_open(socket: SocketId, path: String) {
    ///         let _ = sockets::send_text(socket, &format!("welcome to {path}"));
    ///     }
    /// }
    /// ```
    fn on_socket_open(socket: SocketId, path: String) {
        let _ = (socket, path);
    }

    /// A message arrived on one of the actor's open sockets.
    ///
    /// The default ignores it.
    ///
    /// ```no_run
    /// # use wasmkeep_actor::{sockets, Actor, Message, SocketId};
    /// # struct A;
    /// impl Actor for A {
    ///     fn on_socket_message(socket: SocketId, message: Message) {
    ///         let _ = sockets::send(socket, message); // echo
    ///     }
    /// }
    /// ```
    fn on_socket_message(socket: SocketId, message: Message) {
        let _ = (socket, message);
    }

    /// A socket closed: by the client, by the actor, or by the host (1000
    /// "actor deleted", 1001 when the host stops).
    ///
    /// The default does nothing.
    ///
    /// ```no_run
    /// # use wasmkeep_actor::{context, Actor, SocketId};
    /// # struct A;
    /// impl Actor for A {
    ///     fn on_socket_close(socket: SocketId, code: u16, reason: String) {
    ///         context::info(format_args!("socket {socket} closed: {code} {reason}"));
    ///     }
    /// }
    /// ```
    fn on_socket_close(socket: SocketId, code: u16, reason: String) {
        let _ = (socket, code, reason);
    }
}

/// Implements the generated `Guest` trait for any [`Actor`]; [`export!`](crate::export)
/// exports `Adapter<YourActor>`.
#[doc(hidden)]
pub struct Adapter<A: ?Sized>(PhantomData<A>);

impl<A: Actor + ?Sized> wit_events::Guest for Adapter<A> {
    fn on_init() {
        crate::failure_report::report_panics();
        A::on_init();
    }

    fn on_request(request: wit_http::Request, out: wit_http::ResponseOutparam) {
        crate::failure_report::report_panics();
        A::on_request_with(Request::from_wit(request), Responder::new(out));
    }

    fn on_alarm() {
        crate::failure_report::report_panics();
        A::on_alarm();
    }

    fn on_call(caller: Option<wit_types::Address>, payload: Vec<u8>) -> Result<Vec<u8>, String> {
        crate::failure_report::report_panics();
        let answer = A::on_call(caller.map(Address::from_wit), payload)?;
        // The caller hears Ok only once what this call wrote is kept.
        crate::storage::flush().map_err(|e| format!("the call's writes are not known to be kept ({e}); try again"))?;
        Ok(answer)
    }

    fn on_socket_open(socket: SocketId, path: String) {
        crate::failure_report::report_panics();
        A::on_socket_open(socket, path);
    }

    fn on_socket_message(socket: SocketId, message: wit_types::Message) {
        crate::failure_report::report_panics();
        A::on_socket_message(socket, Message::from_wit(message));
    }

    fn on_socket_close(socket: SocketId, code: u16, reason: String) {
        crate::failure_report::report_panics();
        A::on_socket_close(socket, code, reason);
    }
}
