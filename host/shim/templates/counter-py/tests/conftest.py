import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def wasmkeep_classes(wasmkeep_build):
    # COUNTER_PY_WASM: a component built elsewhere (the repository's setup
    # builds target/components/counter-py.wasm); else build counter.py here.
    built = os.environ.get("COUNTER_PY_WASM")
    return {"counter": built or wasmkeep_build(Path(__file__).parent.parent / "counter.py")}
