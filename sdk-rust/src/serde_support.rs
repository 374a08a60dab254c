//! Serde in the SDK (the default feature `serde`): rows into your structs,
//! parameters from your values, JSON bodies both ways.
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use wasmkeep_actor::{Rows, Value, to_params};
//!
//! #[derive(Serialize, Deserialize, Debug, PartialEq)]
//! struct Item { id: i64, title: String, done: bool }
//!
//! // A struct's fields become `?1`, `?2`, ... in their order.
//! let p = to_params(&Item { id: 7, title: "milk".into(), done: false }).unwrap();
//! assert_eq!(p, vec![Value::Integer(7), Value::Text("milk".into()), Value::Integer(0)]);
//!
//! // Each row becomes one struct, its columns matched by name.
//! let rows = Rows::new(
//!     vec!["id".into(), "title".into(), "done".into()],
//!     vec![vec![Value::Integer(7), Value::Text("milk".into()), Value::Integer(1)]],
//! );
//! let items: Vec<Item> = rows.deserialize().unwrap();
//! assert_eq!(items, vec![Item { id: 7, title: "milk".into(), done: true }]);
//! ```

use crate::http::{Request, Response};
use crate::storage::{Params, Rows, SqlError, Value};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Why a value could not cross between your types and SQL or JSON.
#[derive(Debug, thiserror::Error)]
pub enum SerdeError {
    /// Serializing or deserializing failed (a missing column, a wrong type).
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// The value has no SQL form: only a struct, a tuple or a sequence of
    /// scalars can be parameters, and an integer must fit in 64 bits signed.
    #[error("{0}")]
    NotParams(String),
    /// The query itself failed.
    #[error(transparent)]
    Sql(#[from] SqlError),
}

/// The parameters `?1`, `?2`, ... from a struct (its fields in order), a
/// tuple or a sequence. `bool` is 0/1, `None` is NULL, a nested struct,
/// map or sequence is its JSON text; `Vec<u8>` as a field is JSON too (use
/// [`Value::Blob`] for a blob).
///
/// # Errors
/// [`SerdeError::NotParams`] for a scalar at the top, or an integer past
/// `i64::MAX`; [`SerdeError::Json`] if serializing failed.
pub fn to_params<T: Serialize + ?Sized>(value: &T) -> Result<Vec<Value>, SerdeError> {
    value.serialize(ParamsSerializer)?.into_iter().map(to_sql).collect()
}

fn to_sql(v: serde_json::Value) -> Result<Value, SerdeError> {
    Ok(match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Integer(i64::from(b)),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Value::Integer(i),
            (None, _) if n.is_u64() => {
                return Err(SerdeError::NotParams(format!(
                    "{n} does not fit an SQL integer (64 bits signed)"
                )));
            }
            (None, Some(f)) => Value::Real(f),
            (None, None) => return Err(SerdeError::NotParams(format!("{n} is not a number SQL has"))),
        },
        serde_json::Value::String(s) => Value::Text(s),
        nested @ (serde_json::Value::Array(_) | serde_json::Value::Object(_)) => Value::Text(nested.to_string()),
    })
}

fn to_json(v: &Value) -> serde_json::Value {
    match v {
        Value::Null => serde_json::Value::Null,
        Value::Integer(i) => (*i).into(),
        Value::Real(f) => serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, Into::into),
        Value::Text(s) => s.clone().into(),
        Value::Blob(b) => b.iter().copied().map(serde_json::Value::from).collect(),
    }
}

impl Rows {
    /// Each row as a `T`, its columns matched to `T`'s fields by name. An
    /// INTEGER column fills an integer or a `bool` (0 is false), TEXT a
    /// `String`, BLOB a `Vec<u8>`, NULL an `Option`.
    ///
    /// # Errors
    /// A column `T` needs is missing or of another type.
    pub fn deserialize<T: DeserializeOwned>(&self) -> Result<Vec<T>, SerdeError> {
        self.iter()
            .map(|row| {
                let fields: serde_json::Map<String, serde_json::Value> = self
                    .columns()
                    .iter()
                    .zip(row.values())
                    .map(|(c, v)| (c.clone(), to_json(v)))
                    .collect();
                deserialize_row(fields)
            })
            .collect()
    }
}

/// Deserializes one row, reading a 0/1 column into a `bool` field.
fn deserialize_row<T: DeserializeOwned>(fields: serde_json::Map<String, serde_json::Value>) -> Result<T, SerdeError> {
    match serde_json::from_value::<T>(serde_json::Value::Object(fields.clone())) {
        Ok(t) => Ok(t),
        // SQL has no boolean: retry with 0/1 read as false/true.
        Err(first) => {
            let as_bools: serde_json::Map<String, serde_json::Value> = fields
                .into_iter()
                .map(|(k, v)| match v.as_i64() {
                    Some(0) => (k, false.into()),
                    Some(1) => (k, true.into()),
                    _ => (k, v),
                })
                .collect();
            serde_json::from_value(serde_json::Value::Object(as_bools)).map_err(|_| first.into())
        }
    }
}

/// Runs a query and deserializes each row into a `T` ([`Rows::deserialize`]).
///
/// ```no_run
/// # use serde::Deserialize;
/// use wasmkeep_actor::{params, storage};
///
/// #[derive(Deserialize)]
/// struct Item { id: i64, title: String }
///
/// # fn main() -> Result<(), wasmkeep_actor::SerdeError> {
/// let open: Vec<Item> = storage::query_as("SELECT id, title FROM items WHERE done = ?1", params![false])?;
/// # Ok(()) }
/// ```
///
/// # Errors
/// The query failed ([`SerdeError::Sql`]) or a row does not fit `T`.
pub fn query_as<T: DeserializeOwned>(sql: &str, params: impl Params) -> Result<Vec<T>, SerdeError> {
    crate::storage::query(sql, params)?.deserialize()
}

impl Request {
    /// The body as JSON, deserialized into a `T`.
    ///
    /// ```
    /// # use serde::Deserialize;
    /// # use wasmkeep_actor::Request;
    /// #[derive(Deserialize)]
    /// struct New { title: String }
    /// let r = Request { body: br#"{"title":"milk"}"#.to_vec(), ..Default::default() };
    /// assert_eq!(r.json::<New>().unwrap().title, "milk");
    /// ```
    ///
    /// # Errors
    /// The body is not JSON of `T`'s shape.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(&self.body)
    }
}

impl Response {
    /// An `application/json` response with `value` serialized.
    ///
    /// ```
    /// # use wasmkeep_actor::Response;
    /// let r = Response::json_of(200, &vec![1, 2]);
    /// assert_eq!(r.body, b"[1,2]");
    /// ```
    ///
    /// A value that cannot be serialized (a map with non-string keys) is
    /// answered 500 with the reason.
    pub fn json_of<T: Serialize + ?Sized>(status: u16, value: &T) -> Self {
        match serde_json::to_string(value) {
            Ok(json) => Self::json(status, json),
            Err(e) => Self::text(500, format!("the response could not be serialized: {e}")),
        }
    }
}

/// Serializes a struct, tuple or sequence into its items in order (each
/// item through `serde_json`), keeping a struct's field order, which a JSON
/// object would not.
struct ParamsSerializer;

/// Collects the items of [`ParamsSerializer`].
#[derive(Default)]
struct Items(Vec<serde_json::Value>);

impl Items {
    fn push<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), serde_json::Error> {
        self.0.push(serde_json::to_value(v)?);
        Ok(())
    }
}

fn not_params(what: &str) -> serde_json::Error {
    serde::ser::Error::custom(format!(
        "parameters come from a struct, a tuple or a sequence, not {what}"
    ))
}

macro_rules! refuse_scalars {
    ($($method:ident($($t:ty)?) => $what:literal;)*) => {
        $(fn $method(self $(, _: $t)?) -> Result<Self::Ok, Self::Error> {
            Err(not_params($what))
        })*
    };
}

impl serde::Serializer for ParamsSerializer {
    type Ok = Vec<serde_json::Value>;
    type Error = serde_json::Error;
    type SerializeSeq = Items;
    type SerializeTuple = Items;
    type SerializeTupleStruct = Items;
    type SerializeTupleVariant = serde::ser::Impossible<Self::Ok, Self::Error>;
    type SerializeMap = serde::ser::Impossible<Self::Ok, Self::Error>;
    type SerializeStruct = Items;
    type SerializeStructVariant = serde::ser::Impossible<Self::Ok, Self::Error>;

    refuse_scalars! {
        serialize_bool(bool) => "a bool";
        serialize_i8(i8) => "a number";
        serialize_i16(i16) => "a number";
        serialize_i32(i32) => "a number";
        serialize_i64(i64) => "a number";
        serialize_u8(u8) => "a number";
        serialize_u16(u16) => "a number";
        serialize_u32(u32) => "a number";
        serialize_u64(u64) => "a number";
        serialize_f32(f32) => "a number";
        serialize_f64(f64) => "a number";
        serialize_char(char) => "a char";
        serialize_str(&str) => "a string";
        serialize_bytes(&[u8]) => "bytes";
        serialize_none() => "None";
        serialize_unit() => "()";
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Self::Ok, Self::Error> {
        value.serialize(self)
    }

    fn serialize_unit_struct(self, _: &'static str) -> Result<Self::Ok, Self::Error> {
        Ok(Vec::new())
    }

    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<Self::Ok, Self::Error> {
        Err(not_params("an enum"))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<Self::Ok, Self::Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Self::Ok, Self::Error> {
        Err(not_params("an enum"))
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq, Self::Error> {
        Ok(Items(Vec::with_capacity(len.unwrap_or(0))))
    }

    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple, Self::Error> {
        Ok(Items(Vec::with_capacity(len)))
    }

    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Self::SerializeTupleStruct, Self::Error> {
        Ok(Items(Vec::with_capacity(len)))
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Self::Error> {
        Err(not_params("an enum"))
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Self::Error> {
        Err(not_params("a map (its order is not the parameters' order)"))
    }

    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Self::SerializeStruct, Self::Error> {
        Ok(Items(Vec::with_capacity(len)))
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Self::Error> {
        Err(not_params("an enum"))
    }
}

/// The four ways a serializer hands over items in order, each pushing into [`Items`].
macro_rules! collect_items {
    ($($trait:ident :: $method:ident ($($key:ty)?)),*) => {
        $(impl serde::ser::$trait for Items {
            type Ok = Vec<serde_json::Value>;
            type Error = serde_json::Error;
            fn $method<T: Serialize + ?Sized>(&mut self, $(_: $key,)? v: &T) -> Result<(), Self::Error> {
                self.push(v)
            }
            fn end(self) -> Result<Self::Ok, Self::Error> {
                Ok(self.0)
            }
        })*
    };
}

collect_items!(
    SerializeSeq::serialize_element(),
    SerializeTuple::serialize_element(),
    SerializeTupleStruct::serialize_field(),
    SerializeStruct::serialize_field(&'static str)
);
