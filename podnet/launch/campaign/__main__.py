"""``python -m podnet.launch.campaign run|status|... CONFIG``: see :mod:`podnet.launch.campaign.run`."""

import sys

from podnet.launch.campaign.run import main

sys.exit(main())
