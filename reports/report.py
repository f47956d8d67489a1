#!/usr/bin/python3
"""Entry point of `mrclab report RUN_DIR` (see mrclab_reports/report.py and README.md)."""
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
try:
    import matplotlib  # noqa: F401
    import numpy  # noqa: F401
except ImportError as e:
    print(f"mrclab report: error: Python module {e.name} is missing: install Debian's python3-matplotlib "
          "(bash .ci/setup does)", file=sys.stderr)
    sys.exit(2)
from mrclab_reports.report import main  # noqa: E402

sys.exit(main())
