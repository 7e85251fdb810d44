"""Recorded sessions, below the plugins that produce and read them.

``builder`` turns a stream of turns, reasoning, text, tool calls and usage into
a consistent PromptResult + SessionTrace; ``readers`` reads JSON and JSONL files
strictly (a problem names the file and the line or key); ``categories`` sorts
tool names into the categories of the tool-call metrics. The importers and the
providers that read an agent's own files share them (docs/architecture.md).
"""
