//! What a test reads of a [`TestHost`]: whether an actor exists, its tables,
//! the actors, the logs and the metrics.

use super::*;

impl TestHost {
    /// Whether the actor exists.
    ///
    /// # Errors
    /// The host is closed.
    pub fn exists(&self, key: &ActorKey) -> Result<bool, TestHostError> {
        Ok(self.runtime()?.admin().exists(key))
    }

    /// The actor's tables and rows (the host's own table left out).
    ///
    /// # Errors
    /// The actor does not exist or its database cannot be read.
    pub fn tables(&self, key: &ActorKey) -> Result<Vec<(String, QueryResult)>, TestHostError> {
        Ok(self.runtime()?.admin().tables(key)?)
    }

    /// The actor's tables as JSON, as the harnesses document them:
    /// `{table: {columns, rows}}`, integers `{"integer": "n"}` (exact beyond
    /// 2^53), reals `{"real": x}`, blobs `{"blob": hex}`, text and NULL as themselves.
    ///
    /// # Errors
    /// As [`TestHost::tables`].
    pub fn tables_json(&self, key: &ActorKey) -> Result<serde_json::Value, TestHostError> {
        let mut out = serde_json::Map::new();
        for (table, result) in self.tables(key)? {
            let rows: Vec<serde_json::Value> = result
                .rows
                .iter()
                .map(|row| serde_json::Value::Array(row.iter().map(sql_value_json).collect()))
                .collect();
            out.insert(table, serde_json::json!({ "columns": result.columns, "rows": rows }));
        }
        Ok(serde_json::Value::Object(out))
    }

    /// Every actor the host knows and its status.
    ///
    /// # Errors
    /// The host is closed.
    pub fn actors(&self) -> Result<Vec<ActorInfo>, TestHostError> {
        Ok(self.runtime()?.admin().actors())
    }

    /// The lines actors logged (the last 1000 of each node), in a cluster
    /// every node's, in the order of their time (node 1's first at a tie).
    ///
    /// # Errors
    /// The host is closed.
    pub fn logs(&self) -> Result<Vec<LogLine>, TestHostError> {
        let mut lines: Vec<LogLine> = self.all_nodes()?.flat_map(|n| n.admin().logs()).collect();
        // Stable: each node's own lines keep their order.
        lines.sort_by_key(|l| l.at);
        Ok(lines)
    }

    /// What one actor logged, as [`TestHost::logs`] orders it. Filtered
    /// before the sort: the harnesses print it after every answer ≥ 500,
    /// many of them under chaos.
    ///
    /// # Errors
    /// The host is closed.
    pub fn logs_of(&self, key: &ActorKey) -> Result<Vec<LogLine>, TestHostError> {
        let actor = key.to_string();
        let mut lines: Vec<LogLine> = self
            .all_nodes()?
            .flat_map(|n| n.admin().logs())
            .filter(|l| l.actor == actor)
            .collect();
        lines.sort_by_key(|l| l.at);
        Ok(lines)
    }

    /// The counters in Prometheus text.
    ///
    /// # Errors
    /// The host is closed.
    pub fn metrics(&self) -> Result<String, TestHostError> {
        Ok(self.runtime()?.admin().metrics().render())
    }
}

/// One SQL value as the harnesses' JSON spells it.
pub fn sql_value_json(v: &SqlValue) -> serde_json::Value {
    match v {
        SqlValue::Null => serde_json::Value::Null,
        SqlValue::Integer(i) => serde_json::json!({ "integer": i.to_string() }),
        SqlValue::Real(r) => serde_json::json!({ "real": r }),
        SqlValue::Text(t) => serde_json::Value::String(t.clone()),
        SqlValue::Blob(b) => serde_json::json!({ "blob": hex::encode(b) }),
    }
}
