"""What is kept on disk: the data directory, artifacts, recordings, the session index.

Its face, the modules other packages may import (the rest is private):

* :mod:`.storage`: the data directory's layout and the artifact store;
* :mod:`.recording`: the canonical JSONL recording: append, lock, read back;
* :mod:`.record_events`: the recorder, a subscriber of the agent's events;
* :mod:`.session_index`: what each recording holds, cached (``headwire sessions list``);
* :mod:`.sessions`: recordings found, read and pruned (``headwire sessions``).
"""

__all__ = ["record_events", "recording", "session_index", "sessions", "storage"]
