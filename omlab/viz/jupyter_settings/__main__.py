"""``python -m omlab.viz.jupyter_settings``: see :func:`omlab.viz.jupyter_settings.main`."""

import sys

from omlab.viz.jupyter_settings import main

sys.exit(main())
