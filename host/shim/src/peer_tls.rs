//! TLS between node processes (ADR 074): mutual TLS under one cluster CA.
//! A node process started with `serve --tls-cert FILE --tls-key FILE
//! --tls-ca FILE` listens for its peers on a listener of its own, over TLS,
//! and takes only a peer whose certificate the CA signed; it reaches its
//! peers over TLS only, showing its own certificate, and takes only a server
//! whose certificate the CA signed and names the host it is reached at.
//! Forwarded requests, forwarded WebSockets, calls between node processes
//! and carried restores all go that way.
//!
//! The configuration is the process's: [`install`] sets it once at start,
//! and every client to a peer made afterwards ([`Forwarder`](crate::forward),
//! the calls' client) uses it.

use axum::body::Bytes;
use http_body_util::Full;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::{ClientConfig, RootCertStore, ServerConfig};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Why a node's TLS files make no configuration. Each says which file and
/// what to do.
#[derive(Debug, thiserror::Error)]
pub enum PeerTlsError {
    /// A file could not be read as PEM.
    #[error("reading {flag} {path}: {source}; name a PEM file this process can read")]
    Read {
        /// The flag that named the file.
        flag: &'static str,
        /// The file.
        path: PathBuf,
        /// What the PEM reader said.
        source: rustls::pki_types::pem::Error,
    },
    /// A file holds none of what it should.
    #[error("{flag} {path} holds no {what}: give a PEM file with one (wasmkeep-shim cluster certs makes them)")]
    Empty {
        /// The flag that named the file.
        flag: &'static str,
        /// The file.
        path: PathBuf,
        /// What was looked for.
        what: &'static str,
    },
    /// The CA's certificate is not one rustls takes as a root.
    #[error("the cluster CA {path} (--tls-ca) is not a CA certificate rustls takes: {source}")]
    Ca {
        /// The file.
        path: PathBuf,
        /// What rustls said.
        source: rustls::Error,
    },
    /// This node's certificate is not signed by the cluster CA.
    #[error(
        "this node's certificate {cert} (--tls-cert) is not signed by the cluster CA {ca} (--tls-ca), or is not a \
         node's certificate (it must allow client and server authentication): {source}; make it with that CA \
         (wasmkeep-shim cluster certs --out DIR)"
    )]
    NotSignedByCa {
        /// The node's certificate.
        cert: PathBuf,
        /// The CA.
        ca: PathBuf,
        /// What rustls said.
        source: rustls::Error,
    },
    /// The certificate and key make no TLS identity.
    #[error(
        "this node's certificate {cert} (--tls-cert) and key {key} (--tls-key) make no TLS identity: {source}; \
         check that the key is the certificate's"
    )]
    Identity {
        /// The node's certificate.
        cert: PathBuf,
        /// Its key.
        key: PathBuf,
        /// What rustls said.
        source: rustls::Error,
    },
}

/// A node process's TLS to its peers: the listener's configuration (which
/// asks every peer for its certificate) and the clients'.
pub struct PeerTls {
    server: Arc<ServerConfig>,
    client: Arc<ClientConfig>,
    ca: PathBuf,
}

impl std::fmt::Debug for PeerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerTls").field("ca", &self.ca).finish_non_exhaustive()
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

fn read_certs(flag: &'static str, path: &Path) -> Result<Vec<CertificateDer<'static>>, PeerTlsError> {
    let read = |source| PeerTlsError::Read {
        flag,
        path: path.to_owned(),
        source,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(read)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(read)?;
    if certs.is_empty() {
        return Err(PeerTlsError::Empty {
            flag,
            path: path.to_owned(),
            what: "certificate",
        });
    }
    Ok(certs)
}

impl PeerTls {
    /// Reads this node's certificate chain (`cert`, its own first), its key
    /// and the cluster CA's certificate (`ca`), and checks that the CA signed
    /// the node's certificate.
    ///
    /// # Errors
    /// A file is missing or holds no PEM of its kind, the CA is not one, the
    /// CA did not sign the certificate, or the key is not the certificate's.
    pub fn load(cert: &Path, key: &Path, ca: &Path) -> Result<Self, PeerTlsError> {
        let chain = read_certs("--tls-cert", cert)?;
        let private = PrivateKeyDer::from_pem_file(key).map_err(|source| match source {
            rustls::pki_types::pem::Error::NoItemsFound => PeerTlsError::Empty {
                flag: "--tls-key",
                path: key.to_owned(),
                what: "private key",
            },
            source => PeerTlsError::Read {
                flag: "--tls-key",
                path: key.to_owned(),
                source,
            },
        })?;
        let mut roots = RootCertStore::empty();
        for c in read_certs("--tls-ca", ca)? {
            roots.add(c).map_err(|source| PeerTlsError::Ca {
                path: ca.to_owned(),
                source,
            })?;
        }
        let roots = Arc::new(roots);
        let verifier = WebPkiClientVerifier::builder_with_provider(roots.clone(), provider())
            .build()
            .map_err(|e| PeerTlsError::Ca {
                path: ca.to_owned(),
                source: rustls::Error::General(e.to_string()),
            })?;
        // The node's own certificate passes what its peers will check.
        let (end, intermediates) = chain.split_first().ok_or_else(|| PeerTlsError::Empty {
            flag: "--tls-cert",
            path: cert.to_owned(),
            what: "certificate",
        })?;
        verifier
            .verify_client_cert(end, intermediates, UnixTime::now())
            .map_err(|source| PeerTlsError::NotSignedByCa {
                cert: cert.to_owned(),
                ca: ca.to_owned(),
                source,
            })?;
        let identity = |source| PeerTlsError::Identity {
            cert: cert.to_owned(),
            key: key.to_owned(),
            source,
        };
        let server = ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(identity)?
            .with_client_cert_verifier(verifier)
            .with_single_cert(chain.clone(), private.clone_key())
            .map_err(identity)?;
        let client = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(identity)?
            .with_root_certificates(roots)
            .with_client_auth_cert(chain, private)
            .map_err(identity)?;
        Ok(Self {
            server: Arc::new(server),
            client: Arc::new(client),
            ca: ca.to_owned(),
        })
    }

    /// Takes peers' connections: each peer must show a certificate the CA signed.
    pub fn acceptor(&self) -> tokio_rustls::TlsAcceptor {
        tokio_rustls::TlsAcceptor::from(self.server.clone())
    }

    /// Reaches peers, showing this node's certificate.
    pub fn connector(&self) -> tokio_rustls::TlsConnector {
        tokio_rustls::TlsConnector::from(self.client.clone())
    }

    /// The cluster CA's file, for messages.
    pub fn ca(&self) -> &Path {
        &self.ca
    }
}

static INSTALLED: OnceLock<PeerTls> = OnceLock::new();

/// Makes `tls` this process's TLS to its peers, once, before any client to a
/// peer is made.
///
/// # Errors
/// Another configuration was installed first: it is given back.
pub fn install(tls: PeerTls) -> Result<(), PeerTls> {
    INSTALLED.set(tls)
}

/// This process's TLS to its peers, if it talks to them over TLS.
pub fn installed() -> Option<&'static PeerTls> {
    INSTALLED.get()
}

/// An HTTP client to peers: over TLS only when TLS is installed, else
/// plain HTTP only (an `https://` peer is then refused by [`check_address`]).
pub(crate) type PeerClient = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// A pooled client to peers, as [`PeerClient`] says.
pub(crate) fn client() -> PeerClient {
    let connector = match installed() {
        Some(tls) => hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config((*tls.client).clone())
            .https_only()
            .enable_http1()
            .build(),
        None => {
            // Never used for https (check_address refuses it first), but the
            // connector needs a configuration: one that trusts nobody.
            let nobody = ClientConfig::builder_with_provider(provider())
                .with_safe_default_protocol_versions()
                .expect("aws-lc-rs has rustls's default protocol versions")
                .with_root_certificates(RootCertStore::empty())
                .with_no_client_auth();
            hyper_rustls::HttpsConnectorBuilder::new()
                .with_tls_config(nobody)
                .https_or_http()
                .enable_http1()
                .build()
        }
    };
    Client::builder(TokioExecutor::new()).build(connector)
}

/// Whether this process may reach the peer at `address` (`http://…` or
/// `https://…`): over TLS exactly when it has TLS installed.
///
/// # Errors
/// A plain peer while this node talks TLS, or a TLS peer while it does not;
/// the message says what to start the nodes with.
pub fn check_address(address: &str) -> Result<(), String> {
    let tls = address.starts_with("https://") || address.starts_with("wss://");
    match (installed(), tls) {
        (Some(_), true) | (None, false) => Ok(()),
        (Some(t), false) => Err(format!(
            "the node process at {address} serves its peers without TLS, and this node talks to its peers over \
             TLS only (--tls-ca {}): start every node of the cluster with --tls-cert, --tls-key and --tls-ca",
            t.ca().display()
        )),
        (None, true) => Err(format!(
            "the node process at {address} serves its peers over TLS, and this node has no certificate: start it \
             with --tls-cert, --tls-key and --tls-ca as the others"
        )),
    }
}

/// The host part of `address` (`https://HOST:PORT/…`), as a TLS server name.
pub(crate) fn server_name(address: &str) -> Result<ServerName<'static>, String> {
    let rest = address.split_once("://").map_or(address, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or(rest);
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(v6),
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    ServerName::try_from(host.to_owned()).map_err(|e| format!("{address} names no TLS server ({e})"))
}

/// What failed when reaching the peer at `address`, said for an operator:
/// a TLS failure names the certificate and the CA file, anything else is
/// given as it came.
pub(crate) fn explain(address: &str, error: &(dyn std::error::Error + 'static)) -> String {
    let mut found: Option<&rustls::Error> = None;
    let mut at: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = at {
        if let Some(r) = e.downcast_ref::<rustls::Error>() {
            found = Some(r);
            break;
        }
        // An I/O error's source skips the error it wraps (hyper-rustls wraps
        // tokio-rustls's, which wraps rustls's): look inside it.
        at = match e.downcast_ref::<std::io::Error>().and_then(|io| io.get_ref()) {
            Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
            None => e.source(),
        };
    }
    let ca = installed().map_or_else(|| "none".to_owned(), |t| t.ca().display().to_string());
    let Some(tls) = found else {
        return chain(error);
    };
    use rustls::{AlertDescription as A, CertificateError as C, Error as E};
    match tls {
        E::InvalidCertificate(C::UnknownIssuer | C::BadSignature) => format!(
            "the node process at {address} presented a certificate not signed by the cluster CA ({ca}, --tls-ca): \
             {tls}; give every node a certificate that CA signed"
        ),
        E::InvalidCertificate(C::NotValidForName | C::NotValidForNameContext { .. }) => format!(
            "the node process at {address} presented a certificate that does not name the host it is reached at: \
             {tls}; make its certificate with that host (wasmkeep-shim cluster certs --host HOST)"
        ),
        E::InvalidCertificate(_) => format!(
            "the node process at {address} presented a certificate this node does not take: {tls}; give it a \
             valid certificate the cluster CA ({ca}) signed"
        ),
        E::AlertReceived(
            A::CertificateRequired | A::BadCertificate | A::UnknownCA | A::CertificateUnknown | A::DecryptError,
        ) => format!(
            "the node process at {address} refused this node's certificate ({tls}): its --tls-ca must be the CA \
             that signed this node's --tls-cert ({ca} here)"
        ),
        E::InvalidMessage(_) => {
            format!("the node process at {address} does not answer TLS ({tls}): is it started without --tls-cert?")
        }
        _ => format!("TLS with the node process at {address} failed: {tls}"),
    }
}

/// `error` and its sources, joined.
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut out = error.to_string();
    let mut at = error.source();
    while let Some(e) = at {
        let s = e.to_string();
        if !out.contains(&s) {
            out.push_str(": ");
            out.push_str(&s);
        }
        at = e.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_names_come_from_the_address_s_host() {
        let name = |a: &str| server_name(a).map(|n| n.to_str().into_owned());
        assert_eq!(name("https://127.0.0.1:9001").ok().as_deref(), Some("127.0.0.1"));
        assert_eq!(
            name("wss://node-1.example:9001/c/a/x").ok().as_deref(),
            Some("node-1.example")
        );
        assert_eq!(name("https://[::1]:9001").ok().as_deref(), Some("::1"));
        assert!(name("https://:9001").is_err());
    }
}
