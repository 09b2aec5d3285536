"""Analysis across episodes: statistics for the report (Qt-free)."""
