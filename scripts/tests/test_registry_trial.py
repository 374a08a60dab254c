"""Tests of scripts/registry-trial.sh's choice of languages: a release of
some pieces only (`cargo xtask release --only npm`) is tried for the
languages it has packages for, and each other one is skipped in one line
(`--plan` stops before any registry starts).

    python3 -m unittest discover -s scripts/tests -v
"""
import pathlib
import subprocess
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parent.parent / "registry-trial.sh"

NPM = ["npm/wasmkeep-actor-0.0.0.tgz", "npm/wasmkeep-actor-linux-x64-gnu-0.0.0.tgz"]
PYTHON = ["python/wasmkeep_actor-0.0.0-py3-none-any.whl", "python/wasmkeep_actor-0.0.0.tar.gz"]
C = ["c/wasmkeep-c-sdk-0.0.0-linux-x86_64.tar.gz"]
CRATES = ["crates/wasmkeep-actor-0.0.0.crate"]


class Plan(unittest.TestCase):
    def plan(self, files, *langs):
        """Runs the script with --plan on a release of these (empty) files."""
        with tempfile.TemporaryDirectory() as tmp:
            release = pathlib.Path(tmp)
            for name in files:
                path = release / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(name.encode())
            sums = subprocess.run(["sha256sum", *files], cwd=release, capture_output=True, text=True, check=True)
            (release / "SHA256SUMS").write_text(sums.stdout)
            return subprocess.run(
                ["bash", str(SCRIPT), "--release", str(release), "--plan", *langs],
                capture_output=True, text=True, timeout=60,
            )

    def test_an_npm_only_release_tries_typescript_alone(self):
        r = self.plan(NPM)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertIn("registry-trial: python: skipped: the release has no Python package", lines)
        self.assertIn("registry-trial: c: skipped: the release has no C archive", lines)
        self.assertIn("registry-trial: rust: skipped: the release has no crate", lines)
        self.assertEqual(lines[-1], "registry-trial: would try: ts")

    def test_a_whole_release_tries_every_language(self):
        r = self.plan(NPM + PYTHON + C + CRATES)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("skipped", r.stdout)
        self.assertEqual(r.stdout.splitlines()[-1], "registry-trial: would try: ts python c rust")

    def test_rust_needs_the_c_archive_beside_the_crates(self):
        r = self.plan(CRATES + PYTHON, "rust", "python")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("registry-trial: rust: skipped: the release has no C archive", r.stdout)
        self.assertEqual(r.stdout.splitlines()[-1], "registry-trial: would try: python")

    def test_a_release_with_nothing_for_the_languages_asked_fails(self):
        r = self.plan(NPM, "python")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("has the packages of none of: python", r.stderr)


if __name__ == "__main__":
    unittest.main()
