"""The agent runtime: model loop, models, tools, artifacts, recording and permissions (does I/O)."""
