"""HDF5 episode files: one per episode, flushed every step, readable after a kill -9."""
