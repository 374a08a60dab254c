import os
from pathlib import Path

import pytest

HERE = Path(__file__).parent.parent


@pytest.fixture(scope="session")
def wasmkeep_classes(wasmkeep_build):
    # BANK_PY_WASM: a component built elsewhere (the repository's setup builds
    # target/components/bank-py.wasm); else build bank.py here.
    return {"bank": os.environ.get("BANK_PY_WASM") or wasmkeep_build(HERE / "bank.py")}


@pytest.fixture(scope="session")
def broken_classes(wasmkeep_build):
    """The class with the deliberately wrong bank (bank_broken.py)."""
    return {"bank": os.environ.get("BANK_PY_BROKEN_WASM") or wasmkeep_build(HERE / "bank_broken.py")}
