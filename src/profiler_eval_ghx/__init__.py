"""GitHub-task evaluation for agent-profiler (scenarios, checkpoint scorer, OpenCode provider).

Loaded only through its ``agent_profiler`` entry point; filled in by later issues.
"""
