"""The Agent Client Protocol front end (``headwire --acp``): JSON-RPC 2.0 over stdio.

* :mod:`headwire.protocol.jsonrpc` and :mod:`headwire.protocol.acp_peer` (pure, below this
  package): framing, and the connection's lifecycle and ids as a state machine;
* :mod:`headwire.acp.updates`: ``session/update`` payloads and other ACP shapes;
* :mod:`headwire.acp.session`: a session's state and its subscriber to the agent's events;
* :mod:`headwire.acp.replay`: ``session/load``'s record-by-record replay of a recording;
* :mod:`headwire.acp.server`: the server (sessions, prompts, permissions, cancellation).
"""
