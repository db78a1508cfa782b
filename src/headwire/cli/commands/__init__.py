"""The subcommands: bound, sessions, doctor, schema, trust (and the demo)."""
