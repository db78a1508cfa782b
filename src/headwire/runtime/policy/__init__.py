"""May this call run: the permission rules, shell commands parsed, the live policy."""
