"""flinkwin's version, on its own so that modules inside the package (the restart document)
read it without importing the package's namespace, which loads the stream API."""

__version__ = "0.1.0"
