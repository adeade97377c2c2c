"""`python -m holdbench`: the `holdbench` command."""

import sys

from holdbench.benchmark.cli import main

sys.exit(main())
