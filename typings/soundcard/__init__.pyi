"""The part of SoundCard (WASAPI on Windows; installed only there by the `external` extra) that
core/game/external/wasapi_recorder.py uses."""

from types import TracebackType

import numpy as np

class _Recorder:
    def __enter__(self) -> _Recorder: ...
    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None: ...
    def record(self, numframes: int | None = None) -> np.ndarray: ...

class _Microphone:
    def recorder(self, samplerate: int, channels: int | list[int] | None = None,
                 blocksize: int | None = None) -> _Recorder: ...

class _Speaker:
    name: str

def default_speaker() -> _Speaker: ...
def get_microphone(id: str, include_loopback: bool = False) -> _Microphone: ...
