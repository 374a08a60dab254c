//! Matching an outcome the testee answered against what a case expects.
//!
//! An expectation is a string (`"ok"` for any success, or an error kind such
//! as `"not-allowed"`), or a table: `{ ok = <value> }` for an exact value,
//! `{ err = "<kind>", code = n, message = "<substring>" }` for an error.

use serde_json::Value;

/// Checks one outcome; `Err` says how it differs.
///
/// # Errors
/// A description of the mismatch.
pub fn check(expect: &Value, outcome: Option<&Value>) -> Result<(), String> {
    let Some(outcome) = outcome else {
        return Err(format!(
            "expected {expect}, but the testee answered no outcome for this operation"
        ));
    };
    let kind_of = |o: &Value| -> String {
        if o.get("ok").is_some() {
            "ok".into()
        } else {
            o.pointer("/err/kind").and_then(Value::as_str).unwrap_or("?").to_owned()
        }
    };
    match expect {
        Value::String(kind) => {
            if kind_of(outcome) == *kind {
                Ok(())
            } else {
                Err(format!("expected {kind}, got {outcome}"))
            }
        }
        Value::Object(m) => {
            if let Some(v) = m.get("ok") {
                if outcome.get("ok") == Some(v) {
                    return Ok(());
                }
                return Err(format!("expected ok {v}, got {outcome}"));
            }
            let Some(kind) = m.get("err").and_then(Value::as_str) else {
                return Err(format!(
                    "malformed expectation {expect}: use \"ok\", an error kind, {{ok = v}} or {{err = kind}}"
                ));
            };
            if kind_of(outcome) != kind {
                return Err(format!("expected {kind}, got {outcome}"));
            }
            if let Some(code) = m.get("code")
                && outcome.pointer("/err/code") != Some(code)
            {
                return Err(format!("expected {kind} with code {code}, got {outcome}"));
            }
            if let Some(sub) = m.get("message").and_then(Value::as_str) {
                let msg = outcome.pointer("/err/message").and_then(Value::as_str).unwrap_or("");
                if !msg.contains(sub) {
                    return Err(format!("expected {kind} whose message contains {sub:?}, got {outcome}"));
                }
            }
            Ok(())
        }
        other => Err(format!("malformed expectation {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn expectations_match_outcomes() {
        let ok = json!({"ok": {"changed": 1}});
        let na = json!({"err": {"kind": "not-allowed", "message": "deleted in this event"}});
        assert!(check(&json!("ok"), Some(&ok)).is_ok(), "\"ok\" matches any success");
        assert!(
            check(&json!({"ok": {"changed": 1}}), Some(&ok)).is_ok(),
            "an exact value matches"
        );
        assert!(
            check(&json!({"ok": {"changed": 2}}), Some(&ok)).is_err(),
            "a different value does not"
        );
        assert!(check(&json!("not-allowed"), Some(&na)).is_ok(), "an error kind matches");
        assert!(
            check(&json!({"err": "not-allowed", "message": "deleted"}), Some(&na)).is_ok(),
            "a message substring matches"
        );
        assert!(check(&json!("ok"), Some(&na)).is_err(), "an error is not ok");
        assert!(check(&json!("ok"), None).is_err(), "a missing outcome fails");
    }
}
