"""Hypothesis profiles for the property tests: ``default`` and ``ci`` (derandomized: every run
tries the same cases, so a failure reproduces). Choose with ``HYPOTHESIS_PROFILE=ci``. The
realistic-scale properties take their example count from ``FLINKWIN_PROPERTY_EXAMPLES``
(default 25) for longer runs."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
