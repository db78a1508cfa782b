"""Model providers: the OpenAI-compatible streaming client and the scripted offline model.

Its face, the modules other packages may import (the rest is private):

* :mod:`.base`: the model contract: ``Model``, ``Usage``, the stream's parts;
* :mod:`.select`: which provider and model, from flags, environment and settings;
* :mod:`.generation`: ``model.generationConfig``'s timeouts, retries, headers and body keys;
* :mod:`.catalog`: ``modelProviders``, the user's models each with its endpoint, key and settings;
* :mod:`.fallback`: ``--fallback-model``;
* :mod:`.routed`: a model renamed (``set_model``, ``/model``) to another catalog route;
* :mod:`.http_base`: the one streaming HTTP base (its errors);
* :mod:`.doctor`: the endpoint checks of ``headwire doctor``.
"""

__all__ = ["base", "catalog", "doctor", "fallback", "generation", "http_base", "routed", "select"]
