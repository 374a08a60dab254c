//! Who an actor is: its app, class and name, and where its files live.

use serde::{Deserialize, Serialize};
use sha2::Digest as _;
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

    /// The name as it appears in file names and bucket keys: the lower-case
    /// hex of its UTF-8 bytes, or for a name over 64 bytes the hex of its
    /// first 32 bytes, `-`, and the hex of its SHA-256 (129 characters). A
    /// file name is at most 255 bytes, and the host adds suffixes to it
    /// (`.db-wal`, `.db.deleting`, `.db.replaced`); ADR 0028 §4 shortens such
    /// names with a hash. A shortened name cannot be decoded: the full name
    /// is kept inside the actor's database (ADR 012).
    pub fn encoded_name(&self) -> String {
        let bytes = self.name.as_bytes();
        if bytes.len() <= MAX_PLAIN_NAME_BYTES {
            return hex::encode(bytes);
        }
        let digest = sha2::Sha256::digest(bytes);
        format!(
            "{}-{}",
            hex::encode(&bytes[..SHORTENED_PREFIX_BYTES]),
            hex::encode(digest)
        )
    }

    /// Decodes a name written by [`ActorKey::encoded_name`]; `None` for a
    /// shortened one (or anything else).
    pub fn name_from_encoded(encoded: &str) -> Option<String> {
        String::from_utf8(hex::decode(encoded).ok()?).ok()
    }

    /// Whether an encoded name is a shortened one (its full name is only inside).
    pub fn is_shortened(encoded: &str) -> bool {
        encoded.len() == SHORTENED_LEN
            && encoded.as_bytes()[SHORTENED_PREFIX_BYTES * 2] == b'-'
            && encoded.bytes().filter(|b| *b == b'-').count() == 1
            && encoded.bytes().all(|b| b == b'-' || b.is_ascii_hexdigit())
    }
}

/// Names up to this many bytes are encoded whole.
pub const MAX_PLAIN_NAME_BYTES: usize = 64;
/// A shortened name keeps this many of the name's first bytes (readable in a listing).
const SHORTENED_PREFIX_BYTES: usize = 32;
/// The length of a shortened encoded name.
const SHORTENED_LEN: usize = SHORTENED_PREFIX_BYTES * 2 + 1 + 64;

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
            ActorKey::name_from_encoded(&k.encoded_name()).as_deref(),
            Some("u-1842 ü"),
            "hex names decode back"
        );
    }

    #[test]
    fn long_names_are_shortened_with_a_hash_and_stay_distinct() {
        let at_limit = ActorKey::new("a/b", "c", "x".repeat(MAX_PLAIN_NAME_BYTES));
        assert_eq!(at_limit.encoded_name().len(), 128, "64 bytes are encoded whole");
        assert!(ActorKey::name_from_encoded(&at_limit.encoded_name()).is_some());
        let long = ActorKey::new("a/b", "c", format!("{}1", "x".repeat(10_000)));
        let other = ActorKey::new("a/b", "c", format!("{}2", "x".repeat(10_000)));
        let encoded = long.encoded_name();
        assert_eq!(encoded.len(), 129, "{encoded}");
        assert!(ActorKey::is_shortened(&encoded), "{encoded}");
        assert_eq!(
            ActorKey::name_from_encoded(&encoded),
            None,
            "a shortened name cannot be decoded"
        );
        assert_ne!(encoded, other.encoded_name(), "names with the same start stay apart");
        assert!(
            encoded.starts_with(&hex::encode("x".repeat(32))),
            "its start is readable"
        );
        assert!(!ActorKey::is_shortened(&at_limit.encoded_name()));
        assert!(!ActorKey::is_shortened("zz-zz"), "only the host's own form counts");
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
