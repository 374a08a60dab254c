"""The deliberately wrong variant of bank.py that the chaos test
(tests/test_chaos.py) must catch: a deposit records its operation id only
after its answer went out, so a crash between the two followed by a retry
counts the deposit twice. Everything else is bank.py's.

    python -m wasmkeep_actor build bank_broken.py -o bank_broken.wasm
"""

from __future__ import annotations

from bank import Bank


class BrokenBank(Bank):
    ID_AFTER_ANSWER = True
