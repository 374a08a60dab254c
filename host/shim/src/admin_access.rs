//! Who may use the admin API (`/_shim/`): it reads any actor's rows, arms
//! faults and moves the clock, so it is not for anyone who can reach the port
//! (docs/adr/011-admin-api-access.md).
//!
//! - Without a token: loopback clients only, and only requests addressed to a
//!   loopback host (`Host: 127.0.0.1`, `localhost`, `[::1]`), so a page that
//!   rebinds its own name to 127.0.0.1 cannot read actors' tables.
//! - With `serve --admin-token T`: any client that sends `Authorization: Bearer T`.
//! - Always: a request from a web page of another origin (`Origin`, or the
//!   browser's `Sec-Fetch-Site` other than `same-origin`/`none`) is refused, and every
//!   POST and DELETE must say `Content-Type: application/json`, which a page's
//!   form or `text/plain` post cannot send without the browser asking first.

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// Who may use the admin API.
#[derive(Debug, Clone, Default)]
pub struct AdminAccess {
    /// When set, admin requests must carry `Authorization: Bearer <token>`,
    /// and are then taken from any address and any host name.
    pub token: Option<String>,
}

fn refuse(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(json!({ "error": message }))).into_response()
}

/// The middleware in front of every `/_shim/` route.
pub(crate) async fn guard(State(access): State<Arc<AdminAccess>>, req: Request, next: Next) -> Response {
    let peer = req.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0);
    match check(&access, req.method(), req.headers(), peer) {
        Ok(()) => next.run(req).await,
        Err((status, message)) => refuse(status, message),
    }
}

/// Whether a request may use the admin API; the status and message if not.
/// `peer` is none when the router is served without connection info (an
/// embedding in the same process).
pub(crate) fn check(
    access: &AdminAccess,
    method: &Method,
    headers: &HeaderMap,
    peer: Option<SocketAddr>,
) -> Result<(), (StatusCode, &'static str)> {
    match &access.token {
        Some(token) => {
            let given = headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "));
            if !given.is_some_and(|g| same_bytes(g.as_bytes(), token.as_bytes())) {
                return Err((
                    StatusCode::UNAUTHORIZED,
                    "the admin API needs `Authorization: Bearer <token>`, the token `serve --admin-token` was given",
                ));
            }
        }
        None => {
            if peer.is_some_and(|p| !p.ip().is_loopback()) {
                return Err((
                    StatusCode::FORBIDDEN,
                    "the admin API answers loopback clients only; start serve with --admin-token to reach it from \
                     another machine",
                ));
            }
            let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
            if !host.is_some_and(is_loopback_authority) {
                return Err((
                    StatusCode::FORBIDDEN,
                    "the admin API answers requests addressed to 127.0.0.1, localhost or [::1] only (a page on another \
                     name cannot reach it); start serve with --admin-token to use another name",
                ));
            }
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let local = origin
            .to_str()
            .ok()
            .and_then(|o| o.strip_prefix("http://").or_else(|| o.strip_prefix("https://")))
            .is_some_and(is_loopback_authority);
        if !local {
            return Err((
                StatusCode::FORBIDDEN,
                "the admin API refuses requests from web pages of another origin",
            ));
        }
    }
    // A browser names where a request comes from: only the dashboard's own
    // page (same origin) or the user typing the address (none) may use the
    // API; a page of another port of this machine is `same-site`, refused too.
    let site = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok());
    if site.is_some_and(|s| !s.eq_ignore_ascii_case("same-origin") && !s.eq_ignore_ascii_case("none")) {
        return Err((
            StatusCode::FORBIDDEN,
            "the admin API refuses requests from web pages of another origin",
        ));
    }
    if method != Method::GET && method != Method::HEAD {
        let json = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"));
        if !json {
            return Err((
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "the admin API takes `Content-Type: application/json` on every POST and DELETE (send {} when there \
                 is nothing to say)",
            ));
        }
    }
    Ok(())
}

/// `localhost`, a loopback address, or either with a port.
fn is_loopback_authority(authority: &str) -> bool {
    let host = match authority.strip_prefix('[') {
        // [::1] or [::1]:8787
        Some(rest) => rest.split_once(']').map_or(rest, |(h, _)| h),
        None => authority.rsplit_once(':').map_or(authority, |(h, port)| {
            if port.bytes().all(|b| b.is_ascii_digit()) {
                h
            } else {
                authority
            }
        }),
    };
    host.eq_ignore_ascii_case("localhost") || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Compares without stopping at the first difference (a token's bytes are
/// not told apart by the time a wrong guess takes).
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(k.clone(), HeaderValue::from_str(v).expect("header"));
        }
        h
    }

    #[test]
    fn loopback_only_without_a_token() {
        let open = AdminAccess::default();
        let local: SocketAddr = "127.0.0.1:5000".parse().expect("addr");
        let remote: SocketAddr = "192.0.2.7:5000".parse().expect("addr");
        let h = headers(&[(header::HOST, "127.0.0.1:8787")]);
        assert!(check(&open, &Method::GET, &h, Some(local)).is_ok());
        assert!(
            check(&open, &Method::GET, &h, None).is_ok(),
            "an embedding in the process"
        );
        assert_eq!(
            check(&open, &Method::GET, &h, Some(remote)).map_err(|e| e.0),
            Err(StatusCode::FORBIDDEN)
        );
        for host in ["localhost", "LOCALHOST:1", "[::1]:8787", "[::1]", "127.0.0.2"] {
            assert!(
                check(&open, &Method::GET, &headers(&[(header::HOST, host)]), Some(local)).is_ok(),
                "{host}"
            );
        }
        for host in [
            "evil.example",
            "evil.example:8787",
            "127.0.0.1.evil.example",
            "0.0.0.0:8787",
        ] {
            assert_eq!(
                check(&open, &Method::GET, &headers(&[(header::HOST, host)]), Some(local)).map_err(|e| e.0),
                Err(StatusCode::FORBIDDEN),
                "{host}"
            );
        }
    }

    #[test]
    fn a_token_opens_it_to_any_address_and_only_with_the_token() {
        let access = AdminAccess {
            token: Some("s3cret".into()),
        };
        let remote: SocketAddr = "192.0.2.7:5000".parse().expect("addr");
        let good = headers(&[(header::HOST, "node.example"), (header::AUTHORIZATION, "Bearer s3cret")]);
        assert!(check(&access, &Method::GET, &good, Some(remote)).is_ok());
        let bad = headers(&[(header::HOST, "127.0.0.1"), (header::AUTHORIZATION, "Bearer s3cres")]);
        assert_eq!(
            check(&access, &Method::GET, &bad, None).map_err(|e| e.0),
            Err(StatusCode::UNAUTHORIZED)
        );
    }

    #[test]
    fn pages_of_other_origins_and_non_json_posts_are_refused() {
        let open = AdminAccess::default();
        let post = |extra: &[(header::HeaderName, &str)]| {
            let mut pairs = vec![(header::HOST, "127.0.0.1:8787")];
            pairs.extend_from_slice(extra);
            check(&open, &Method::POST, &headers(&pairs), None).map_err(|e| e.0)
        };
        assert_eq!(
            post(&[(header::CONTENT_TYPE, "text/plain")]),
            Err(StatusCode::UNSUPPORTED_MEDIA_TYPE)
        );
        assert_eq!(post(&[]), Err(StatusCode::UNSUPPORTED_MEDIA_TYPE));
        assert_eq!(
            post(&[(header::CONTENT_TYPE, "application/json; charset=utf-8")]),
            Ok(())
        );
        assert_eq!(
            post(&[
                (header::CONTENT_TYPE, "application/json"),
                (header::ORIGIN, "https://evil.example")
            ]),
            Err(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            post(&[
                (header::CONTENT_TYPE, "application/json"),
                (header::ORIGIN, "http://localhost:8787")
            ]),
            Ok(())
        );
        let fetched = |site: &str| {
            post(&[
                (header::CONTENT_TYPE, "application/json"),
                (header::HeaderName::from_static("sec-fetch-site"), site),
            ])
        };
        assert_eq!(fetched("same-origin"), Ok(()));
        assert_eq!(fetched("none"), Ok(()));
        assert_eq!(
            fetched("same-site"),
            Err(StatusCode::FORBIDDEN),
            "another port of this machine"
        );
        assert_eq!(fetched("cross-site"), Err(StatusCode::FORBIDDEN));
    }
}
