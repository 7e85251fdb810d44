"""Entry-point module of the GitHub evaluation plugin (components arrive in a later issue)."""
