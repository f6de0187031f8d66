# Sourced by the VM scripts that compare trees from the thirty-eighth session on:
# `alternate REPS FUNCTION TREE...` runs `FUNCTION TREE REP` for each repetition and,
# within it, each tree in the order given (so neither tree has the machine's quieter turn).
# shellcheck shell=sh
alternate() {
    reps=$1 function=$2
    shift 2
    for rep in $(seq "$reps"); do
        for tree in "$@"; do
            "$function" "$tree" "$rep" || return
        done
    done
}
