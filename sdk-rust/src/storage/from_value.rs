//! [`FromValue`]: a value read from a row as a Rust type, and [`ValueError`]
//! when it cannot be.

use super::Value;

/// Why a value could not be read from a row.
///
/// ```
/// use wasmkeep_actor::{FromValue, Value, ValueError};
///
/// let err = i64::from_value(&Value::Text("x".into())).unwrap_err();
/// assert_eq!(err, ValueError::WrongType { expected: "integer", found: "text" });
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    /// No column has this name.
    #[error("no column named {0:?}")]
    NoSuchColumn(String),
    /// The row has fewer columns.
    #[error("column index {index} out of range (the row has {len} columns)")]
    IndexOutOfRange {
        /// The index asked for.
        index: usize,
        /// How many columns the row has.
        len: usize,
    },
    /// The value has another SQLite type than the one asked for.
    #[error("expected {expected}, found {found}")]
    WrongType {
        /// The type asked for.
        expected: &'static str,
        /// The value's SQLite type (see [`Value::type_name`]).
        found: &'static str,
    },
    /// An integer does not fit the Rust type asked for.
    #[error("integer {0} out of range for {1}")]
    OutOfRange(i64, &'static str),
    /// The value was read with a column name or index, and failed.
    #[error("column {column}: {source}")]
    InColumn {
        /// The column's name.
        column: String,
        /// What went wrong.
        #[source]
        source: Box<ValueError>,
    },
}

/// Converts a [`Value`] read from a row into a Rust type.
///
/// Implemented for [`Value`] itself, integers (range-checked), `bool`
/// (integer, non-zero = true), `f64` (also from an integer), `String`,
/// `Vec<u8>` (also from text), and `Option<T>` (`NULL` = `None`).
///
/// ```
/// use wasmkeep_actor::{FromValue, Value};
///
/// assert_eq!(i32::from_value(&Value::Integer(7)), Ok(7));
/// assert_eq!(f64::from_value(&Value::Integer(2)), Ok(2.0));
/// assert_eq!(Option::<String>::from_value(&Value::Null), Ok(None));
/// assert!(u8::from_value(&Value::Integer(300)).is_err());
/// ```
pub trait FromValue: Sized {
    /// Converts the value.
    ///
    /// # Errors
    ///
    /// [`ValueError::WrongType`] if the value has a type this Rust type
    /// does not read, [`ValueError::OutOfRange`] if an integer does not fit.
    fn from_value(value: &Value) -> Result<Self, ValueError>;
}

fn wrong_type(expected: &'static str, found: &Value) -> ValueError {
    ValueError::WrongType {
        expected,
        found: found.type_name(),
    }
}

impl FromValue for Value {
    fn from_value(value: &Value) -> Result<Self, ValueError> {
        Ok(value.clone())
    }
}

impl FromValue for i64 {
    fn from_value(value: &Value) -> Result<Self, ValueError> {
        match value {
            Value::Integer(i) => Ok(*i),
            other => Err(wrong_type("integer", other)),
        }
    }
}

macro_rules! from_value_int {
    ($($t:ty),*) => {$(
        impl FromValue for $t {
            fn from_value(value: &Value) -> Result<Self, ValueError> {
                let i = i64::from_value(value)?;
                <$t>::try_from(i).map_err(|_| ValueError::OutOfRange(i, stringify!($t)))
            }
        }
    )*};
}
from_value_int!(i8, i16, i32, u8, u16, u32, u64, usize, isize);

impl FromValue for bool {
    fn from_value(value: &Value) -> Result<Self, ValueError> {
        Ok(i64::from_value(value)? != 0)
    }
}

impl FromValue for f64 {
    fn from_value(value: &Value) -> Result<Self, ValueError> {
        match value {
            Value::Real(r) => Ok(*r),
            #[allow(
                clippy::cast_precision_loss,
                reason = "SQLite integers read as real, as SQLite itself converts them"
            )]
            Value::Integer(i) => Ok(*i as f64),
            other => Err(wrong_type("real", other)),
        }
    }
}

impl FromValue for String {
    fn from_value(value: &Value) -> Result<Self, ValueError> {
        match value {
            Value::Text(t) => Ok(t.clone()),
            other => Err(wrong_type("text", other)),
        }
    }
}

impl FromValue for Vec<u8> {
    fn from_value(value: &Value) -> Result<Self, ValueError> {
        match value {
            Value::Blob(b) => Ok(b.clone()),
            Value::Text(t) => Ok(t.clone().into_bytes()),
            other => Err(wrong_type("blob", other)),
        }
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(value: &Value) -> Result<Self, ValueError> {
        match value {
            Value::Null => Ok(None),
            other => T::from_value(other).map(Some),
        }
    }
}
