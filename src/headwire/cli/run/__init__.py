"""The agent's front ends (one-shot, session, REPL) and what they share."""
