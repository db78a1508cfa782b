"""What is kept on disk: the data directory, artifacts, recordings, the session index."""
