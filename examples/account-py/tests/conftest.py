import os
from pathlib import Path

import pytest

HERE = Path(__file__).parent.parent


@pytest.fixture(scope="session")
def billing_component(wasmkeep_build):
    return os.environ.get("BILLING_PY_WASM") or wasmkeep_build(HERE / "billing.py")


@pytest.fixture(scope="session")
def wasmkeep_classes(wasmkeep_build, billing_component):
    # ACCOUNT_PY_WASM / BILLING_PY_WASM: components built elsewhere (the
    # repository's setup builds them into target/components/); else build here.
    account = os.environ.get("ACCOUNT_PY_WASM") or wasmkeep_build(HERE / "account.py")
    return {"account": account, "billing": (billing_component, "internal")}


@pytest.fixture(scope="session")
def cancel_first_classes(wasmkeep_build, billing_component):
    """The classes with the deliberately wrong account (account_cancel_first.py)."""
    account = os.environ.get("ACCOUNT_PY_CANCEL_FIRST_WASM") or wasmkeep_build(HERE / "account_cancel_first.py")
    return {"account": account, "billing": (billing_component, "internal")}
