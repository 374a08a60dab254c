import os
from pathlib import Path

import pytest

HERE = Path(__file__).parent.parent


@pytest.fixture(scope="session")
def wasmkeep_classes(wasmkeep_build):
    # ACCOUNT_PY_WASM / BILLING_PY_WASM: components built elsewhere (the
    # repository's setup builds them into target/components/); else build here.
    account = os.environ.get("ACCOUNT_PY_WASM") or wasmkeep_build(HERE / "account.py")
    billing = os.environ.get("BILLING_PY_WASM") or wasmkeep_build(HERE / "billing.py")
    return {"account": account, "billing": (billing, "internal")}
