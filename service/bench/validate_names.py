"""The names `bench validate` accepts, importable without numpy (the command line's
parser is built at every start)."""

CHECKS = ("gradient", "sbc_k2", "sbc_k3", "posteriordb", "sp500_posterior", "worker_path")
MUTANTS = (
    "tempered_likelihood", "no_metropolis", "unnormalised_row", "scaled_gradient",
    "wrong_prior", "wrong_adaptation_target", "shared_streams", "shifted_window",
)  # fmt: skip
