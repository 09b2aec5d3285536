"""The game-facing contracts: pad input, frames, and the GameConnection protocol."""
