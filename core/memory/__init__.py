"""Reading another process's memory, read-only: region maps, readers per OS, and scanning."""
