"""`python -m wasmkeep_actor build app.py -o app.wasm`: see `cli.py`."""

from .cli import main

try:
    raise SystemExit(main())
except KeyboardInterrupt:
    # Ctrl-C: the build's spinner has cleared its line, and a traceback of
    # subprocess internals would only bury the ^C. 130 is the shell's status
    # for an interrupted command.
    raise SystemExit(130) from None
