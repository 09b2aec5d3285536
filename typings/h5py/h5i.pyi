"""h5py's low-level object identifiers."""

class ObjectID:
    @property
    def valid(self) -> bool: ...
