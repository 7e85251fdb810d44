"""Built-in session providers: ``simulated`` (a seeded coding-agent simulator),
``transcripts`` (replays recorded
sessions), and the real agents ``claude-code``, ``codex`` and ``opencode``."""
