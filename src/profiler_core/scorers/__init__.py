"""Built-in scorers: ``checks`` (conditions on output and trace), ``composite`` and
``llm-judge``."""
