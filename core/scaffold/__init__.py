"""`python main.py backend new`: a first backend file for a game, measured from its frames alone."""
