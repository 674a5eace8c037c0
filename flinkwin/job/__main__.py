"""``python -m flinkwin.job``: see :mod:`flinkwin.job`."""

from flinkwin.job import cli

cli()
