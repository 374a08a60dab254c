"""Tests of scripts/cargo-registry.py: `cargo publish` to it, `cargo fetch`
from it, refused publishes, and upload's dependencies (local or crates.io).

    python3 -m unittest discover -s scripts/tests -v
"""
import http.server
import io
import importlib.util
import json
import os
import pathlib
import struct
import subprocess
import tarfile
import tempfile
import threading
import unittest

HERE = pathlib.Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("cargo_registry", HERE.parent / "cargo-registry.py")
reg = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reg)


def write_crate(dir, name, deps=""):
    dir.mkdir(parents=True)
    (dir / "src").mkdir()
    (dir / "src" / "lib.rs").write_text("pub fn f() {}\n")
    (dir / "Cargo.toml").write_text(
        f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n'
        f'description = "test"\nlicense = "MIT"\n\n[dependencies]\n{deps}'
    )


class Registry(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = pathlib.Path(self.tmp.name)
        root = self.dir / "registry"
        (root / "index").mkdir(parents=True)
        handler = type("H", (reg.Handler,), {"root": root, "log_message": lambda *a: None})
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.root = root
        home = self.dir / "cargo-home"
        home.mkdir()
        (home / "config.toml").write_text(f'[registries.trial]\nindex = "sparse+{self.url}/index/"\n')
        self.env = dict(os.environ, CARGO_HOME=str(home), CARGO_REGISTRIES_TRIAL_TOKEN="any",
                        CARGO_TARGET_DIR=str(self.dir / "target"))

    def tearDown(self):
        self.server.shutdown()
        self.server.server_close()
        self.tmp.cleanup()

    def cargo(self, cwd, *args):
        return subprocess.run(["cargo", *args], cwd=cwd, env=self.env, capture_output=True, text=True)

    def test_index_paths_follow_cargos_layout(self):
        self.assertEqual(reg.index_path("a"), "1/a")
        self.assertEqual(reg.index_path("ab"), "2/ab")
        self.assertEqual(reg.index_path("abc"), "3/a/abc")
        self.assertEqual(reg.index_path("Wasmkeep-Actor"), "wa/sm/wasmkeep-actor")

    def test_cargo_publish_then_a_project_fetches_it(self):
        write_crate(self.dir / "base", "trial-base")
        write_crate(self.dir / "top", "trial-top", 'trial-base = { version = "0.1.0", path = "../base", registry = "trial" }\n')
        for name in ("base", "top"):
            r = self.cargo(self.dir / name, "publish", "--registry", "trial", "--no-verify", "--allow-dirty")
            self.assertEqual(r.returncode, 0, r.stderr)
        entry = json.loads((self.root / "index" / reg.index_path("trial-top")).read_text())
        self.assertEqual([(d["name"], d["req"], d["registry"]) for d in entry["deps"]],
                         [("trial-base", "^0.1.0", None)])
        # A project of its own resolves both from the index and downloads both.
        write_crate(self.dir / "user", "trial-user", 'trial-top = { version = "0.1", registry = "trial" }\n')
        r = self.cargo(self.dir / "user", "fetch")
        self.assertEqual(r.returncode, 0, r.stderr)
        lock = (self.dir / "user" / "Cargo.lock").read_text()
        self.assertIn('name = "trial-base"', lock)
        # Publishing the same version again is refused.
        r = self.cargo(self.dir / "base", "publish", "--registry", "trial", "--no-verify", "--allow-dirty")
        self.assertNotEqual(r.returncode, 0)

    def test_refused_publishes_have_their_status(self):
        meta = json.dumps({"name": "x-crate", "vers": "1.0.0", "deps": []}).encode()
        body = struct.pack("<I", len(meta)) + meta + struct.pack("<I", 3) + b"abc"
        reg.publish(self.root, body)
        with self.assertRaises(reg.PublishError) as e:
            reg.publish(self.root, body)
        self.assertEqual(e.exception.status, 409)
        with self.assertRaises(reg.PublishError) as e:
            reg.publish(self.root, body[:-1])
        self.assertEqual(e.exception.status, 400)
        bad = json.dumps({"name": "../x", "vers": "1.0.0"}).encode()
        with self.assertRaises(reg.PublishError) as e:
            reg.publish(self.root, struct.pack("<I", len(bad)) + bad + struct.pack("<I", 0))
        self.assertEqual(e.exception.status, 400)

    def test_upload_keeps_the_uploaded_crates_local_and_the_rest_on_crates_io(self):
        # .crate files as `cargo package` writes them: a normalized manifest
        # (path dependencies reduced to their version) in <name>-<version>/.
        top = (
            '[package]\nname = "up-top"\nversion = "0.1.0"\n'
            '[dependencies.up-base]\nversion = "0.1.0"\n'
            '[dependencies.anyhow]\nversion = "1"\noptional = true\n'
            '[dev-dependencies.only-path]\npath = "../x"\n'
            '[features]\nerr = ["dep:anyhow"]\n'
            '[target."cfg(unix)".dependencies.libc]\nversion = "0.2"\n'
        )
        base = '[package]\nname = "up-base"\nversion = "0.1.0"\n'
        files = []
        for name, manifest in (("up-base", base), ("up-top", top)):
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w:gz") as tar:
                data = manifest.encode()
                info = tarfile.TarInfo(f"{name}-0.1.0/Cargo.toml")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            files.append(self.dir / f"{name}-0.1.0.crate")
            files[-1].write_bytes(buf.getvalue())
        reg.upload(self.url, [str(f) for f in files])
        entry = json.loads((self.root / "index" / reg.index_path("up-top")).read_text())
        deps = {d["name"]: d for d in entry["deps"]}
        self.assertIsNone(deps["up-base"]["registry"])
        self.assertEqual(deps["anyhow"]["registry"], reg.CRATES_IO_INDEX)
        self.assertTrue(deps["anyhow"]["optional"])
        self.assertEqual(deps["libc"]["target"], "cfg(unix)")
        self.assertNotIn("only-path", deps)
        self.assertEqual(entry["features2"], {"err": ["dep:anyhow"]})
        data = (self.root / "crates" / "up-top" / "0.1.0.crate").read_bytes()
        self.assertEqual(entry["cksum"], reg.hashlib.sha256(data).hexdigest())


if __name__ == "__main__":
    unittest.main()
