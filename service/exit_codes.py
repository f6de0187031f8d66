"""Process exit codes (sysexits.h), the contract with systemd and daemon(8)."""

EX_OK = 0  # clean stop: --stop-after reached, or SIGTERM handled
EX_SOFTWARE = 70  # gave up: the restart budget is exhausted; let the init system restart us
EX_TEMPFAIL = 75  # temporary failure (e.g. state or broker unreachable at start): try later
EX_CONFIG = 78  # bad configuration: restarting will not help (RestartPreventExitStatus=78)
