"""Test doubles that speak real protocols over real sockets (no mocks)."""
