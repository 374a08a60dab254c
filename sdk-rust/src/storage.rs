//! The actor's own SQLite database.
//!
//! Each actor has one database; nobody else reads it. Writes are kept when
//! the event ends; [`flush`] returns once the event's writes so far are kept
//! (the SDK calls it before it sends an answer), and [`exec_durable`] and
//! [`delete_self_durable`] return only once what they did is durable. Transactions are opened with [`begin`] (or
//! the [`transaction`] helper), never with SQL text; one still open when the
//! event ends, or when the event panics, is rolled back.
//!
//! Parameters are bound by position (`?1`, `?2`, ... or `?`) from anything
//! implementing [`Params`]: `[]`, the [`params!`](crate::params) macro, a
//! `Vec<Value>` or a `&[Value]`.
//!
//! ```no_run
//! use wasmkeep_actor::{params, storage};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! storage::exec("CREATE TABLE IF NOT EXISTS people(name TEXT, age INTEGER)", [])?;
//! storage::exec("INSERT INTO people VALUES (?1, ?2)", params!["Ada", 36])?;
//! let rows = storage::query("SELECT name, age FROM people WHERE age > ?1", params![18])?;
//! for row in &rows {
//!     let name: String = row.get("name")?;
//!     let age: i64 = row.get(1)?;
//!     wasmkeep_actor::context::info(format_args!("{name} is {age}"));
//! }
//! # Ok(())
//! # }
//! ```

use core::fmt;

use crate::__private::bindings::wasmkeep::actor::{storage as wit, types as wit_types};

#[cfg(feature = "serde")]
pub use crate::serde_support::query_as;

// ---------------------------------------------------------------------------
// Errors

/// Why a storage call failed.
///
/// ```
/// use wasmkeep_actor::SqlError;
///
/// let e = SqlError::Sqlite { code: 19, message: "UNIQUE constraint failed: t.id".into() };
/// assert_eq!(e.to_string(), "sqlite error 19: UNIQUE constraint failed: t.id");
/// assert!(SqlError::NotAllowed("open transaction".into()).is_not_allowed());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SqlError {
    /// Refused in this state; nothing was changed. The message says which
    /// state: "deleted in this event", "open transaction", "database closed
    /// by a failed delete", "no open transaction", or the forbidden statement
    /// (ATTACH, VACUUM INTO, load_extension, file PRAGMAs, BEGIN/COMMIT
    /// written as SQL, the host's own tables).
    #[error("not allowed: {0}")]
    NotAllowed(String),
    /// The host failed. What the call asked for is not known to be durable:
    /// it may or may not have happened. [`delete_self_durable`] is safe to
    /// call again.
    #[error("internal error: {0}")]
    Internal(String),
    /// SQLite refused the statement (syntax, constraint, type, ...).
    #[error("sqlite error {code}: {message}")]
    Sqlite {
        /// The SQLite primary result code (1 = `SQLITE_ERROR`,
        /// 19 = `SQLITE_CONSTRAINT`, ...).
        code: i32,
        /// SQLite's message, e.g. `UNIQUE constraint failed: t.id`.
        message: String,
    },
}

impl SqlError {
    /// Whether this is [`SqlError::NotAllowed`].
    ///
    /// ```
    /// # use wasmkeep_actor::SqlError;
    /// assert!(!SqlError::Internal("io".into()).is_not_allowed());
    /// ```
    pub fn is_not_allowed(&self) -> bool {
        matches!(self, Self::NotAllowed(_))
    }

    /// The message, without the variant's prefix.
    ///
    /// ```
    /// # use wasmkeep_actor::SqlError;
    /// assert_eq!(SqlError::Internal("io".into()).message(), "io");
    /// ```
    pub fn message(&self) -> &str {
        match self {
            Self::NotAllowed(m) | Self::Internal(m) => m,
            Self::Sqlite { message, .. } => message,
        }
    }

    fn from_wit(e: wit_types::SqlError) -> Self {
        match e {
            wit_types::SqlError::NotAllowed(m) => Self::NotAllowed(m),
            wit_types::SqlError::Internal(m) => Self::Internal(m),
            wit_types::SqlError::Sqlite(f) => Self::Sqlite {
                code: f.code,
                message: f.message,
            },
        }
    }
}

// ---------------------------------------------------------------------------
// Values

/// One SQLite value, bound as a parameter or read from a row.
///
/// Convert into it with `From` (integers, `f64`, `bool`, strings, bytes,
/// `Option<T>` for NULL) and out of it with [`FromValue`]. `u64` and `usize`
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

    fn from_wit(v: wit_types::SqlValue) -> Self {
        match v {
            wit_types::SqlValue::Null => Self::Null,
            wit_types::SqlValue::Integer(i) => Self::Integer(i),
            wit_types::SqlValue::Real(r) => Self::Real(r),
            wit_types::SqlValue::Text(t) => Self::Text(t),
            wit_types::SqlValue::Blob(b) => Self::Blob(b),
        }
    }

    fn into_wit(self) -> wit_types::SqlValue {
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

// ---------------------------------------------------------------------------
// Parameters

/// A statement's parameters, bound in order to `?1`, `?2`, ... (or `?`).
///
/// Implemented for `[]` (no parameters), arrays, slices and vectors of
/// [`Value`]; build mixed lists with [`params!`](crate::params).
///
/// ```
/// use wasmkeep_actor::{params, Params, Value};
///
/// assert!([].into_values().is_empty());
/// assert_eq!(params![1, "a"].into_values().len(), 2);
/// let owned: Vec<Value> = vec![Value::from(1.5)];
/// assert_eq!((&owned).into_values(), owned);
/// ```
pub trait Params {
    /// The values, in binding order.
    fn into_values(self) -> Vec<Value>;
}

impl<const N: usize> Params for [Value; N] {
    fn into_values(self) -> Vec<Value> {
        self.into()
    }
}

impl<const N: usize> Params for &[Value; N] {
    fn into_values(self) -> Vec<Value> {
        self.to_vec()
    }
}

impl Params for &[Value] {
    fn into_values(self) -> Vec<Value> {
        self.to_vec()
    }
}

impl Params for Vec<Value> {
    fn into_values(self) -> Vec<Value> {
        self
    }
}

impl Params for &Vec<Value> {
    fn into_values(self) -> Vec<Value> {
        self.clone()
    }
}

fn to_wit_params(params: impl Params) -> Vec<wit_types::SqlValue> {
    params.into_values().into_iter().map(Value::into_wit).collect()
}

// ---------------------------------------------------------------------------
// Reading values

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

/// Names a column of a [`Row`]: its position (`usize`, from 0) or its name
/// (`&str`, exact match, the first column of that name).
///
/// ```
/// # fn f(row: wasmkeep_actor::Row<'_>) -> Result<(), wasmkeep_actor::ValueError> {
/// let by_index: i64 = row.get(0)?;
/// let by_name: i64 = row.get("count")?;
/// # Ok(()) }
/// ```
pub trait ColumnIndex {
    /// The position of the column among `columns`.
    ///
    /// # Errors
    ///
    /// [`ValueError::NoSuchColumn`] or [`ValueError::IndexOutOfRange`].
    fn index_in(&self, columns: &[String]) -> Result<usize, ValueError>;
}

impl ColumnIndex for usize {
    fn index_in(&self, columns: &[String]) -> Result<usize, ValueError> {
        if *self < columns.len() {
            Ok(*self)
        } else {
            Err(ValueError::IndexOutOfRange {
                index: *self,
                len: columns.len(),
            })
        }
    }
}

impl ColumnIndex for &str {
    fn index_in(&self, columns: &[String]) -> Result<usize, ValueError> {
        columns
            .iter()
            .position(|c| c == self)
            .ok_or_else(|| ValueError::NoSuchColumn((*self).to_owned()))
    }
}

// ---------------------------------------------------------------------------
// Rows

/// The answer of [`query`]: the column names, then the rows.
///
/// ```
/// use wasmkeep_actor::{Rows, Value};
///
/// let rows = Rows::new(
///     vec!["id".into(), "name".into()],
///     vec![vec![Value::Integer(1), Value::Text("a".into())]],
/// );
/// assert_eq!(rows.columns(), ["id", "name"]);
/// assert_eq!(rows.len(), 1);
/// let first = rows.first().unwrap();
/// assert_eq!(first.get::<String>("name").unwrap(), "a");
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rows {
    columns: Vec<String>,
    rows: Vec<Vec<Value>>,
}

impl Rows {
    /// Rows from column names and values (each row in column order). Useful
    /// in tests; [`query`] builds them for you.
    ///
    /// ```
    /// # use wasmkeep_actor::Rows;
    /// assert!(Rows::new(vec!["x".into()], vec![]).is_empty());
    /// ```
    pub fn new(columns: Vec<String>, rows: Vec<Vec<Value>>) -> Self {
        Self { columns, rows }
    }

    /// The column names, in order.
    ///
    /// ```
    /// # use wasmkeep_actor::Rows;
    /// let rows = Rows::new(vec!["a".into()], vec![]);
    /// assert_eq!(rows.columns(), ["a"]);
    /// ```
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// How many rows there are.
    ///
    /// ```
    /// # use wasmkeep_actor::Rows;
    /// assert_eq!(Rows::default().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are no rows.
    ///
    /// ```
    /// # use wasmkeep_actor::Rows;
    /// assert!(Rows::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The row at `index`, if any.
    ///
    /// ```
    /// # use wasmkeep_actor::{Rows, Value};
    /// let rows = Rows::new(vec!["x".into()], vec![vec![Value::Integer(1)]]);
    /// assert!(rows.get(0).is_some());
    /// assert!(rows.get(1).is_none());
    /// ```
    pub fn get(&self, index: usize) -> Option<Row<'_>> {
        self.rows.get(index).map(|values| Row {
            columns: &self.columns,
            values,
        })
    }

    /// The first row, if any.
    ///
    /// ```
    /// # use wasmkeep_actor::{Rows, Value};
    /// let rows = Rows::new(vec!["n".into()], vec![vec![Value::Integer(5)]]);
    /// assert_eq!(rows.first().unwrap().get::<i64>(0).unwrap(), 5);
    /// ```
    pub fn first(&self) -> Option<Row<'_>> {
        self.get(0)
    }

    /// Iterates over the rows.
    ///
    /// ```
    /// # use wasmkeep_actor::{Rows, Value};
    /// let rows = Rows::new(vec!["n".into()], vec![vec![1.into()], vec![2.into()]]);
    /// let sum: i64 = rows.iter().map(|r| r.get::<i64>(0).unwrap()).sum();
    /// assert_eq!(sum, 3);
    /// ```
    pub fn iter(&self) -> RowIter<'_> {
        RowIter {
            columns: &self.columns,
            rows: self.rows.iter(),
        }
    }

    /// The raw values, row by row, each in column order.
    ///
    /// ```
    /// # use wasmkeep_actor::{Rows, Value};
    /// let rows = Rows::new(vec!["n".into()], vec![vec![Value::Null]]);
    /// assert_eq!(rows.into_values(), vec![vec![Value::Null]]);
    /// ```
    pub fn into_values(self) -> Vec<Vec<Value>> {
        self.rows
    }
}

impl<'a> IntoIterator for &'a Rows {
    type Item = Row<'a>;
    type IntoIter = RowIter<'a>;

    fn into_iter(self) -> RowIter<'a> {
        self.iter()
    }
}

/// An iterator over the rows of [`Rows`]; see [`Rows::iter`].
#[derive(Debug, Clone)]
pub struct RowIter<'a> {
    columns: &'a [String],
    rows: core::slice::Iter<'a, Vec<Value>>,
}

impl<'a> Iterator for RowIter<'a> {
    type Item = Row<'a>;

    fn next(&mut self) -> Option<Row<'a>> {
        let columns = self.columns;
        self.rows.next().map(|values| Row { columns, values })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.rows.size_hint()
    }
}

impl ExactSizeIterator for RowIter<'_> {}

/// One row of [`Rows`].
///
/// ```
/// # use wasmkeep_actor::{Rows, Value};
/// let rows = Rows::new(vec!["id".into(), "note".into()], vec![vec![1.into(), Value::Null]]);
/// let row = rows.first().unwrap();
/// let id: i64 = row.get("id").unwrap();
/// let note: Option<String> = row.get("note").unwrap();
/// assert_eq!((id, note), (1, None));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    columns: &'a [String],
    values: &'a [Value],
}

impl<'a> Row<'a> {
    /// Reads a column, by position (`usize`) or name (`&str`), as `T`.
    ///
    /// ```
    /// # use wasmkeep_actor::{Rows, Value};
    /// # let rows = Rows::new(vec!["n".into()], vec![vec![7.into()]]);
    /// # let row = rows.first().unwrap();
    /// let n: i32 = row.get("n").unwrap();
    /// assert_eq!(n, row.get::<i32>(0).unwrap());
    /// ```
    ///
    /// # Errors
    ///
    /// [`ValueError::NoSuchColumn`] or [`ValueError::IndexOutOfRange`] if
    /// there is no such column; otherwise [`ValueError::InColumn`] wrapping
    /// the conversion's error.
    pub fn get<T: FromValue>(&self, column: impl ColumnIndex) -> Result<T, ValueError> {
        let index = column.index_in(self.columns)?;
        let value = self.values.get(index).unwrap_or(&Value::Null);
        T::from_value(value).map_err(|e| ValueError::InColumn {
            column: self.columns[index].clone(),
            source: Box::new(e),
        })
    }

    /// The raw value of a column, if the row has it.
    ///
    /// ```
    /// # use wasmkeep_actor::{Rows, Value};
    /// # let rows = Rows::new(vec!["n".into()], vec![vec![7.into()]]);
    /// let row = rows.first().unwrap();
    /// assert_eq!(row.value(0), Some(&Value::Integer(7)));
    /// assert_eq!(row.value("missing"), None);
    /// ```
    pub fn value(&self, column: impl ColumnIndex) -> Option<&'a Value> {
        let index = column.index_in(self.columns).ok()?;
        self.values.get(index)
    }

    /// The row's values, in column order.
    ///
    /// ```
    /// # use wasmkeep_actor::{Rows, Value};
    /// # let rows = Rows::new(vec!["n".into()], vec![vec![7.into()]]);
    /// assert_eq!(rows.first().unwrap().values(), [Value::Integer(7)]);
    /// ```
    pub fn values(&self) -> &'a [Value] {
        self.values
    }

    /// The column names, in order.
    ///
    /// ```
    /// # use wasmkeep_actor::Rows;
    /// # let rows = Rows::new(vec!["n".into()], vec![vec![7.into()]]);
    /// assert_eq!(rows.first().unwrap().columns(), ["n"]);
    /// ```
    pub fn columns(&self) -> &'a [String] {
        self.columns
    }
}

// ---------------------------------------------------------------------------
// Calls

/// Runs SQL and returns the number of rows it changed.
///
/// With parameters the text must be one statement; without parameters it
/// may be several statements separated by `;`, run in order.
///
/// To learn the id of a row you insert, use [`query`] with `INSERT … RETURNING
/// id`, or `SELECT last_insert_rowid()` after the insert (both are plain SQLite
/// and work here).
///
/// ```no_run
/// use wasmkeep_actor::{params, storage};
///
/// # fn main() -> Result<(), wasmkeep_actor::SqlError> {
/// storage::exec("CREATE TABLE kv(k TEXT PRIMARY KEY, v BLOB); CREATE INDEX i ON kv(v)", [])?;
/// let changed = storage::exec("INSERT INTO kv VALUES (?1, ?2)", params!["a", vec![1u8, 2]])?;
/// assert_eq!(changed, 1);
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// - [`SqlError::Sqlite`] if SQLite refuses the statement (syntax,
///   constraint, ...).
/// - [`SqlError::NotAllowed`] for statements that reach outside the actor's
///   database (ATTACH, VACUUM INTO, load_extension, file PRAGMAs) or control
///   transactions in SQL, and after [`delete_self_durable`] succeeded in this
///   event ("deleted in this event").
/// - [`SqlError::Internal`] if the host failed.
pub fn exec(sql: &str, params: impl Params) -> Result<u64, SqlError> {
    wit::exec(sql, &to_wit_params(params)).map_err(SqlError::from_wit)
}

/// Runs one statement and returns its rows.
///
/// ```no_run
/// use wasmkeep_actor::storage;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let rows = storage::query("SELECT count(*) AS n FROM sqlite_schema", [])?;
/// let n: i64 = rows.first().expect("one row").get("n")?;
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// The same as [`exec`].
pub fn query(sql: &str, params: impl Params) -> Result<Rows, SqlError> {
    let result = wit::query(sql, &to_wit_params(params)).map_err(SqlError::from_wit)?;
    Ok(Rows {
        columns: result.columns,
        rows: result
            .rows
            .into_iter()
            .map(|row| row.into_iter().map(Value::from_wit).collect())
            .collect(),
    })
}

/// Like [`exec`] (one statement), and returns only once the write is
/// durable: on one node, synced to disk; in a cluster, acknowledged by the
/// bucket.
///
/// ```no_run
/// use wasmkeep_actor::{params, storage};
///
/// # fn main() -> Result<(), wasmkeep_actor::SqlError> {
/// storage::exec_durable("INSERT INTO payments(id) VALUES (?1)", params![42])?;
/// // Only now tell the client the payment is recorded.
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// As [`exec`], and [`SqlError::NotAllowed`] ("open transaction") inside an
/// open transaction (nothing changes). [`SqlError::Internal`] means the
/// write is not known to be durable.
pub fn exec_durable(sql: &str, params: impl Params) -> Result<u64, SqlError> {
    wit::exec_durable(sql, &to_wit_params(params)).map_err(SqlError::from_wit)
}

/// Returns once every write this event has made so far is kept: what the
/// end of the event would keep, but before the answer goes out.
///
/// [`Responder::send`](crate::Responder::send) (and so the default
/// [`Actor::on_request_with`](crate::Actor::on_request_with)) and the answer
/// of [`Actor::on_call`](crate::Actor::on_call) call it for you, so a `200`
/// acknowledges the writes before it. Call it yourself before an answer that
/// leaves some other way (a socket message), or use it to know early.
///
/// In a cluster the database is uploaded if it changed since it was last
/// acknowledged; on one node committed writes are already kept (they survive
/// a crash of the host; [`exec_durable`] also syncs the disk), so it returns
/// at once. Since WIT 0.2.2.
///
/// ```no_run
/// use wasmkeep_actor::{params, storage};
///
/// # fn main() -> Result<(), wasmkeep_actor::SqlError> {
/// storage::transaction(|| {
///     storage::exec("UPDATE accounts SET balance = balance - ?1 WHERE id = 1", params![5])?;
///     storage::exec("UPDATE accounts SET balance = balance + ?1 WHERE id = 2", params![5])?;
///     Ok::<_, wasmkeep_actor::SqlError>(())
/// })?;
/// storage::flush()?; // both updates are kept now, even in a cluster
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// [`SqlError::NotAllowed`] ("open transaction") inside an open transaction:
/// commit first. [`SqlError::Internal`]: the writes are not known to be
/// kept (the upload may still land); the event's writes are then not kept,
/// and the next event restores what the bucket holds. Answer so that the
/// client retries.
pub fn flush() -> Result<(), SqlError> {
    wit::flush().map_err(SqlError::from_wit)
}

/// Opens a transaction. Prefer [`transaction`], which always closes it.
///
/// ```no_run
/// use wasmkeep_actor::storage;
///
/// # fn main() -> Result<(), wasmkeep_actor::SqlError> {
/// storage::begin()?;
/// storage::exec("UPDATE accounts SET balance = balance - 10 WHERE id = 1", [])?;
/// storage::exec("UPDATE accounts SET balance = balance + 10 WHERE id = 2", [])?;
/// storage::commit()?;
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// [`SqlError::NotAllowed`] if a transaction is already open or storage is
/// refused in this state; [`SqlError::Internal`] if the host failed.
pub fn begin() -> Result<(), SqlError> {
    wit::begin().map_err(SqlError::from_wit)
}

/// Commits the open transaction.
///
/// ```no_run
/// # fn main() -> Result<(), wasmkeep_actor::SqlError> {
/// wasmkeep_actor::storage::commit()?;
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// [`SqlError::NotAllowed`] ("no open transaction") if none is open;
/// [`SqlError::Sqlite`] if SQLite refuses the commit (a deferred
/// constraint); [`SqlError::Internal`] if the host failed.
pub fn commit() -> Result<(), SqlError> {
    wit::commit().map_err(SqlError::from_wit)
}

/// Rolls the open transaction back.
///
/// ```no_run
/// # fn main() -> Result<(), wasmkeep_actor::SqlError> {
/// wasmkeep_actor::storage::rollback()?;
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// [`SqlError::NotAllowed`] ("no open transaction") if none is open;
/// [`SqlError::Internal`] if the host failed.
pub fn rollback() -> Result<(), SqlError> {
    wit::rollback().map_err(SqlError::from_wit)
}

/// Runs `f` in a transaction: commits if it returns `Ok`, rolls back if it
/// returns `Err`. The error type only needs `From<SqlError>`, so `?` works on
/// storage calls inside.
///
/// If the rollback after an `Err` fails, `f`'s error is still returned (a
/// transaction left open is rolled back when the event ends). If the commit
/// fails, a rollback is attempted and the commit's error is returned. A panic
/// inside `f` traps the event, which rolls the transaction back.
///
/// ```no_run
/// use wasmkeep_actor::{params, storage, SqlError};
///
/// fn transfer(from: i64, to: i64, amount: i64) -> Result<(), SqlError> {
///     storage::transaction(|| {
///         storage::exec("UPDATE acct SET bal = bal - ?1 WHERE id = ?2", params![amount, from])?;
///         storage::exec("UPDATE acct SET bal = bal + ?1 WHERE id = ?2", params![amount, to])?;
///         Ok(())
///     })
/// }
/// ```
///
/// # Errors
///
/// The error of [`begin`] or [`commit`] (converted into `E`), or the error
/// `f` returned.
pub fn transaction<T, E, F>(f: F) -> Result<T, E>
where
    F: FnOnce() -> Result<T, E>,
    E: From<SqlError>,
{
    begin()?;
    match f() {
        Ok(value) => match commit() {
            Ok(()) => Ok(value),
            Err(e) => {
                let _ = rollback();
                Err(e.into())
            }
        },
        Err(e) => {
            let _ = rollback();
            Err(e)
        }
    }
}

/// Deletes the actor when this event ends. Storage keeps working until then.
///
/// At the end of the event the alarm is forgotten, sockets are closed with
/// 1000 "actor deleted", the files are removed and the actor is given up; the
/// next event at this address meets a new, empty actor (`on_init` runs
/// again). In a cluster the delete is replicated when the event ends and is
/// lost if that upload fails; use [`delete_self_durable`] to know.
///
/// ```no_run
/// wasmkeep_actor::storage::delete_self();
/// ```
pub fn delete_self() {
    wit::delete_self();
}

/// Deletes the actor now, inside the call, so that the answer can follow it.
///
/// On `Ok` the actor is deleted and durable so; every later storage call in
/// this event is [`SqlError::NotAllowed`] ("deleted in this event"),
/// [`alarms::get`](crate::alarms::get) returns `None` and
/// [`alarms::set`](crate::alarms::set)/[`clear`](crate::alarms::clear) do
/// nothing. The rest happens when the event ends, as after [`delete_self`].
///
/// ```no_run
/// use wasmkeep_actor::{storage, Response, SqlError};
///
/// fn delete() -> Response {
///     match storage::delete_self_durable() {
///         Ok(()) => Response::text(200, "deleted"),
///         Err(SqlError::Internal(m)) => Response::text(503, format!("try again: {m}")),
///         Err(e) => Response::text(409, e.to_string()),
///     }
/// }
/// ```
///
/// # Errors
///
/// - [`SqlError::NotAllowed`] inside an open transaction: nothing changes
///   and the transaction stays open; commit or roll back first.
/// - [`SqlError::Internal`]: not known to be durable. On one node the files
///   could not be removed and storage stays refused; in a cluster the upload
///   may still land and this event's writes are not kept. Calling again is
///   safe.
pub fn delete_self_durable() -> Result<(), SqlError> {
    wit::delete_self_durable().map_err(SqlError::from_wit)
}

/// The bookmark of the actor's state as it is now: an opaque string naming a
/// position in the actor's history, which [`restore_on_next_session`] can go
/// back to. Bookmarks of one actor sort as their positions do: a later
/// state's sorts after an earlier one's. What the event wrote so far is made
/// durable first, as [`flush`] does. `None` where the host keeps no history
/// (a node served with `--no-history`; otherwise it is kept for the app's
/// retention window).
/// Durable Objects' `getCurrentBookmark`. Since WIT 0.2.4.
///
/// ```no_run
/// use wasmkeep_actor::storage;
///
/// # fn main() -> Result<(), wasmkeep_actor::SqlError> {
/// if let Some(before) = storage::current_bookmark()? {
///     storage::exec("DELETE FROM items", [])?;
///     // Changed our mind: the next event sees the items again.
///     let undo = storage::restore_on_next_session(&before)?;
///     # let _ = undo;
/// }
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// As [`flush`]: [`SqlError::NotAllowed`] inside an open transaction or after
/// [`delete_self_durable`]; [`SqlError::Internal`]: the writes are not known
/// to be kept.
pub fn current_bookmark() -> Result<Option<String>, SqlError> {
    wit::current_bookmark().map_err(SqlError::from_wit)
}

/// The bookmark of the last state written at or before `at_ms`
/// (milliseconds since the Unix epoch on the host's clock, as
/// [`context::now`](crate::context::now) gives it), or `None`: no state was
/// written by then, it lies before the actor's newest delete, or the host
/// keeps no history (a node served with `--no-history`). Durable Objects'
/// `getBookmarkForTime`. Since WIT 0.2.4.
///
/// # Errors
///
/// [`SqlError::Internal`]: the history could not be read.
pub fn bookmark_for_time(at_ms: u64) -> Result<Option<String>, SqlError> {
    wit::bookmark_for_time(at_ms).map_err(SqlError::from_wit)
}

/// Asks the host to restore the actor to `bookmark` once this event has
/// ended, and returns the bookmark that undoes it (the state as it is now,
/// made durable first as [`current_bookmark`] does). Durable Objects'
/// `onNextSessionRestoreBookmark`. Since WIT 0.2.4.
///
/// When the event ends with its writes kept, the state at `bookmark` becomes
/// the actor's newest state, before its next event: open sockets are closed
/// with 1012 "actor restored", the alarm becomes the restored state's, and
/// the next event starts a fresh instance on the restored state (`on_init`
/// does not run again). The last call of an event counts; an event that
/// deletes the actor, or whose writes are not kept, restores nothing. A
/// restore the host refuses then (a bookmark before the actor's newest
/// delete, or older than the retention window) changes nothing and is
/// logged by the host.
///
/// # Errors
///
/// [`SqlError::NotAllowed`] at once, nothing asked: `bookmark` is not a
/// bookmark, or sorts after the current state; the host keeps no history (a
/// node served with `--no-history`); inside an open transaction; after a
/// delete in this event. [`SqlError::Internal`]: the current state is not
/// known to be kept.
pub fn restore_on_next_session(bookmark: &str) -> Result<String, SqlError> {
    wit::restore_on_next_session(bookmark).map_err(SqlError::from_wit)
}
