"""Built-in session providers (``simulated``: a seeded coding-agent simulator; ``transcripts``: replays recorded sessions)."""
