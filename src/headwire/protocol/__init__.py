"""Wire message builders for the headless protocols, in upstream key order (pure)."""
