"""``python -m tilewright`` is the ``tilewright`` command."""

from tilewright.cli.main import main

main()
