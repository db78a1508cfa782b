"""Model providers: the OpenAI-compatible streaming client and the scripted offline model."""
