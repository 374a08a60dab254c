//! [`Value`]: one SQLite value, and its conversions from Rust types.

use core::fmt;

use crate::__private::bindings::wasmkeep::actor::types as wit_types;

/// One SQLite value, bound as a parameter or read from a row.
///
/// Convert into it with `From` (integers, `f64`, `bool`, strings, bytes,
/// `Option<T>` for NULL) and out of it with [`FromValue`](super::FromValue). `u64` and `usize`
/// have no `From` (they may not fit an SQLite integer): convert them with
/// `i64::try_from` first.
///
/// ```
/// use wasmkeep_actor::Value;
///
/// assert_eq!(Value::from(3), Value::Integer(3));
/// assert_eq!(Value::from(true), Value::Integer(1));
/// assert_eq!(Value::from("x"), Value::Text("x".into()));
/// assert_eq!(Value::from(&b"\x00\xff"[..]), Value::Blob(vec![0, 255]));
/// assert_eq!(Value::from(None::<String>), Value::Null);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    /// SQL `NULL`.
    #[default]
    Null,
    /// A 64-bit signed integer.
    Integer(i64),
    /// A 64-bit float.
    Real(f64),
    /// UTF-8 text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

impl Value {
    /// The SQLite storage class of the value: `"null"`, `"integer"`,
    /// `"real"`, `"text"` or `"blob"`.
    ///
    /// ```
    /// # use wasmkeep_actor::Value;
    /// assert_eq!(Value::Real(1.5).type_name(), "real");
    /// ```
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Null => "null",
            Self::Integer(_) => "integer",
            Self::Real(_) => "real",
            Self::Text(_) => "text",
            Self::Blob(_) => "blob",
        }
    }

    /// Whether the value is `NULL`.
    ///
    /// ```
    /// # use wasmkeep_actor::Value;
    /// assert!(Value::Null.is_null());
    /// ```
    pub fn is_null(&self) -> bool {
        matches!(self, Self::Null)
    }

    pub(super) fn from_wit(v: wit_types::SqlValue) -> Self {
        match v {
            wit_types::SqlValue::Null => Self::Null,
            wit_types::SqlValue::Integer(i) => Self::Integer(i),
            wit_types::SqlValue::Real(r) => Self::Real(r),
            wit_types::SqlValue::Text(t) => Self::Text(t),
            wit_types::SqlValue::Blob(b) => Self::Blob(b),
        }
    }

    pub(super) fn into_wit(self) -> wit_types::SqlValue {
        match self {
            Self::Null => wit_types::SqlValue::Null,
            Self::Integer(i) => wit_types::SqlValue::Integer(i),
            Self::Real(r) => wit_types::SqlValue::Real(r),
            Self::Text(t) => wit_types::SqlValue::Text(t),
            Self::Blob(b) => wit_types::SqlValue::Blob(b),
        }
    }
}

impl fmt::Display for Value {
    /// Formats the value as SQLite's `quote()` would, roughly: `NULL`, `7`,
    /// `1.5`, `'text'`, `X'00FF'`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Null => f.write_str("NULL"),
            Self::Integer(i) => write!(f, "{i}"),
            Self::Real(r) => write!(f, "{r:?}"),
            Self::Text(t) => write!(f, "'{}'", t.replace('\'', "''")),
            Self::Blob(b) => {
                f.write_str("X'")?;
                for byte in b {
                    write!(f, "{byte:02X}")?;
                }
                f.write_str("'")
            }
        }
    }
}

macro_rules! value_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            fn from(v: $t) -> Self {
                Self::Integer(i64::from(v))
            }
        }
    )*};
}
value_from_int!(i8, i16, i32, i64, u8, u16, u32);

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Self::Integer(i64::from(v))
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Self::Real(v)
    }
}

impl From<f32> for Value {
    fn from(v: f32) -> Self {
        Self::Real(f64::from(v))
    }
}

impl From<String> for Value {
    fn from(v: String) -> Self {
        Self::Text(v)
    }
}

impl From<&String> for Value {
    fn from(v: &String) -> Self {
        Self::Text(v.clone())
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Self::Text(v.to_owned())
    }
}

impl From<Vec<u8>> for Value {
    fn from(v: Vec<u8>) -> Self {
        Self::Blob(v)
    }
}

impl From<&[u8]> for Value {
    fn from(v: &[u8]) -> Self {
        Self::Blob(v.to_vec())
    }
}

impl<const N: usize> From<[u8; N]> for Value {
    fn from(v: [u8; N]) -> Self {
        Self::Blob(v.to_vec())
    }
}

impl<const N: usize> From<&[u8; N]> for Value {
    fn from(v: &[u8; N]) -> Self {
        Self::Blob(v.to_vec())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Self::Null, Into::into)
    }
}

impl From<&Value> for Value {
    fn from(v: &Value) -> Self {
        v.clone()
    }
}
