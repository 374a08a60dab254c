"""The native harness (the `wasmkeep-actor-harness` package: the host
library as a Python module), loaded when a test first needs it, with a message
that says how to install it when it is missing."""

from __future__ import annotations

from typing import Any


def load() -> Any:
    """The `wasmkeep_actor_harness` module."""
    try:
        import wasmkeep_actor_harness
    except ImportError as e:
        from ._harness_wheel import missing

        raise ImportError(
            missing("wasmkeep_actor.testing needs the native harness (the wasmkeep-actor-harness package), which is not installed")
            + f" The import failed with: {e}"
        ) from e
    return wasmkeep_actor_harness
