#!/usr/bin/env bash
# Runs make targets as test suites, some of them side by side, and prints
# each one's wall time and result at the end (make test, make test-fast).
#
# Usage: hack/run-suites.sh [-s 'TARGET...'] ['TARGET...' ...]
#
#   -s 'TARGET...'  run first, one after the other, their output on stdout as
#                   it comes; the first failure stops the run (no lane starts)
#   'TARGET...'     a lane: its targets run one after the other, each into its
#                   own log file; the lanes run side by side. A failed target
#                   stops neither its lane nor the others: every suite runs
#                   and the summary names each failure.
#
# At the end: the `ok`/`FAIL` lines of each lane target that passed, the full
# log of each that failed, then the table (target, seconds, result). Exit
# status 1 when any target failed.
#
# Environment: TEST_LOG_DIR, where the logs go (default bin/test-logs, emptied
# first); MAKE (default make).
#
# The lanes' suites must not share a cluster, a port or a file they write:
# each e2e suite has its own cluster name and ports, and the binaries they
# use are built before (make test's prerequisites), so no two lanes build
# the same binary at once.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"
MAKE="${MAKE:-make}"
LOG_DIR="${TEST_LOG_DIR:-${ROOT}/bin/test-logs}"
START="$(date +%s)"

usage() { sed -n '2,/^set -euo pipefail$/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}" >&2; }

first=""
if [[ "${1:-}" == -s ]]; then
  [[ $# -ge 2 ]] || { usage; exit 2; }
  first="$2"
  shift 2
fi
case "${1:-}" in -h | --help) usage; exit 0 ;; esac
[[ -n "${first}" || $# -gt 0 ]] || { usage; exit 2; }

mkdir -p "${LOG_DIR}"
rm -f "${LOG_DIR}"/*.log "${LOG_DIR}"/*.results

# clock: minutes and seconds since the start, for the progress lines.
clock() {
  local s=$(($(date +%s) - START))
  printf '%02d:%02d' $((s / 60)) $((s % 60))
}

# run_suite TARGET RESULTS [LOG]: runs make TARGET, its output into LOG (or
# on stdout), and appends "TARGET SECONDS ok|FAIL" to RESULTS.
run_suite() {
  local target="$1" results="$2" log="${3:-}" t0 rc=0
  t0="$(date +%s)"
  if [[ -n "${log}" ]]; then
    "${MAKE}" --no-print-directory "${target}" >"${log}" 2>&1 </dev/null || rc=$?
  else
    "${MAKE}" --no-print-directory "${target}" 2>&1 | tee "${LOG_DIR}/${target}.log" || rc=$?
  fi
  local result=ok
  ((rc == 0)) || result=FAIL
  echo "${target} $(($(date +%s) - t0)) ${result}" >>"${results}"
  return "${rc}"
}

# run_lane N TARGETS: the targets of lane N, one after the other.
run_lane() {
  local n="$1" target results="${LOG_DIR}/lane-$1.results"
  : >"${results}"
  for target in $2; do
    echo "[$(clock)] lane ${n}: ${target} started (log ${LOG_DIR#"${ROOT}"/}/${target}.log)"
    if run_suite "${target}" "${results}" "${LOG_DIR}/${target}.log"; then
      echo "[$(clock)] lane ${n}: ${target} passed in $(tail -1 "${results}" | cut -d' ' -f2) s"
    else
      echo "[$(clock)] lane ${n}: ${target} FAILED after $(tail -1 "${results}" | cut -d' ' -f2) s"
    fi
  done
}

# summary: the lanes' logs, then the table; returns 1 when a target failed.
summary() {
  local f lane target secs result failed=""
  for f in "${LOG_DIR}"/lane-*.results; do
    [[ -e "${f}" ]] || continue
    while read -r target secs result; do
      if [[ "${result}" == ok ]]; then
        echo "=== ${target}: passed (log ${LOG_DIR#"${ROOT}"/}/${target}.log)"
        grep -E '^(ok|FAIL)[[:space:]]' "${LOG_DIR}/${target}.log" || true
      else
        echo "=== ${target}: FAILED; its log (${LOG_DIR#"${ROOT}"/}/${target}.log):"
        cat "${LOG_DIR}/${target}.log"
        echo "=== end of ${target}'s log"
      fi
    done <"${f}"
  done
  echo
  printf '%-20s %-5s %8s  %s\n' target lane seconds result
  for f in "${LOG_DIR}"/serial.results "${LOG_DIR}"/lane-*.results; do
    [[ -e "${f}" ]] || continue
    lane="${f##*/}"
    lane="${lane%.results}"
    lane="${lane#lane-}"
    [[ "${lane}" != serial ]] || lane=-
    while read -r target secs result; do
      printf '%-20s %-5s %8s  %s\n' "${target}" "${lane}" "${secs}" "${result}"
      [[ "${result}" == ok ]] || failed+=" ${target}"
    done <"${f}"
  done
  printf '%-20s %-5s %8s\n' total '' "$(($(date +%s) - START))"
  if [[ -n "${failed}" ]]; then
    echo "FAILED:${failed}"
    return 1
  fi
}

if [[ -n "${first}" ]]; then
  : >"${LOG_DIR}/serial.results"
  for target in ${first}; do
    echo "[$(clock)] ${target}"
    run_suite "${target}" "${LOG_DIR}/serial.results" || { summary || true; exit 1; }
  done
fi

if [[ $# -gt 0 ]]; then
  echo "[$(clock)] $# lanes side by side; each suite's output goes to its log, printed at the end when it fails"
  pids=()
  n=0
  for lane in "$@"; do
    n=$((n + 1))
    run_lane "${n}" "${lane}" &
    pids+=("$!")
  done
  for pid in "${pids[@]}"; do wait "${pid}"; done
fi

summary
