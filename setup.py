"""The one compiled part: the mixer's sample loops (core/world/sound/_mixkernel.c). Everything else is in
pyproject.toml. The extension is optional: without a C compiler the install goes on and the world mixes with
numpy's kernel, which gives the same samples more slowly (core/world/sound/kernel.py)."""

import sys

from setuptools import Extension, setup

# No fused multiply-add: the compiled kernel must round as numpy does (one rounding per operation).
FLAGS = ["/fp:strict"] if sys.platform == "win32" else ["-O3", "-ffp-contract=off", "-fno-fast-math"]

setup(ext_modules=[Extension("core.world.sound._mixkernel", ["core/world/sound/_mixkernel.c"],
                             extra_compile_args=FLAGS, optional=True)])
