"""The ``tilewright`` command line (built on click)."""
