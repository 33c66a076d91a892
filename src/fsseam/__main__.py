"""``python -m fsseam``: the same command line as the ``fsseam`` script."""

from fsseam.cli import main

raise SystemExit(main())
