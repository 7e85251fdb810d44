"""Small helpers every layer may use: awaiting, text for terminals and files, time,
processes, secrets."""
