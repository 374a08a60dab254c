from pathlib import Path

import pytest

ACTORS = Path(__file__).parent / "actors"


@pytest.fixture(scope="session")
def wasmkeep_classes(wasmkeep_build):
    # The plugin's fixture builds the probe actor once (and not at all while
    # it and the SDK are unchanged).
    return {"probe": wasmkeep_build(ACTORS / "probe.py")}
