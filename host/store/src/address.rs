//! Who an actor is: its app, class and name, and where its files live.

use serde::{Deserialize, Serialize};
use std::fmt;

/// An actor's full address on the host: app (`tenant/app`), class and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ActorKey {
    /// `tenant/app`.
    pub app: String,
    /// The class, as named in the manifest.
    pub class: String,
    /// The actor's name within its class (any UTF-8).
    pub name: String,
}

impl ActorKey {
    /// Builds a key.
    pub fn new(app: impl Into<String>, class: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            app: app.into(),
            class: class.into(),
            name: name.into(),
        }
    }

    /// The name as lower-case hex of its UTF-8 bytes: how it appears in file and bucket keys.
    pub fn name_hex(&self) -> String {
        hex::encode(self.name.as_bytes())
    }

    /// Decodes a name written by [`ActorKey::name_hex`].
    pub fn name_from_hex(hex_name: &str) -> Option<String> {
        String::from_utf8(hex::decode(hex_name).ok()?).ok()
    }
}

impl fmt::Display for ActorKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}/{}", self.app, self.class, self.name)
    }
}

/// Checks an app name `tenant/app`: two non-empty parts of `[a-z0-9-_]`.
///
/// # Errors
/// A message saying what is wrong with the name.
pub fn validate_app_name(app: &str) -> Result<(), String> {
    let parts: Vec<&str> = app.split('/').collect();
    if parts.len() != 2 || parts.iter().any(|p| !valid_segment(p)) {
        return Err(format!(
            "app name {app:?} must be `tenant/app`, each part 1-63 characters of a-z, 0-9, '-' or '_'"
        ));
    }
    Ok(())
}

/// Checks a class name: 1-63 characters of `[a-z0-9-_]`, not starting with `_`
/// (paths under `/_` belong to the host).
///
/// # Errors
/// A message saying what is wrong with the name.
pub fn validate_class_name(class: &str) -> Result<(), String> {
    if !valid_segment(class) || class.starts_with('_') {
        return Err(format!(
            "class name {class:?} must be 1-63 characters of a-z, 0-9, '-' or '_', not starting with '_'"
        ));
    }
    Ok(())
}

fn valid_segment(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_hex() {
        let k = ActorKey::new("acme/shop", "cart", "u-1842 ü");
        assert_eq!(
            ActorKey::name_from_hex(&k.name_hex()).as_deref(),
            Some("u-1842 ü"),
            "hex names decode back"
        );
    }

    #[test]
    fn bad_names_are_refused() {
        assert!(validate_app_name("acme/shop").is_ok(), "tenant/app is accepted");
        assert!(validate_app_name("acme").is_err(), "an app without tenant is refused");
        assert!(
            validate_class_name("_shim").is_err(),
            "classes cannot shadow the admin API"
        );
        assert!(validate_class_name("Cart").is_err(), "upper case is refused");
    }
}
