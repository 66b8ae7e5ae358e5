#!/usr/bin/env bash
# Checks that a cluster made by hack/cluster/up.sh behaves like a real one:
#   - every kwok node is Ready and the API server reports the built version;
#   - a Deployment with a zone topologySpreadConstraint is spread evenly over
#     the zones by the real kube-scheduler and becomes Ready after about
#     POD_READY_DELAY;
#   - a StatefulSet comes up in order;
#   - `kubectl drain` evicts a node's pods through the Eviction API and the
#     real controllers replace them on other nodes.
# Works in a namespace of its own, deleted at the end; the drained node is
# uncordoned again.
#
# Usage: hack/cluster/smoke-test.sh
# Environment: CLUSTER_NAME (default tdb), CLUSTER_WORKDIR, REPLICAS
# (default: 4 per zone).
set -euo pipefail

CLUSTER_LOG_PREFIX="cluster-smoke-test"
# shellcheck source=hack/cluster/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

case "${1:-}" in
  -h | --help)
    sed -n '2,/^set -euo pipefail$/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}" >&2
    exit 0
    ;;
esac

cluster_check_name
cluster_exists || die "cluster ${CLUSTER_NAME} does not exist; run hack/cluster/up.sh"
cluster_binaries_if_built || die "binaries not built; run hack/cluster/up.sh"
cluster_api_ready || die "cluster ${CLUSTER_NAME} is not running; run hack/cluster/up.sh"

ns="smoke-$$"
drained=""
cleanup() {
  if [[ -n "${drained}" ]]; then kc uncordon "${drained}" >/dev/null 2>&1 || true; fi
  kc delete namespace "${ns}" --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
fail() { die "FAIL: $*"; }

# wait_ready KIND NAME WANT TIMEOUT_S: until .status.readyReplicas == WANT
# and the controller has seen the latest spec.
wait_ready() {
  local kind="$1" name="$2" want="$3" timeout="$4" got="" i
  for ((i = 0; i < timeout * 5; i++)); do
    got="$(kc -n "${ns}" get "${kind}" "${name}" -o jsonpath='{.status.readyReplicas}' 2>/dev/null || true)"
    [[ "${got:-0}" == "${want}" ]] && return 0
    sleep 0.2
  done
  fail "${kind}/${name}: ${got:-0}/${want} ready after ${timeout}s"
}

# pod_nodes APP: the node of each running pod of app=APP, one a line.
pod_nodes() {
  kc -n "${ns}" get pods -l "app=$1" --field-selector=status.phase=Running \
    -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}'
}
zone_of() { kc get node "$1" -o jsonpath='{.metadata.labels.topology\.kubernetes\.io/zone}'; }

# --- nodes and version -----------------------------------------------------
mapfile -t nodes < <(kc get nodes -l type=kwok -o name | sed 's|^node/||')
[[ ${#nodes[@]} -gt 0 ]] || fail "no nodes labelled type=kwok"
not_ready="$(kc get nodes -l type=kwok --no-headers | awk '$2 != "Ready"' || true)"
[[ -z "${not_ready}" ]] || fail "nodes not Ready:"$'\n'"${not_ready}"
mapfile -t zones < <(kc get nodes -l type=kwok -o jsonpath='{range .items[*]}{.metadata.labels.topology\.kubernetes\.io/zone}{"\n"}{end}' | sort -u)
log "ok: ${#nodes[@]} Ready nodes in ${#zones[@]} zones (${zones[*]})"

server="$(kc version -o json | sed -n '/"serverVersion"/,/}/s/.*"gitVersion": "\(.*\)".*/\1/p')"
[[ "${server}" == "${BIN##*/}" ]] || fail "server reports ${server}, want ${BIN##*/}"
log "ok: server version ${server}"

kc create namespace "${ns}" >/dev/null
# Pods need the namespace's default ServiceAccount.
for _ in $(seq 1 50); do
  kc -n "${ns}" get serviceaccount default >/dev/null 2>&1 && break
  sleep 0.2
done

# --- Deployment spread over zones ------------------------------------------
per_zone=4
replicas="${REPLICAS:-$((per_zone * ${#zones[@]}))}"
start="$(now)"
kc -n "${ns}" apply -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      # Even over zones (hard), and over nodes within a zone (soft: with a
      # constraint of its own a pod gets none of the scheduler's defaults).
      topologySpreadConstraints:
      - maxSkew: 1
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: DoNotSchedule
        labelSelector:
          matchLabels: {app: web}
      - maxSkew: 1
        topologyKey: kubernetes.io/hostname
        whenUnsatisfiable: ScheduleAnyway
        labelSelector:
          matchLabels: {app: web}
      containers:
      - name: web
        image: example.invalid/web:1
        resources:
          requests: {cpu: 100m, memory: 128Mi}
EOF
wait_ready deployment web "${replicas}" 60
log "ok: deployment web ${replicas}/${replicas} Ready in $(since "${start}")s"
spread="$(pod_nodes web | while read -r n; do zone_of "${n}"; echo; done | sort | uniq -c |
  awk '{printf "%s%s=%s", sep, $2, $1; sep=" "}')"
counts="$(tr ' ' '\n' <<<"${spread}" | cut -d= -f2 | sort -n | uniq)"
(($(wc -l <<<"${counts}") == 1)) || fail "pods not spread evenly over zones: ${spread}"
log "ok: spread over zones: ${spread}"

# --- StatefulSet -------------------------------------------------------------
start="$(now)"
kc -n "${ns}" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Service
metadata: {name: db}
spec:
  clusterIP: None
  selector: {app: db}
  ports: [{port: 5432}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  replicas: 3
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      topologySpreadConstraints:
      - maxSkew: 1
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: DoNotSchedule
        labelSelector:
          matchLabels: {app: db}
      containers:
      - name: db
        image: example.invalid/db:1
        resources:
          requests: {cpu: 500m, memory: 1Gi}
EOF
wait_ready statefulset db 3 60
log "ok: statefulset db 3/3 Ready in $(since "${start}")s (one pod at a time)"

# --- drain -------------------------------------------------------------------
drained="$(kc -n "${ns}" get pod db-0 -o jsonpath='{.spec.nodeName}')"
mapfile -t before < <(kc -n "${ns}" get pods --field-selector "spec.nodeName=${drained}" -o name)
start="$(now)"
kc drain "${drained}" --ignore-daemonsets --delete-emptydir-data --timeout=120s >/dev/null 2>&1 ||
  fail "kubectl drain ${drained} failed"
left="$(kc -n "${ns}" get pods --field-selector "spec.nodeName=${drained}" -o name)"
[[ -z "${left}" ]] || fail "pods still on ${drained} after drain: ${left}"
wait_ready deployment web "${replicas}" 60
wait_ready statefulset db 3 60
if pod_nodes web | grep -qx "${drained}" || pod_nodes db | grep -qx "${drained}"; then
  fail "a replacement pod landed on the cordoned node ${drained}"
fi
log "ok: drained ${drained} (${#before[@]} pods evicted: ${before[*]#pod/}); all replaced and Ready in $(since "${start}")s"
kc uncordon "${drained}" >/dev/null
drained=""

log "PASS"
