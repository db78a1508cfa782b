"""What a session is configured with: settings, prices, context files, the prompt."""
