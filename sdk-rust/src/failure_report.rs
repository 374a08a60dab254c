//! A panic in an event is reported to the host through the WIT
//! (`context.report-failure`, 0.2.3) before the event traps, so the host
//! answers the failed event with the panic's message and location without
//! reading this toolchain's stderr format.

use crate::__private::bindings::wasmkeep::actor::context as wit;
use std::sync::Once;

/// Installs the panic hook once per instance: it reports the panic, then
/// runs the hook that was there before (std's prints it to stderr, which
/// `wasmkeep-shim serve` shows in its log).
pub(crate) fn report_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let message = payload_text(info.payload());
            let detail = info
                .location()
                .map(|l| format!("panicked at {}:{}:{}", l.file(), l.line(), l.column()))
                .unwrap_or_default();
            wit::report_failure(&wit::FailureReport { message, detail });
            previous(info);
        }));
    });
}

/// The text a panic carries (`panic!("…")` gives a `&str` or a `String`).
fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic whose payload is not text".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panics_text_is_its_message() {
        assert_eq!(payload_text(&"boom"), "boom");
        assert_eq!(payload_text(&String::from("formatted 7")), "formatted 7");
        assert_eq!(payload_text(&7_u32), "a panic whose payload is not text");
    }
}
