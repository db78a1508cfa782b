"""Fault injection: the real CLI as a subprocess, killed, signalled, starved and flooded."""
