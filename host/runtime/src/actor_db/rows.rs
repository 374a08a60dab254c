//! The one reader of rows and the one writer of parameters between SQLite
//! and the host's [`SqlValue`].

use crate::sql_types::{QueryResult, SqlValue};
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Params, Statement, ToSql};

/// A parameter as SQLite binds it, borrowed from the guest's value.
pub(super) struct Param<'a>(pub(super) &'a SqlValue);

impl ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self.0 {
            SqlValue::Null => ValueRef::Null,
            SqlValue::Integer(i) => ValueRef::Integer(*i),
            SqlValue::Real(f) => ValueRef::Real(*f),
            SqlValue::Text(s) => ValueRef::Text(s.as_bytes()),
            SqlValue::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

pub(super) fn from_value_ref(v: ValueRef<'_>) -> SqlValue {
    match v {
        ValueRef::Null => SqlValue::Null,
        ValueRef::Integer(i) => SqlValue::Integer(i),
        ValueRef::Real(f) => SqlValue::Real(f),
        ValueRef::Text(t) => SqlValue::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => SqlValue::Blob(b.to_vec()),
    }
}

pub(super) fn value_bytes(v: &SqlValue) -> usize {
    match v {
        SqlValue::Text(t) => t.len(),
        SqlValue::Blob(b) => b.len(),
        _ => 8,
    }
}

/// Runs `stmt` with `params` and reads its column names and rows, adding each
/// value's size to `bytes` (which may carry over from earlier statements).
/// After each row `stop(bytes)` may end the reading with its reason.
///
/// # Errors
/// SQLite's, as it steps the statement.
pub(super) fn read_rows<S>(
    stmt: &mut Statement<'_>,
    params: impl Params,
    bytes: &mut usize,
    mut stop: impl FnMut(usize) -> Option<S>,
) -> rusqlite::Result<Result<QueryResult, S>> {
    let columns: Vec<String> = stmt.column_names().into_iter().map(str::to_owned).collect();
    let n = columns.len();
    let mut rows = stmt.query(params)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let mut values = Vec::with_capacity(n);
        for i in 0..n {
            let v = from_value_ref(row.get_ref(i)?);
            *bytes += value_bytes(&v);
            values.push(v);
        }
        if let Some(why) = stop(*bytes) {
            return Ok(Err(why));
        }
        out.push(values);
    }
    Ok(Ok(QueryResult { columns, rows: out }))
}
