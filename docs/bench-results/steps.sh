# Sourced by the h200-*.sh scripts: run NAME LIMIT_S COMMAND... logs to $OUT/NAME.log and
# appends its exit status and duration to $OUT/summary.txt.
run() {
    name=$1 limit=$2
    shift 2
    start=$(date +%s)
    timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
    echo "$name: rc $? in $(( $(date +%s) - start )) s" | tee -a "$OUT/summary.txt"
}
