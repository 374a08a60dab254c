"""`python -m wasmkeep_actor build app.py -o app.wasm`: see `cli.py`."""

from .cli import main

raise SystemExit(main())
