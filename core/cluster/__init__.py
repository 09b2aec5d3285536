"""Running a batch on a Ray cluster (the optional `ray` extra): connecting, checking nodes, the per-run
coordinator and request limiter actors, and the executor the batch driver hands episodes to."""
