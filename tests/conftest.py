"""Settings for every test process and for the Spark processes the tests start."""

from __future__ import annotations

from jvm_options import set_short_lived

set_short_lived()
