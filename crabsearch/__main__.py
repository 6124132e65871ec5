"""``python -m crabsearch``: the same as the ``crabsearch`` command."""

import sys

from .cli import main

sys.exit(main())
