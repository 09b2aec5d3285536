"""h5py's low-level datasets: direct chunk I/O, the file offset, and the constants PokeGym uses."""

from h5py.h5i import ObjectID
from h5py.h5p import PropDCID

CONTIGUOUS: int
ALLOC_TIME_EARLY: int
FILL_TIME_ALLOC: int

class DatasetID(ObjectID):
    def get_offset(self) -> int | None: ...
    def get_create_plist(self) -> PropDCID: ...
    def read_direct_chunk(self, offsets: tuple[int, ...], dxpl: object = None,
                          out: object = None) -> tuple[int, bytes]: ...
    def write_direct_chunk(self, offsets: tuple[int, ...], data: bytes, filter_mask: int = 0,
                           dxpl: object = None) -> None: ...
