"""`python -m examples.site ...`: see examples/site/commands.py."""

from examples.site.commands import main

raise SystemExit(main())
