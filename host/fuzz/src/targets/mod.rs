//! The five targets, one module each.

pub mod admin_json;
pub mod manifest;
pub mod routing;
pub mod sql_guard;
pub mod wit_values;

/// Every target's name, in the order `--target all` runs them.
pub const ALL: &[&str] = &["manifest", "routing", "sql_guard", "wit_values", "admin_json"];

mod served;
pub(crate) use served::ServedRouter;
