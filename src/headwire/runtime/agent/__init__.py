"""The agent loop and what holds a turn to account: limits, meter, structured output."""
