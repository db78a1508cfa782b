"""The command line's flags, one module per concern, and the parser they share."""
