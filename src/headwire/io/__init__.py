"""Writers for the bytes transports produce: stdout, stderr, descriptors, files, FIFOs."""
