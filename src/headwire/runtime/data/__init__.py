"""Built-in scripts of the scripted model."""
