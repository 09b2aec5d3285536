"""`python -m core.world`: the world process (what `python main.py world` runs)."""

from __future__ import annotations

from core.world.stop_signals import block_in_new_threads

block_in_new_threads()  # before numpy's and Panda3D's threads start: they inherit it (see stop_signals)

import sys  # noqa: E402 - after the block, on purpose

from core.world.cli import main  # noqa: E402 - after the block, on purpose

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
