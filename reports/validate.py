#!/usr/bin/python3
"""Entry point of `mrclab validate` (see mrclab_reports/validation/cli.py and README.md)."""
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
try:
    import matplotlib  # noqa: F401
    import numpy  # noqa: F401
except ImportError as e:
    print(f"mrclab validate: error: Python module {e.name} is missing: install Debian's python3-matplotlib "
          "(bash .ci/setup does)", file=sys.stderr)
    sys.exit(2)
from mrclab_reports.validation.cli import main  # noqa: E402

sys.exit(main())
