#!/usr/bin/env python3
"""A Cargo registry for trials on 127.0.0.1: a sparse index, downloads, and
`cargo publish` (ADR 032: no registry that accepts `cargo publish` installs
prebuilt from a package registry; this one is the Python standard library).

    cargo-registry.py serve DIR [--port N] [--port-file FILE]
        Serves DIR (index/, crates/). Cargo's configuration for it:
          [registries.NAME] index = "sparse+http://127.0.0.1:N/index/"
        and any token (CARGO_REGISTRIES_NAME_TOKEN): it checks none.
    cargo-registry.py upload URL FILE.crate...
        Publishes .crate files as `cargo publish` would (the same request),
        from the normalized Cargo.toml inside each: dependencies on the crates
        uploaded together stay in this registry, all others name crates.io.

Not a registry for anything but a trial: no accounts, no yanking, no search,
nothing kept beyond DIR.
"""
import argparse
import hashlib
import http.server
import io
import json
import pathlib
import struct
import sys
import tarfile
import tomllib
import urllib.request

CRATES_IO_INDEX = "https://github.com/rust-lang/crates.io-index"


class PublishError(Exception):
    """A publish the registry refuses (the HTTP status it answers with)."""

    def __init__(self, status, detail):
        super().__init__(detail)
        self.status = status


def index_path(name):
    """The index file of a crate, relative to index/ (cargo's layout)."""
    n = name.lower()
    if len(n) <= 2:
        return f"{len(n)}/{n}"
    if len(n) == 3:
        return f"3/{n[0]}/{n}"
    return f"{n[:2]}/{n[2:4]}/{n}"


def index_entry(meta, crate):
    """The index line of one publish request: its JSON metadata and .crate bytes."""
    deps = []
    for d in meta.get("deps", []):
        renamed = d.get("explicit_name_in_toml")
        deps.append({
            "name": renamed or d["name"],
            "req": d["version_req"],
            "features": d.get("features", []),
            "optional": d.get("optional", False),
            "default_features": d.get("default_features", True),
            "target": d.get("target"),
            "kind": d.get("kind", "normal"),
            "registry": d.get("registry"),
            "package": d["name"] if renamed else None,
        })
    features = meta.get("features", {})
    # Features naming `dep:x` or `x?/f` need index format 2 (features2).
    v2 = any("dep:" in f or "?/" in f for fs in features.values() for f in fs)
    return {
        "name": meta["name"],
        "vers": meta["vers"],
        "deps": deps,
        "cksum": hashlib.sha256(crate).hexdigest(),
        "features": {} if v2 else features,
        **({"features2": features} if v2 else {}),
        "yanked": False,
        "links": meta.get("links"),
        "rust_version": meta.get("rust_version"),
        "v": 2,
    }


def publish(root, body):
    """Stores one `PUT /api/v1/crates/new` body in root; returns the entry."""
    try:
        (n,) = struct.unpack_from("<I", body, 0)
        meta = json.loads(body[4:4 + n])
        (m,) = struct.unpack_from("<I", body, 4 + n)
        crate = body[8 + n:8 + n + m]
        if len(crate) != m or not meta.get("name") or not meta.get("vers"):
            raise ValueError("truncated")
    except (struct.error, ValueError, UnicodeDecodeError) as e:
        raise PublishError(400, f"not a publish request: {e}") from e
    name, vers = meta["name"], meta["vers"]
    if not all(c.isalnum() or c in "-_" for c in name) or "/" in vers or ".." in vers:
        raise PublishError(400, f"bad name or version: {name} {vers}")
    idx = root / "index" / index_path(name)
    lines = idx.read_text().splitlines() if idx.exists() else []
    for line in lines:
        have = json.loads(line)
        if have["name"] != name:
            raise PublishError(409, f"{have['name']} is already the name of this crate")
        if have["vers"] == vers:
            raise PublishError(409, f"{name}@{vers} already exists")
    entry = index_entry(meta, crate)
    dest = root / "crates" / name / f"{vers}.crate"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(crate)
    idx.parent.mkdir(parents=True, exist_ok=True)
    with idx.open("a") as f:
        f.write(json.dumps(entry, separators=(",", ":")) + "\n")
    return entry


class Handler(http.server.BaseHTTPRequestHandler):
    root: pathlib.Path

    def log_message(self, fmt, *args):
        sys.stderr.write("cargo-registry: " + fmt % args + "\n")

    def send(self, status, body, kind="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        host = self.headers.get("Host", "127.0.0.1")
        path = self.path.split("?")[0]
        if path == "/index/config.json":
            cfg = {"dl": f"http://{host}/api/v1/crates", "api": f"http://{host}"}
            return self.send(200, json.dumps(cfg).encode())
        if path.startswith("/index/"):
            f = self.root / "index" / path[len("/index/"):].lower()
            if ".." not in path and f.is_file():
                return self.send(200, f.read_bytes(), "text/plain")
            return self.send(404, b"not found", "text/plain")
        parts = path.strip("/").split("/")
        # /api/v1/crates/{name}/{version}/download
        if len(parts) == 6 and parts[:3] == ["api", "v1", "crates"] and parts[5] == "download":
            f = self.root / "crates" / parts[3] / f"{parts[4]}.crate"
            if ".." not in path and f.is_file():
                return self.send(200, f.read_bytes(), "application/octet-stream")
        return self.send(404, b"not found", "text/plain")

    def do_PUT(self):
        if self.path.split("?")[0] != "/api/v1/crates/new":
            return self.send(404, b"not found", "text/plain")
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            publish(self.root, body)
        except PublishError as e:
            return self.send(e.status, json.dumps({"errors": [{"detail": str(e)}]}).encode())
        warnings = {"invalid_categories": [], "invalid_badges": [], "other": []}
        self.send(200, json.dumps({"warnings": warnings}).encode())


def manifest_of(crate):
    """The normalized Cargo.toml inside a .crate file."""
    with tarfile.open(fileobj=io.BytesIO(crate), mode="r:gz") as tar:
        for member in tar.getmembers():
            parts = member.name.split("/")
            if len(parts) == 2 and parts[1] == "Cargo.toml":
                return tomllib.loads(tar.extractfile(member).read().decode())
    raise ValueError("no Cargo.toml in the .crate")


def publish_metadata(manifest, local):
    """cargo publish's JSON metadata for a normalized manifest; `local` names
    the crates of this registry (all other dependencies are crates.io's)."""
    pkg = manifest["package"]
    deps = []

    def add(table, kind, target):
        for key, spec in (table or {}).items():
            if isinstance(spec, str):
                spec = {"version": spec}
            if "version" not in spec:
                continue  # a path-only dev-dependency: cargo drops it too
            name = spec.get("package", key)
            deps.append({
                "name": name,
                "version_req": spec["version"],
                "features": spec.get("features", []),
                "optional": spec.get("optional", False),
                "default_features": spec.get("default-features", True),
                "target": target,
                "kind": kind,
                "registry": None if name in local else CRATES_IO_INDEX,
                "explicit_name_in_toml": key if "package" in spec else None,
            })

    for section in (manifest, *[dict(v, _t=k) for k, v in manifest.get("target", {}).items()]):
        target = section.get("_t")
        add(section.get("dependencies"), "normal", target)
        add(section.get("dev-dependencies"), "dev", target)
        add(section.get("build-dependencies"), "build", target)
    return {
        "name": pkg["name"],
        "vers": pkg["version"],
        "deps": deps,
        "features": manifest.get("features", {}),
        "authors": pkg.get("authors", []),
        "description": pkg.get("description"),
        "license": pkg.get("license"),
        "repository": pkg.get("repository"),
        "links": pkg.get("links"),
        "rust_version": pkg.get("rust-version"),
    }


def upload(url, files):
    crates = [pathlib.Path(f).read_bytes() for f in files]
    manifests = [manifest_of(c) for c in crates]
    local = {m["package"]["name"] for m in manifests}
    for crate, manifest in zip(crates, manifests):
        meta = json.dumps(publish_metadata(manifest, local)).encode()
        body = struct.pack("<I", len(meta)) + meta + struct.pack("<I", len(crate)) + crate
        req = urllib.request.Request(f"{url.rstrip('/')}/api/v1/crates/new", data=body, method="PUT")
        with urllib.request.urlopen(req) as resp:
            resp.read()
        print(f"cargo-registry: published {manifest['package']['name']} {manifest['package']['version']}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("dir")
    s.add_argument("--port", type=int, default=0)
    s.add_argument("--port-file")
    u = sub.add_parser("upload")
    u.add_argument("url")
    u.add_argument("files", nargs="+")
    args = ap.parse_args()
    if args.cmd == "upload":
        return upload(args.url, args.files)
    root = pathlib.Path(args.dir).resolve()
    (root / "index").mkdir(parents=True, exist_ok=True)
    handler = type("RootHandler", (Handler,), {"root": root})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler)
    port = server.server_address[1]
    if args.port_file:
        pathlib.Path(args.port_file).write_text(f"{port}\n")
    print(f"cargo-registry: listening on http://127.0.0.1:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
