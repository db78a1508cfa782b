"""Built-in tools with Qwen Code's names and argument schemas."""
