"""Live reload of the instruments file: one path for the watcher, the hash check and SIGHUP."""
