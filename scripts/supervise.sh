# Sourced by start_m1.sh: keep long-lived processes running, restarting each with backoff.
#
#   supervise_start NAME LOGFILE COMMAND [ARG...]   # its loop's pid is added to SUPERVISORS
#   supervise_stop_all                              # stops every process, then every loop
#
# Each process gets its own restart loop in a background subshell. When the process exits, for
# whatever reason, the loop writes one line to logs/supervisor.log (and the terminal) with its
# exit status, waits 1, 2, 4 ... up to SUPERVISE_BACKOFF_MAX seconds, and starts it again; a
# process that stayed up SUPERVISE_STABLE_SECONDS starts the count again from 1 s. SIGTERM to
# the loop stops its process (SIGTERM, then SIGKILL after SUPERVISE_STOP_SECONDS) and ends it.
#
# Each loop and each process runs in a process group of its own (`set -m`): when a process dies
# its leftovers (gunicorn's workers, a training child) are killed with it instead of outliving
# it, and a Ctrl-C at the terminal reaches only start_m1.sh, which stops everything in order
# (a loop that got the terminal's SIGINT itself would die and leave its process orphaned).
# Written for bash 3.2 (macOS's /bin/bash) too: no `wait -n`, no associative arrays.

SUPERVISE_LOG="${SUPERVISE_LOG:-logs/supervisor.log}"
SUPERVISE_BACKOFF_MAX="${SUPERVISE_BACKOFF_MAX:-60}"
SUPERVISE_STABLE_SECONDS="${SUPERVISE_STABLE_SECONDS:-60}"
SUPERVISE_STOP_SECONDS="${SUPERVISE_STOP_SECONDS:-60}"

_supervise_note() {
    printf '%s %s\n' "$(date '+%Y-%m-%d %H:%M:%S')" "$*" >> "$SUPERVISE_LOG"
    printf '\033[1;33m[medlitbot]\033[0m %s\n' "$*" >&2
}

# "exited with status 1" or "was killed by SIGKILL (status 137)": wait's 128+N is signal N.
_supervise_status_words() {
    if [ "$1" -gt 128 ] && [ "$1" -lt 160 ]; then
        echo "was killed by SIG$(kill -l $(($1 - 128)) 2>/dev/null || echo $(($1 - 128))) (status $1)"
    else
        echo "exited with status $1"
    fi
}

# Stop the current process: SIGTERM (a worker finishes or hands back its task, gunicorn drains),
# then SIGKILL to its whole group if it is still there after SUPERVISE_STOP_SECONDS.
_supervise_stop() {
    exec 2>/dev/null  # not bash's own "Terminated" lines: this loop is ending
    if [ -n "${_child:-}" ]; then
        kill -TERM "$_child" 2>/dev/null
        local waited=0
        # bash reaps a finished child while `sleep` runs, so kill -0 then fails.
        while kill -0 "$_child" 2>/dev/null && [ "$waited" -lt $((SUPERVISE_STOP_SECONDS * 5)) ]; do
            sleep 0.2
            waited=$((waited + 1))
        done
        kill -KILL -- "-$_child" 2>/dev/null
        wait "$_child" 2>/dev/null
    fi
    exit 0
}

supervise() {
    local name="$1" log="$2" backoff=1 restarts=0 started status lived
    shift 2
    set +e
    set -m
    _child=""
    trap _supervise_stop TERM HUP
    while true; do
        started="$(date +%s)"
        "$@" >> "$log" 2>&1 < /dev/null &
        _child=$!
        wait "$_child" 2>/dev/null  # its exit is reported below, not as bash's "Killed"
        status=$?
        # Whatever it left in its group (gunicorn workers, a training child) goes with it.
        kill -KILL -- "-$_child" 2>/dev/null
        _child=""
        lived=$(($(date +%s) - started))
        if [ "$lived" -ge "$SUPERVISE_STABLE_SECONDS" ]; then
            backoff=1
        fi
        restarts=$((restarts + 1))
        _supervise_note "$name $(_supervise_status_words "$status") after ${lived} s;" \
            "restarting it in ${backoff} s (restart $restarts; its log: $log)"
        # In the background so that a SIGTERM interrupts the wait at once.
        sleep "$backoff" &
        _child=$!
        wait "$_child" 2>/dev/null
        _child=""
        backoff=$((backoff * 2))
        if [ "$backoff" -gt "$SUPERVISE_BACKOFF_MAX" ]; then
            backoff="$SUPERVISE_BACKOFF_MAX"
        fi
    done
}

SUPERVISORS=()

supervise_start() {
    set -m  # the loop gets a process group of its own, away from the terminal's Ctrl-C
    supervise "$@" &
    SUPERVISORS+=($!)
    set +m
}

supervise_stop_all() {
    local pid
    # All at once, so the processes stop in parallel; each loop ends once its process has.
    for pid in ${SUPERVISORS[@]+"${SUPERVISORS[@]}"}; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in ${SUPERVISORS[@]+"${SUPERVISORS[@]}"}; do wait "$pid" 2>/dev/null || true; done
}
