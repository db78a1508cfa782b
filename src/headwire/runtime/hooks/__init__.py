"""Hooks: the user's commands run at the agent's events, and what they decide."""
