# Sourced by the h200-*.sh scripts: run NAME LIMIT_S COMMAND... logs to $OUT/NAME.log and
# appends its exit status and duration to $OUT/summary.txt.
run() {
    name=$1 limit=$2
    shift 2
    start=$(date +%s)
    timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
    echo "$name: rc $? in $(( $(date +%s) - start )) s" | tee -a "$OUT/summary.txt"
}

# step NAME LIMIT_S COMMAND...: as run, but its log goes to $LOGS/NAME.log (kept off the
# results that come back) and the command gets SIGINT at the limit, so that a bench can
# stop its daemon before it exits (SIGKILL 20 s later).
step() {
    name=$1 limit=$2
    shift 2
    start=$(date +%s)
    timeout -s INT -k 20 "$limit" "$@" >"$LOGS/$name.log" 2>&1
    echo "$name: rc $? in $(( $(date +%s) - start )) s" | tee -a "$OUT/summary.txt"
}
