# Optional and platform-specific (evdev is imported only when that input device is chosen, and is not installed
# where CI runs): the code holds the module as Any, so the stub only makes the import resolve.
from typing import Any

def __getattr__(name: str) -> Any: ...
