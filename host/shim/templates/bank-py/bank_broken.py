"""The deliberately wrong variant of bank.py that the chaos test
(tests/test_chaos.py) must catch: deposits forget their operation id, so a
retried deposit is counted twice. Everything else is bank.py's.

    python -m wasmkeep_actor build bank_broken.py -o bank_broken.wasm
"""

from __future__ import annotations

from bank import Bank


class BrokenBank(Bank):
    IDEMPOTENT = False
