"""The operator's control of an account: pause, resume, flatten.

A request is a small JSON file per account in the state directory (`requests.py`), written
by `regime-trader pause|resume|flatten` (service/commands/control.py). The supervisor polls
the files and forwards each change to the account's worker (`watcher.py`); a worker reads
its file when it starts, so a request outlives restarts of the worker and of the daemon;
the worker acts on it between updates (`trading_mode.py`). See docs/operations.md.
"""
