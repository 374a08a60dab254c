//! `sql-value` between the QuickJS dialect and `wasmkeep:actor/types`.

use crate::bindings::exports::wasmkeep::actor_js::storage::{QueryResult, SqlValue};
use crate::bindings::wasmkeep::actor::types::{QueryResult as HostQueryResult, SqlError, SqlValue as HostValue};

/// The largest integer a JavaScript number holds exactly (2^53 - 1).
const MAX_SAFE: i64 = (1 << 53) - 1;

/// A parameter as the host takes it. `big-integer` must be the decimal text
/// of an integer that fits in 64 bits; the SDK makes it so, and anything else
/// is refused as SQLite would refuse a bad parameter.
fn param(index: usize, v: SqlValue) -> Result<HostValue, SqlError> {
    Ok(match v {
        SqlValue::Null => HostValue::Null,
        SqlValue::Integer(i) => HostValue::Integer(i),
        SqlValue::BigInteger(text) => HostValue::Integer(text.parse().map_err(|e| {
            SqlError::NotAllowed(format!(
                "parameter {}: big-integer {text:?} is not a 64-bit integer ({e})",
                index + 1
            ))
        })?),
        SqlValue::Real(x) => HostValue::Real(x),
        SqlValue::Text(s) => HostValue::Text(s),
        SqlValue::Blob(b) => HostValue::Blob(b),
    })
}

/// The parameters as the host takes them.
///
/// # Errors
///
/// `not-allowed` naming the parameter when a `big-integer` is not the text of
/// a 64-bit integer.
pub(crate) fn params(ps: Vec<SqlValue>) -> Result<Vec<HostValue>, SqlError> {
    ps.into_iter().enumerate().map(|(i, v)| param(i, v)).collect()
}

/// A value the host returned, with integers beyond ±2^53 as text.
pub(crate) fn value(v: HostValue) -> SqlValue {
    match v {
        HostValue::Null => SqlValue::Null,
        HostValue::Integer(i) if (-MAX_SAFE..=MAX_SAFE).contains(&i) => SqlValue::Integer(i),
        HostValue::Integer(i) => SqlValue::BigInteger(i.to_string()),
        HostValue::Real(x) => SqlValue::Real(x),
        HostValue::Text(s) => SqlValue::Text(s),
        HostValue::Blob(b) => SqlValue::Blob(b),
    }
}

pub(crate) fn query_result(r: HostQueryResult) -> QueryResult {
    QueryResult {
        columns: r.columns,
        rows: r
            .rows
            .into_iter()
            .map(|row| row.into_iter().map(value).collect())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_within_2_pow_53_stay_integers_and_the_rest_become_text() {
        assert!(matches!(
            value(HostValue::Integer(MAX_SAFE)),
            SqlValue::Integer(MAX_SAFE)
        ));
        assert!(matches!(value(HostValue::Integer(-MAX_SAFE)), SqlValue::Integer(i) if i == -MAX_SAFE));
        assert!(matches!(value(HostValue::Integer(MAX_SAFE + 1)), SqlValue::BigInteger(t) if t == "9007199254740992"));
        assert!(matches!(value(HostValue::Integer(i64::MIN)), SqlValue::BigInteger(t) if t == "-9223372036854775808"));
    }

    #[test]
    fn big_integer_text_round_trips_and_garbage_is_refused_naming_the_parameter() {
        for i in [i64::MIN, i64::MAX, MAX_SAFE + 1, -MAX_SAFE - 1] {
            assert!(matches!(param(0, SqlValue::BigInteger(i.to_string())), Ok(HostValue::Integer(j)) if j == i));
        }
        match param(2, SqlValue::BigInteger("9223372036854775808".into())) {
            Err(SqlError::NotAllowed(m)) => assert!(m.starts_with("parameter 3: big-integer"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
}
