"""`python -m pb_headless.cli`, the same as the `pb-headless` console script."""

from pb_headless.cli.main import main

raise SystemExit(main())
