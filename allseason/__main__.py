"""``python -m allseason``: see :mod:`allseason.cli`."""

import sys

from .cli import main

sys.exit(main())
