//! `wasmkeep-shim cluster certs --out DIR`: a test cluster's certificates
//! (ADR 074). A CA of its own (`ca.crt`, `ca.key`) and, for each node, a
//! certificate it signed (`<node>.crt`, `<node>.key`) for both ends of a
//! TLS hop (server and client authentication), naming the node's id and the
//! hosts its peers reach it at. A real cluster's operator may use any CA and
//! tool instead: a node needs a certificate that the CA signed, naming the
//! host it listens for peers on, with client and server authentication.

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose,
};
use std::path::{Path, PathBuf};

/// Why the certificates were not made.
#[derive(Debug, thiserror::Error)]
pub enum CertsError {
    /// A node id or host is no name a certificate can carry.
    #[error("{name:?} cannot be named in a certificate ({source}): node ids and hosts are DNS names or IP addresses")]
    Name {
        /// The name.
        name: String,
        /// What rcgen said.
        source: rcgen::Error,
    },
    /// Making a key or signing failed.
    #[error("making the cluster's certificates failed: {0}")]
    Make(#[from] rcgen::Error),
    /// A file could not be written.
    #[error("writing {path}: {source}; pick a directory you may write with --out")]
    Write {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A node id twice, or none.
    #[error("{0}")]
    Nodes(String),
}

/// The files [`make`] wrote.
#[derive(Debug)]
pub struct Made {
    /// The CA's certificate: each node's `--tls-ca`.
    pub ca: PathBuf,
    /// Each node's id, certificate (`--tls-cert`) and key (`--tls-key`).
    pub nodes: Vec<(String, PathBuf, PathBuf)>,
}

/// The hosts a test cluster's certificates name when none are given.
pub const DEFAULT_HOSTS: &[&str] = &["localhost", "127.0.0.1", "::1"];

/// Writes a new CA and a certificate for each of `nodes`, naming `hosts`
/// and the node's id, into `out` (made if missing). Keys are written
/// readable by their owner only.
///
/// # Errors
/// A name that cannot be in a certificate, no nodes or a node twice, or a
/// file that could not be written.
pub fn make(out: &Path, nodes: &[String], hosts: &[String]) -> Result<Made, CertsError> {
    if nodes.is_empty() {
        return Err(CertsError::Nodes("name at least one node (--nodes n1,n2,n3)".into()));
    }
    for (i, n) in nodes.iter().enumerate() {
        if nodes[..i].contains(n) {
            return Err(CertsError::Nodes(format!("node {n} is named twice in --nodes")));
        }
    }
    std::fs::create_dir_all(out).map_err(|source| CertsError::Write {
        path: out.to_owned(),
        source,
    })?;
    let ca_key = KeyPair::generate()?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "wasmkeep cluster CA");
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca_params.self_signed(&ca_key)?;
    let ca = out.join("ca.crt");
    write(&ca, &ca_cert.pem(), false)?;
    write(&out.join("ca.key"), &ca_key.serialize_pem(), true)?;
    let issuer = Issuer::new(ca_params, ca_key);
    let mut made = Vec::new();
    for node in nodes {
        let mut names = vec![node.clone()];
        names.extend(hosts.iter().filter(|h| *h != node).cloned());
        let mut params = CertificateParams::new(names).map_err(|source| CertsError::Name {
            name: node.clone(),
            source,
        })?;
        params.distinguished_name.push(DnType::CommonName, node.as_str());
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth, ExtendedKeyUsagePurpose::ClientAuth];
        let key = KeyPair::generate()?;
        let cert = params.signed_by(&key, &issuer)?;
        let (cert_path, key_path) = (out.join(format!("{node}.crt")), out.join(format!("{node}.key")));
        write(&cert_path, &cert.pem(), false)?;
        write(&key_path, &key.serialize_pem(), true)?;
        made.push((node.clone(), cert_path, key_path));
    }
    Ok(Made { ca, nodes: made })
}

fn write(path: &Path, text: &str, secret: bool) -> Result<(), CertsError> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let failed = |source| CertsError::Write {
        path: path.to_owned(),
        source,
    };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(if secret { 0o600 } else { 0o644 })
        .open(path)
        .map_err(failed)?;
    file.write_all(text.as_bytes()).map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_certificates_load_and_a_foreign_ca_refuses_them() {
        let dir = tempfile::tempdir().expect("dir");
        let hosts: Vec<String> = DEFAULT_HOSTS.iter().map(|h| (*h).to_owned()).collect();
        let made = make(&dir.path().join("a"), &["n1".into(), "n2".into()], &hosts).expect("made");
        let other = make(&dir.path().join("b"), &["n1".into()], &hosts).expect("made");
        let (_, cert, key) = &made.nodes[1];
        crate::peer_tls::PeerTls::load(cert, key, &made.ca).expect("loads");
        let err = crate::peer_tls::PeerTls::load(cert, key, &other.ca).expect_err("another CA");
        assert!(err.to_string().contains("is not signed by the cluster CA"), "{err}");
        assert!(matches!(
            make(dir.path(), &["n1".into(), "n1".into()], &hosts),
            Err(CertsError::Nodes(_))
        ));
    }
}
