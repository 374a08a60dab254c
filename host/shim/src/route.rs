//! Where a request to an actor goes: its class, its name and the path the
//! guest sees, from the request's path and query (`/<class>/<name>/<path>`).
//! Pure, so that it can be tested and fuzzed without a server
//! (`host/fuzz`, target `routing`).

use axum::http::StatusCode;

/// An actor request's route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActorRoute {
    /// The class: the first segment, percent-decoded.
    pub class: String,
    /// The actor's name: the second segment, percent-decoded (never empty).
    pub name: String,
    /// What the guest sees: the path after the name as it was sent (`/` when
    /// there is none), then `?` and the query if there is one.
    pub rest: String,
}

/// Why a path is not an actor's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteError {
    /// There is no class and name in it (the dev server answers its no-route 404).
    NoRoute,
    /// The class or name is not valid percent-encoded UTF-8 (400).
    NotUtf8,
    /// The name is empty (404).
    EmptyName,
}

impl RouteError {
    /// The status the dev server answers with.
    pub fn status(self) -> StatusCode {
        match self {
            RouteError::NoRoute | RouteError::EmptyName => StatusCode::NOT_FOUND,
            RouteError::NotUtf8 => StatusCode::BAD_REQUEST,
        }
    }

    /// What the dev server says.
    pub fn message(self) -> &'static str {
        match self {
            RouteError::NoRoute => "no class and name: actors are at /<class>/<name>/<path>",
            RouteError::NotUtf8 => "the class or name is not valid percent-encoded UTF-8",
            RouteError::EmptyName => "an actor's name cannot be empty: /<class>/<name>/<path>",
        }
    }
}

/// Splits a request's `path` (as sent, not decoded) and `query` into the
/// actor's class and name (percent-decoded) and the path the guest sees.
///
/// # Errors
/// No class and name, a class or name that is not percent-encoded UTF-8, an
/// empty name.
pub fn actor_route(path: &str, query: Option<&str>) -> Result<ActorRoute, RouteError> {
    let mut parts = path.trim_start_matches('/').splitn(3, '/');
    let (Some(class), Some(name)) = (parts.next(), parts.next()) else {
        return Err(RouteError::NoRoute);
    };
    let (Some(class), Some(name)) = (percent_decode(class), percent_decode(name)) else {
        return Err(RouteError::NotUtf8);
    };
    if name.is_empty() {
        return Err(RouteError::EmptyName);
    }
    let rest = parts.next().map_or_else(|| "/".to_owned(), |r| format!("/{r}"));
    let rest = match query {
        Some(q) => format!("{rest}?{q}"),
        None => rest,
    };
    Ok(ActorRoute { class, name, rest })
}

/// Decodes `%XX` escapes; none if the result is not UTF-8 or a `%` is not
/// followed by two hex digits (the client gets 400).
pub fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            // RFC 3986: `%` and exactly two hex digits. `from_str_radix` alone
            // would take "+A" as 10, so `%+A` and `%0A` named the same actor.
            let (hi, lo) = (hex_digit(*b.get(i + 1)?)?, hex_digit(*b.get(i + 2)?)?);
            out.push(hi << 4 | lo);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::percent_decode;

    #[test]
    fn only_a_percent_and_two_hex_digits_is_an_escape() {
        assert_eq!(percent_decode("a%20b%C3%A9").as_deref(), Some("a bé"));
        assert_eq!(percent_decode("%0A").as_deref(), Some("\n"));
        for bad in ["%+A", "%-1", "% 1", "%4", "%", "%zz", "%C3"] {
            assert_eq!(percent_decode(bad), None, "{bad:?} is refused, not guessed");
        }
    }
}
