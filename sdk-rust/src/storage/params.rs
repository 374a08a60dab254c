//! [`Params`]: a statement's parameters, in binding order.

use crate::__private::bindings::wasmkeep::actor::types as wit_types;

use super::Value;

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

pub(super) fn to_wit_params(params: impl Params) -> Vec<wit_types::SqlValue> {
    params.into_values().into_iter().map(Value::into_wit).collect()
}
