"""``python -m profiler_core`` runs the CLI."""

from .cli import main

main()
