//! TLS between node processes and the cluster token's rotation (ADR 074),
//! over real `wasmkeep-shim serve --node-id` processes on a `file://` bucket:
//! with certificates from `wasmkeep-shim cluster certs`, a request, a
//! WebSocket and a call are carried between node processes over mutual TLS;
//! a node refuses a peer it cannot verify (no certificate, another CA's, a
//! server another CA signed, a plain peer); a node given a new token and the
//! previous one takes both, one given only the new refuses the old.

mod common;

use common::node_process::{NodeProcess, ops, start_app_with, testee_manifest};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `wasmkeep-shim cluster certs --out dir --nodes nodes`: the CA's file.
fn certs(dir: &Path, nodes: &str) -> PathBuf {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_wasmkeep-shim"))
        .args(["cluster", "certs", "--nodes", nodes, "--out"])
        .arg(dir)
        .output()
        .expect("cluster certs runs");
    assert!(
        out.status.success(),
        "cluster certs: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.join("ca.crt")
}

/// A node process over TLS with the certificate `certs/<id>.crt`, trusting `ca`.
fn start_tls(manifest: &Path, id: &str, bucket: &str, dir: &Path, certs: &Path, ca: &Path) -> NodeProcess {
    let cert = certs.join(format!("{id}.crt")).display().to_string();
    let key = certs.join(format!("{id}.key")).display().to_string();
    let ca = ca.display().to_string();
    start_app_with(
        manifest,
        id,
        bucket,
        dir,
        &["--tls-cert", &cert, "--tls-key", &key, "--tls-ca", &ca],
    )
}

/// The address `node` advertises to its peers (from its log).
fn peer_address(node: &NodeProcess) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(at) = node.log().lines().find_map(|l| {
            l.split_once(", at ")
                .map(|(_, a)| a.trim().to_owned())
                .filter(|a| a.starts_with("https://"))
        }) {
            return at;
        }
        assert!(
            Instant::now() < deadline,
            "no peer address in {}'s log:\n{}",
            node.id,
            node.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until `node`'s log holds `text`.
fn log_says(node: &NodeProcess, text: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !node.log().contains(text) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    true
}

/// The testee's call of `target` (held elsewhere) from `caller` through `node`:
/// the call's outcome.
fn call(node: &NodeProcess, caller: &str, target: &str) -> serde_json::Value {
    let (status, body) = ops(
        node,
        caller,
        &serde_json::json!([{ "op": "call", "class": "testee", "name": target, "payload": "{\"ops\":[]}" }]),
    );
    assert_eq!(status, 200, "{body}");
    let outer: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    outer.pointer("/outcomes/0").cloned().unwrap_or(outer)
}

/// The answer of `ws_url` to `echo:hello`, if any within 10 s.
fn echo(ws_url: &str) -> Option<String> {
    use futures_util::{SinkExt as _, StreamExt as _};
    use tokio_tungstenite::tungstenite::Message;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio");
    rt.block_on(async {
        let (mut ws, _) = tokio_tungstenite::connect_async(ws_url).await.ok()?;
        ws.send(Message::text("echo:hello")).await.ok()?;
        let answer = tokio::time::timeout(Duration::from_secs(10), async {
            while let Some(Ok(m)) = ws.next().await {
                if let Message::Text(t) = m {
                    return Some(t.as_str().to_owned());
                }
            }
            None
        })
        .await;
        let _ = ws.close(None).await;
        answer.ok().flatten()
    })
}

#[test]
fn requests_sockets_and_calls_are_carried_between_node_processes_over_tls() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("file://{}", dir.path().join("bucket").display());
    let manifest = testee_manifest(dir.path());
    let ca = certs(&dir.path().join("certs"), "n1,n2");
    let n1 = start_tls(&manifest, "n1", &url, dir.path(), &dir.path().join("certs"), &ca);
    let n2 = start_tls(&manifest, "n2", &url, dir.path(), &dir.path().join("certs"), &ca);
    assert!(peer_address(&n1).starts_with("https://127.0.0.1:"), "n1 advertises TLS");
    let (status, body) = ops(&n1, "a", &serde_json::json!([]));
    assert_eq!(status, 200, "n1 takes a: {body}");
    // A request through n2 is forwarded to n1 over TLS.
    let (status, body) = ops(&n2, "a", &serde_json::json!([]));
    assert_eq!(status, 200, "forwarded over TLS: {body}; n2's log:\n{}", n2.log());
    // A WebSocket through n2 reaches the holder over TLS.
    let (status, body) = ops(&n1, "room", &serde_json::json!([]));
    assert_eq!(status, 200, "n1 takes room: {body}");
    let ws_url = format!("{}/testee/room/lobby", n2.base.replacen("http://", "ws://", 1));
    assert_eq!(
        echo(&ws_url).as_deref(),
        Some("hello"),
        "the holder's actor echoes through n2; n2's log:\n{}",
        n2.log()
    );
    // A call from b on n2 to a on n1 goes over TLS.
    let (status, body) = ops(&n2, "b", &serde_json::json!([]));
    assert_eq!(status, 200, "n2 takes b: {body}");
    let outcome = call(&n2, "b", "a");
    assert!(
        outcome.pointer("/ok").is_some(),
        "b's call to a over TLS: {outcome}; n2's log:\n{}",
        n2.log()
    );
    // The call route is not on the clients' listener: only verified peers reach it.
    let (status, _) = common::http_body(
        "POST",
        &format!("{}{}", n1.base, wasmkeep_shim::cluster_calls::CALL_PATH),
        "{}",
    );
    assert_eq!(status, 404, "no call route for clients");
}

#[test]
fn a_node_refuses_a_peer_it_cannot_verify() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("file://{}", dir.path().join("bucket").display());
    let manifest = testee_manifest(dir.path());
    let ours = dir.path().join("ours");
    let theirs = dir.path().join("theirs");
    let ca = certs(&ours, "n1,n2");
    let other_ca = certs(&theirs, "n2,n3");
    let n1 = start_tls(&manifest, "n1", &url, dir.path(), &ours, &ca);
    let peer = peer_address(&n1);
    let (status, body) = ops(&n1, "a", &serde_json::json!([]));
    assert_eq!(status, 200, "n1 takes a: {body}");

    // A client with no certificate, and one speaking plain HTTP, get nothing.
    let plain = common::try_http_body(
        "GET",
        &format!("{}/_shim/cluster", peer.replacen("https://", "http://", 1)),
        "",
    );
    assert!(plain.is_err(), "plain HTTP to the peer listener: {plain:?}");
    let no_cert = tls_request(&peer, &ca, None);
    assert!(no_cert.is_err(), "a client without a certificate: {no_cert:?}");
    // A client that trusts our CA and shows another CA's certificate.
    let foreign = tls_request(&peer, &ca, Some(&theirs.join("n2")));
    assert!(foreign.is_err(), "a client with another CA's certificate: {foreign:?}");
    assert!(
        log_says(&n1, "refused a peer's connection"),
        "n1 says it refused them; its log:\n{}",
        n1.log()
    );
    // Shown our certificate, the same request is answered.
    let ours_answered = tls_request(&peer, &ca, Some(&ours.join("n2")));
    assert!(
        ours_answered.as_deref().is_ok_and(|a| a.starts_with("HTTP/1.1 200")),
        "a peer with our CA's certificate: {ours_answered:?}"
    );

    // n3 has a certificate of another CA, and trusts that CA: n1 refuses it
    // as a client, and it refuses n1 as a server.
    let n3 = start_tls(&manifest, "n3", &url, dir.path(), &theirs, &other_ca);
    let (status, body) = ops(&n3, "a", &serde_json::json!([]));
    assert_eq!(status, 503, "n3 cannot reach a's holder: {body}");
    assert!(
        log_says(&n3, "presented a certificate not signed by the cluster CA"),
        "n3 says why n1 is refused; its log:\n{}",
        n3.log()
    );
    // A node without TLS refuses to carry anything to a TLS peer.
    let n4 = common::node_process::start_app(&manifest, "n4", &url, dir.path());
    let (status, body) = ops(&n4, "a", &serde_json::json!([]));
    assert_eq!(status, 503, "n4 (plain) does not reach a's holder: {body}");
    assert!(
        log_says(&n4, "serves its peers over TLS, and this node has no certificate"),
        "n4's log:\n{}",
        n4.log()
    );
}

/// A node whose certificate another CA signed does not start: it would be
/// refused by every peer.
#[test]
fn a_node_whose_certificate_is_not_the_cluster_ca_s_does_not_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ca = certs(&dir.path().join("ours"), "n1");
    certs(&dir.path().join("theirs"), "n1");
    let manifest = testee_manifest(dir.path());
    let bucket = format!("file://{}", dir.path().join("bucket").display());
    let (status, stderr) = common::refused(
        common::serve(&manifest, &dir.path().join("n1"))
            .args(["--mode", "cluster", "--node-id", "n1", "--bucket", bucket.as_str()])
            .arg("--tls-cert")
            .arg(dir.path().join("theirs/n1.crt"))
            .arg("--tls-key")
            .arg(dir.path().join("theirs/n1.key"))
            .arg("--tls-ca")
            .arg(&ca),
    );
    assert!(!status.success(), "refused: {stderr}");
    assert!(
        stderr.contains("is not signed by the cluster CA") && stderr.contains("--tls-ca"),
        "says which file and what to do: {stderr}"
    );
}

/// `GET /_shim/cluster` of `peer` over TLS that trusts `ca` and shows the
/// certificate `<identity>.crt` (its key `<identity>.key`), or none: the answer.
fn tls_request(peer: &str, ca: &Path, identity: Option<&Path>) -> Result<String, String> {
    use rustls::pki_types::pem::PemObject as _;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio");
    rt.block_on(async {
        let mut roots = rustls::RootCertStore::empty();
        for c in CertificateDer::pem_file_iter(ca).expect("ca") {
            roots.add(c.expect("a certificate")).expect("a root");
        }
        let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
            rustls::crypto::aws_lc_rs::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots);
        let config = match identity {
            None => config.with_no_client_auth(),
            Some(id) => {
                let chain = CertificateDer::pem_file_iter(id.with_extension("crt"))
                    .expect("crt")
                    .collect::<Result<Vec<_>, _>>()
                    .expect("certificates");
                let key = PrivateKeyDer::from_pem_file(id.with_extension("key")).expect("key");
                config.with_client_auth_cert(chain, key).expect("an identity")
            }
        };
        let host = peer.trim_start_matches("https://");
        let tcp = tokio::net::TcpStream::connect(host).await.map_err(|e| e.to_string())?;
        let name = rustls::pki_types::ServerName::try_from("127.0.0.1").expect("name");
        let mut tls = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config))
            .connect(name, tcp)
            .await
            .map_err(|e| e.to_string())?;
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        tls.write_all(b"GET /_shim/cluster HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n")
            .await
            .map_err(|e| e.to_string())?;
        let mut answer = Vec::new();
        tls.read_to_end(&mut answer).await.map_err(|e| e.to_string())?;
        if answer.is_empty() {
            return Err("closed without an answer".into());
        }
        Ok(String::from_utf8_lossy(&answer).into_owned())
    })
}

/// The token's rotation: n1 has the new token and the previous, n2 only the
/// new, n3 only the old (not yet rotated). n1 takes both; n2 refuses the
/// old; a call between n1 and n3 goes both ways (n1 shows the previous token
/// to n3, which refused the new), and one from n2 to n3 is refused.
#[test]
fn a_node_with_the_new_and_the_previous_token_takes_both_and_one_with_the_new_only_refuses_the_old() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("file://{}", dir.path().join("bucket").display());
    let manifest = testee_manifest(dir.path());
    let both = ["--cluster-token", "new-token", "--cluster-token-previous", "old-token"];
    let n1 = start_app_with(&manifest, "n1", &url, dir.path(), &both);
    let n2 = start_app_with(&manifest, "n2", &url, dir.path(), &["--cluster-token", "new-token"]);
    let n3 = start_app_with(&manifest, "n3", &url, dir.path(), &["--cluster-token", "old-token"]);
    let status = |node: &NodeProcess, token: &str| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio");
        rt.block_on(async {
            reqwest::Client::new()
                .post(format!("{}{}", node.base, wasmkeep_shim::cluster_calls::CALL_PATH))
                .header(wasmkeep_shim::cluster_calls::TOKEN_HEADER, token)
                .body("{}")
                .send()
                .await
                .expect("an answer")
                .status()
                .as_u16()
        })
    };
    // 400: taken, then refused as no carried call; 403: the token refused.
    assert_eq!(status(&n1, "new-token"), 400, "n1 takes the new token");
    assert_eq!(status(&n1, "old-token"), 400, "n1 takes the previous token");
    assert_eq!(status(&n1, "other"), 403, "n1 refuses another");
    assert_eq!(status(&n2, "new-token"), 400, "n2 takes the new token");
    assert_eq!(status(&n2, "old-token"), 403, "n2 refuses the old token");

    for (node, actor) in [(&n1, "a1"), (&n2, "a2"), (&n3, "a3")] {
        let (status, body) = ops(node, actor, &serde_json::json!([]));
        assert_eq!(status, 200, "{} takes {actor}: {body}", node.id);
    }
    let ok = |outcome: &serde_json::Value| outcome.pointer("/ok").is_some();
    let from_n3 = call(&n3, "a3", "a1");
    assert!(ok(&from_n3), "n3 (old) to n1 (new and old): {from_n3}");
    let from_n1 = call(&n1, "a1", "a3");
    assert!(ok(&from_n1), "n1 (new, then old) to n3 (old): {from_n1}");
    let from_n2 = call(&n2, "a2", "a1");
    assert!(ok(&from_n2), "n2 (new) to n1 (new and old): {from_n2}");
    let refused = call(&n2, "a2", "a3");
    assert!(!ok(&refused), "n2 (new only) to n3 (old only) is refused: {refused}");
    assert!(
        refused.to_string().contains("refused this node's cluster token"),
        "the failure says so: {refused}"
    );
}
