"""What a session is configured with: settings, prices, context files, the prompt.

Its face, the modules other packages may import (the rest is private):

* :mod:`.settings`: the settings files: one loader, one schema, one frozen result;
* :mod:`.pricing`: model prices (the built-in table and ``modelPricing``);
* :mod:`.context_files`: ``QWEN.md``/``AGENTS.md`` found and joined;
* :mod:`.prompt`: the system prompt a model call carries;
* :mod:`.output_styles`: the output styles layered onto the built-in prompt.

The tools' environment is :mod:`headwire.runtime.environment` (below every room).
"""

__all__ = ["context_files", "output_styles", "pricing", "prompt", "settings"]
