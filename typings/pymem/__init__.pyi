# Windows only (core/memory/windows.py imports it lazily; it is not installed where CI runs): the code holds
# the module as Any, so the stubs only make the imports resolve.
from typing import Any

from pymem import memory as memory
from pymem import process as process

def __getattr__(name: str) -> Any: ...
