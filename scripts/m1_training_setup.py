#!/usr/bin/env python
"""The doctor, for a machine where manage.py is not set up yet: the same checks and options.

    python scripts/m1_training_setup.py [--write-env] [--yes] [--smoke-timeout 60] [--no-services]

The checks live in classification/doctor.py (also run by `python manage.py doctor`).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a file, the repository is not on the path
    sys.path.insert(0, str(ROOT))

from classification.doctor import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
