"""Process exit codes (sysexits.h), the contract with systemd and daemon(8)."""

EX_OK = 0  # clean stop: --stop-after reached, or SIGTERM handled
EX_SOFTWARE = 70  # gave up: the restart budget is exhausted; let the init system restart us
EX_TEMPFAIL = 75  # temporary failure (e.g. state or broker unreachable at start): try later
EX_CONFIG = 78  # bad configuration: restarting will not help (RestartPreventExitStatus=78)

# The commands' own (sysexits.h): what a person or a script gave them was not usable.
EX_USAGE = 64  # the command was used wrongly: e.g. an account the configuration lacks
EX_DATAERR = 65  # the input data is unusable: a CSV without the column, an unreadable database
EX_NOINPUT = 66  # the input does not exist: no state database, no history yet
EX_UNAVAILABLE = 69  # a service is not available: no usable GPU adapter
EX_CANTCREAT = 73  # an output file cannot be written

