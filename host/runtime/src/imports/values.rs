//! SQL values, rows and errors between the host's types and the WIT's.

use crate::bindings::types;
use crate::sql_types::{QueryResult, SqlError, SqlValue};

pub(super) fn to_wit_error(e: SqlError) -> types::SqlError {
    match e {
        SqlError::NotAllowed(m) => types::SqlError::NotAllowed(m),
        SqlError::Internal(m) => types::SqlError::Internal(m),
        SqlError::Sqlite { code, message } => types::SqlError::Sqlite(types::SqliteFailure { code, message }),
    }
}

pub(super) fn from_wit_value(v: types::SqlValue) -> SqlValue {
    match v {
        types::SqlValue::Null => SqlValue::Null,
        types::SqlValue::Integer(i) => SqlValue::Integer(i),
        types::SqlValue::Real(f) => SqlValue::Real(f),
        types::SqlValue::Text(s) => SqlValue::Text(s),
        types::SqlValue::Blob(b) => SqlValue::Blob(b),
    }
}

pub(super) fn to_wit_value(v: SqlValue) -> types::SqlValue {
    match v {
        SqlValue::Null => types::SqlValue::Null,
        SqlValue::Integer(i) => types::SqlValue::Integer(i),
        SqlValue::Real(f) => types::SqlValue::Real(f),
        SqlValue::Text(s) => types::SqlValue::Text(s),
        SqlValue::Blob(b) => types::SqlValue::Blob(b),
    }
}

pub(super) fn to_wit_rows(r: QueryResult) -> types::QueryResult {
    types::QueryResult {
        columns: r.columns,
        rows: r
            .rows
            .into_iter()
            .map(|row| row.into_iter().map(to_wit_value).collect())
            .collect(),
    }
}
