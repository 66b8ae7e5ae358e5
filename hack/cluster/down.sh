#!/usr/bin/env bash
# Tears down the local kwok cluster made by hack/cluster/up.sh: stops its
# processes (etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# kwok-controller) with `kwokctl delete cluster` and removes its state
# (etcd data, certificates, kubeconfig, logs) and generated config.
#
# Usage: hack/cluster/down.sh
#
# Environment: CLUSTER_NAME (default tdb), CLUSTER_WORKDIR (default
# bin/cluster). A cluster that does not exist is not an error.
set -euo pipefail

CLUSTER_LOG_PREFIX="cluster-down"
# shellcheck source=hack/cluster/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

case "${1:-}" in
  -h | --help)
    sed -n '2,/^set -euo pipefail$/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}" >&2
    exit 0
    ;;
  "") ;;
  *) die "unexpected argument '$1'" ;;
esac
cluster_check_name

# pids_of_cluster: this cluster's component processes. kwokctl runs each
# component from a link in the cluster's bin/ directory, so the command line
# starts with that path; nothing else (an editor or `tail -f` on a log) is
# matched.
pids_of_cluster() {
  local re
  re="^$(printf '%s' "${CLUSTER_DIR}/bin/" | sed 's/[][\\.*^$+?(){}|]/\\&/g')"
  pgrep -f -- "${re}" 2>/dev/null || true
}

if [[ ! -d "${CLUSTER_DIR}" ]]; then
  log "cluster ${CLUSTER_NAME} does not exist (no ${CLUSTER_DIR#"${ROOT}"/})"
  rm -f "${CLUSTER_CONFIG}"
  exit 0
fi

# Remember the components' pids to wait for them below.
pids_before="$(pids_of_cluster)"

if cluster_binaries_if_built; then
  log "deleting cluster ${CLUSTER_NAME} ..."
  # --kubeconfig: kwokctl would otherwise remove a context from
  # ~/.kube/config; point it at the cluster's own file, deleted anyway.
  kwokctl_run delete cluster --force --kubeconfig "${CLUSTER_KUBECONFIG}" ||
    log "warning: kwokctl delete cluster failed; cleaning up by hand"
else
  log "warning: kwokctl not built; cleaning up by hand"
fi

# Safety net: components kwokctl could not stop (e.g. a pid file lost).
pids="$(pids_of_cluster)"
if [[ -n "${pids}" ]]; then
  log "stopping leftover processes of ${CLUSTER_NAME}: $(echo "${pids}" | tr '\n' ' ')"
  # shellcheck disable=SC2086 # one pid per word
  kill ${pids} 2>/dev/null || true
  for _ in $(seq 1 20); do
    [[ -z "$(pids_of_cluster)" ]] && break
    sleep 0.5
  done
  pids="$(pids_of_cluster)"
  if [[ -n "${pids}" ]]; then
    # shellcheck disable=SC2086
    kill -9 ${pids} 2>/dev/null || true
  fi
fi

# kwokctl kills with SIGKILL and returns at once; wait until the processes
# are gone (reaped, not even zombies) so that a check right after this script
# finds nothing.
for pid in ${pids_before} ${pids}; do
  for _ in $(seq 1 50); do
    kill -0 "${pid}" 2>/dev/null || break
    sleep 0.2
  done
  if kill -0 "${pid}" 2>/dev/null; then
    log "warning: process ${pid} of ${CLUSTER_NAME} still exists ($(ps -o stat= -p "${pid}" 2>/dev/null || echo '?'))"
  fi
done

rm -rf "${CLUSTER_DIR}"
rm -f "${CLUSTER_CONFIG}"
# Drop the work directory when no cluster is left in it.
rmdir "${CLUSTER_WORKDIR}/clusters" "${CLUSTER_WORKDIR}" 2>/dev/null || true
log "cluster ${CLUSTER_NAME} deleted"
