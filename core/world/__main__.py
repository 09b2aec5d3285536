"""`python -m core.world`: the world process (what `python main.py world` runs)."""

from __future__ import annotations

import sys

from core.world.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
