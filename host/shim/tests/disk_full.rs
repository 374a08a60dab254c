//! Full disks and full actors (hardening issue, item 3): an actor's database
//! has a quota, and on a disk with no space left a delete still frees it
//! (before, the removal's marker file could not be written, so every delete
//! failed and the disk stayed full). The disk is a small tmpfs the test
//! mounts, which needs root (CI runs as root); elsewhere that test says it
//! was skipped.

mod common;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use wasmkeep_shim::{ActorKey, HttpRequest, Runtime, RuntimeConfig};

fn runtime(data: &Path, max_actor_bytes: u64) -> Runtime {
    let mut config = RuntimeConfig::for_tests(data);
    config.cache_dir = common::cache_dir();
    config.max_actor_bytes = max_actor_bytes;
    let rt = Runtime::new(config).expect("runtime");
    common::add_testee_app(&rt);
    rt
}

fn ops(rt: &Runtime, key: &ActorKey, ops: Value) -> Vec<Value> {
    let body = serde_json::to_vec(&json!({ "ops": ops })).expect("json");
    let r = rt
        .request_blocking(key, HttpRequest::new("POST", "/", body))
        .expect("request");
    rt.settle(key);
    assert_eq!(r.status, 200, "{}", r.text());
    let v: Value = serde_json::from_slice(&r.body).expect("json");
    v["outcomes"].as_array().cloned().expect("outcomes")
}

/// Inserts 256 KiB rows until a write fails; the failure's message.
fn fill(rt: &Runtime, key: &ActorKey) -> String {
    ops(
        rt,
        key,
        json!([{ "op": "exec", "sql": "CREATE TABLE IF NOT EXISTS fill(b BLOB)" }]),
    );
    for _ in 0..400 {
        let out = ops(
            rt,
            key,
            json!([{ "op": "exec", "sql": "INSERT INTO fill VALUES (randomblob(262144))" }]),
        );
        if let Some(err) = out[0].get("err") {
            return err.to_string();
        }
    }
    panic!("100 MiB went in and nothing was full");
}

fn durable_delete(rt: &Runtime, key: &ActorKey) -> Value {
    ops(rt, key, json!([{ "op": "delete-self-durable" }])).remove(0)
}

#[test]
fn an_actor_past_its_quota_is_told_so_and_can_still_be_deleted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rt = runtime(dir.path(), 2 << 20);
    let key = ActorKey::new("t/app", "testee", "hoarder");
    let why = fill(&rt, &key);
    assert!(why.contains("quota of 2 MiB"), "{why}");
    let db = rt.admin().db_path(&key);
    let size = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0);
    assert!(size <= 2 << 20, "the database stays within its quota: {size} bytes");
    assert_eq!(durable_delete(&rt, &key), json!({ "ok": null }));
    let out = ops(&rt, &key, json!([{ "op": "exec", "sql": "CREATE TABLE t(x)" }]));
    assert_eq!(out[0], json!({ "ok": { "changed": 0 } }), "the new actor writes again");
}

/// A tmpfs of `mib` MiB mounted on a fresh directory, unmounted when dropped.
struct SmallDisk {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(mib: u32) -> Option<Self> {
        let dir = tempfile::tempdir().ok()?;
        let path = dir.path().join("disk");
        std::fs::create_dir(&path).ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m"), "tmpfs"])
            .arg(&path)
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(Self { path, _dir: dir })
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let unmounted = Command::new("umount")
            .arg(&self.path)
            .status()
            .is_ok_and(|s| s.success());
        if !unmounted {
            // Detached now, gone once nothing uses it.
            let _ = Command::new("umount").arg("-l").arg(&self.path).status();
        }
    }
}

#[test]
fn on_a_full_disk_a_delete_frees_the_space() {
    let Some(disk) = SmallDisk::mount(12) else {
        eprintln!("skipped: mounting a 12 MiB tmpfs needs root");
        return;
    };
    let rt = runtime(&disk.path, 1 << 30);
    let hog = ActorKey::new("t/app", "testee", "hog");
    let why = fill(&rt, &hog);
    assert!(why.contains("disk is full"), "{why}");
    let other = ActorKey::new("t/app", "testee", "other");
    assert_eq!(
        durable_delete(&rt, &hog),
        json!({ "ok": null }),
        "the durable delete works on a full disk"
    );
    // The space came back: another actor writes what the first could not.
    let out = ops(
        &rt,
        &other,
        json!([
            { "op": "exec", "sql": "CREATE TABLE t(b BLOB)" },
            { "op": "exec", "sql": "INSERT INTO t VALUES (randomblob(4000000))" },
        ]),
    );
    assert!(out.iter().all(|o| o.get("ok").is_some()), "{out:?}");
    // Everything let go of the disk before it is unmounted.
    rt.shutdown();
}
