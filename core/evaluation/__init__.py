"""Ground truth from memory: game profiles, block location and decoding, success judging."""
