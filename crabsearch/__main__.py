"""``python -m crabsearch``: the same as the ``crabsearch`` command."""

import sys

from .launch import main

sys.exit(main())
