"""Command-line entry points behind main.py's subcommands."""
