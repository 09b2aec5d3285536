"""PokeGym core: everything that runs without Qt."""
