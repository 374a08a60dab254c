//! The testee protocol's operation and its JSON form (conformance/PROTOCOL.md).

use serde_json::{Value, json};

/// One operation of the testee protocol.
#[derive(Debug, Clone, PartialEq)]
pub struct Op {
    /// `exec`, `query`, `exec-durable`, `begin`, `commit` or `rollback`.
    pub op: String,
    /// The statement (none for the transaction calls).
    pub sql: Option<String>,
    /// Parameters, as protocol values.
    pub params: Option<Vec<Value>>,
}

impl Op {
    pub(super) fn json(&self) -> Value {
        let mut o = serde_json::Map::new();
        o.insert("op".into(), json!(self.op));
        if let Some(s) = &self.sql {
            o.insert("sql".into(), json!(s));
        }
        if let Some(p) = &self.params {
            o.insert("params".into(), json!(p));
        }
        Value::Object(o)
    }

    pub(super) fn from_json(v: &Value) -> Option<Self> {
        let op = v.get("op")?.as_str()?.to_owned();
        if !matches!(
            op.as_str(),
            "exec" | "query" | "exec-durable" | "begin" | "commit" | "rollback"
        ) {
            return None;
        }
        Some(Self {
            op,
            sql: v.get("sql").and_then(Value::as_str).map(str::to_owned),
            params: v.get("params").and_then(Value::as_array).cloned(),
        })
    }
}
