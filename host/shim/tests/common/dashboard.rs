//! The dashboard API's tests (dashboard_api.rs, dashboard_history.rs): a
//! single node serving the testee behind the dev server's router, and the
//! calls they make of it.

use serde_json::{Value, json};
use wasmkeep_shim::{Access, ClassSpec, Runtime, RuntimeConfig};

/// A dev server on 127.0.0.1 over a single node; its directory goes with it.
pub struct Server {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    _dir: tempfile::TempDir,
}

pub async fn start() -> Server {
    start_with(false).await
}

/// A single node serving the testee, keeping history (every state, ADR 064) when `history`.
pub async fn start_with(history: bool) -> Server {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = RuntimeConfig::for_tests(dir.path());
    config.virtual_clock = true;
    config.cache_dir = super::cache_dir();
    if history {
        config.history = Some(wasmkeep_shim::HistoryConfig {
            dir: dir.path().join("history"),
            every: std::time::Duration::ZERO,
        });
    }
    let rt = Runtime::new(config).expect("runtime");
    rt.add_app(
        "demo/app",
        &[ClassSpec {
            name: "testee".into(),
            component: super::component("conformance-testee-rust"),
            access: Access::Open,
        }],
    )
    .expect("app loads");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let app = wasmkeep_shim::server::router(rt, "demo/app".into())
        .into_make_service_with_connect_info::<std::net::SocketAddr>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Server {
        base: format!("http://{addr}"),
        _dir: dir,
    }
}

/// Status, the failure's kind (header), and the body as JSON (or a string).
pub async fn call(method: &str, url: &str, body: Option<Value>) -> (u16, Option<String>, Value) {
    let mut req = reqwest::Client::new().request(method.parse().expect("method"), url);
    if method != "GET" {
        req = req.header("content-type", "application/json");
    }
    if let Some(b) = body {
        req = req.body(b.to_string());
    }
    let r = req.send().await.expect("request");
    let status = r.status().as_u16();
    let kind = r
        .headers()
        .get(wasmkeep_shim::FAILURE_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = r.text().await.expect("body");
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, kind, body)
}

/// Runs the testee's ops (conformance/PROTOCOL.md) on actor `name` over HTTP.
pub async fn ops(s: &Server, name: &str, ops: Value) {
    let r = reqwest::Client::new()
        .post(format!("{}/testee/{name}", s.base))
        .body(json!({ "ops": ops }).to_string())
        .send()
        .await
        .expect("request");
    assert_eq!(r.status().as_u16(), 200, "{}", r.text().await.unwrap_or_default());
}
