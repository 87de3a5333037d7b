#!/usr/bin/env python3
"""The FP8 numerics report: fp8rt.report run from the checkout (installed
with the Python package it is the `fp8-report` command). `--help` says
everything; docs/Recipes.md shows it in use."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "runtime", "python"))
from fp8rt.report import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
