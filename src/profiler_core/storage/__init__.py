"""Data on disk: the JSON converter and row decoder, results and trace stores, safe
paths, atomic writes."""
