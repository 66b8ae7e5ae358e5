# shellcheck shell=bash
# Shared by the hack/cluster/ scripts: paths, binaries and node manifests of a
# local kwok cluster. Source it; it defines functions and variables only.
#
# Environment (all optional):
#   CLUSTER_NAME     cluster name (default tdb)
#   CLUSTER_WORKDIR  where kwokctl keeps its clusters (default bin/cluster);
#                    exported to kwokctl as KWOK_WORKDIR, so clusters made
#                    here never mix with a personal ~/.kwok
#   NODE_PREFIX      node name prefix (default kwok): nodes are named
#                    <prefix>-<zone>-<n>, e.g. kwok-zone-a-1
#   NODE_CPU, NODE_MEMORY, NODE_PODS
#                    capacity = allocatable of every node
#                    (default 16, 64Gi, 110)

CLUSTER_LIB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ROOT="${CLUSTER_LIB_ROOT}"

CLUSTER_NAME="${CLUSTER_NAME:-tdb}"
CLUSTER_WORKDIR="${CLUSTER_WORKDIR:-${ROOT}/bin/cluster}"
NODE_PREFIX="${NODE_PREFIX:-kwok}"
NODE_CPU="${NODE_CPU:-16}"
NODE_MEMORY="${NODE_MEMORY:-64Gi}"
NODE_PODS="${NODE_PODS:-110}"

# kwokctl reads its work directory from KWOK_WORKDIR (default ~/.kwok).
export KWOK_WORKDIR="${CLUSTER_WORKDIR}"
CLUSTER_DIR="${CLUSTER_WORKDIR}/clusters/${CLUSTER_NAME}"
CLUSTER_KUBECONFIG="${CLUSTER_DIR}/kubeconfig.yaml"
# The config up.sh generates for `kwokctl create cluster -c`.
CLUSTER_CONFIG="${CLUSTER_WORKDIR}/${CLUSTER_NAME}.kwokctl.yaml"

# The build modules are standalone: never let a go.work file elsewhere in the
# tree pull them into a workspace.
export GOWORK=off

log() { printf '%s: %s\n' "${CLUSTER_LOG_PREFIX:-cluster}" "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

cluster_check_name() {
  [[ "${CLUSTER_NAME}" =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ ]] ||
    die "CLUSTER_NAME=${CLUSTER_NAME}: want lower-case letters, digits and '-'"
}

# cluster_binaries: builds (or finds cached) every binary the cluster needs
# and sets BIN, KUBECTL and KWOKCTL. Progress goes to stderr.
cluster_binaries() {
  # Progress only for what is (re)built; cached binaries are summed up by
  # the script's last "done:" line.
  BIN="$("${ROOT}/hack/build-k8s-binaries.sh" cluster \
    2> >(grep --line-buffered -v ': up to date (' >&2) | tail -1)" ||
    die "building the cluster binaries failed"
  [[ -d "${BIN}" ]] || die "hack/build-k8s-binaries.sh printed no directory"
  KUBECTL="${BIN}/kubectl"
  KWOKCTL="${BIN}/kwokctl"
}

# cluster_binaries_if_built: like cluster_binaries but never builds: uses the
# binaries the cluster was created with (recorded in its config), else any
# built set. Returns 1 when kwokctl or kubectl is missing.
cluster_binaries_if_built() {
  local d dirs=()
  if [[ -f "${CLUSTER_CONFIG}" ]]; then
    d="$(sed -n 's/^  kubectlBinary: //p' "${CLUSTER_CONFIG}" | head -1)"
    [[ -n "${d}" ]] && dirs+=("$(dirname "${d}")")
  fi
  for d in "${ROOT}"/bin/k8s/*/; do dirs+=("${d%/}"); done
  for d in "${dirs[@]}"; do
    if [[ -x "${d}/kwokctl" && -x "${d}/kubectl" ]]; then
      BIN="${d}"
      KUBECTL="${BIN}/kubectl"
      KWOKCTL="${BIN}/kwokctl"
      return 0
    fi
  done
  return 1
}

# kwokctl_run ARGS...: kwokctl with our binaries first on PATH (kwokctl looks
# kubectl up on PATH before its configured kubectlBinary).
kwokctl_run() {
  PATH="${BIN}:${PATH}" "${KWOKCTL}" --name "${CLUSTER_NAME}" "$@"
}

kc() { "${KUBECTL}" --kubeconfig "${CLUSTER_KUBECONFIG}" "$@"; }

cluster_exists() { [[ -f "${CLUSTER_DIR}/kwok.yaml" ]]; }

cluster_api_ready() { kc get --raw /readyz >/dev/null 2>&1; }

# duration_ms DURATION: a Go-style duration ("2s", "500ms", "1.5s", "1m",
# "0"; a bare number means seconds) in whole milliseconds.
duration_ms() {
  local d="$1" num unit
  if [[ "${d}" =~ ^([0-9]+(\.[0-9]+)?)(ms|s|m)?$ ]]; then
    num="${BASH_REMATCH[1]}"
    unit="${BASH_REMATCH[3]:-s}"
  else
    die "invalid duration '${d}' (want e.g. 2s, 500ms, 1m, 0)"
  fi
  case "${unit}" in
    ms) awk -v n="${num}" 'BEGIN { printf "%d\n", n }' ;;
    s) awk -v n="${num}" 'BEGIN { printf "%d\n", n * 1000 }' ;;
    m) awk -v n="${num}" 'BEGIN { printf "%d\n", n * 60000 }' ;;
  esac
}

# zone_name I: the I-th zone (0-based): zone-a, zone-b, ... zone-z.
zone_name() {
  local letters=abcdefghijklmnopqrstuvwxyz
  (($1 >= 0 && $1 < 26)) || die "at most 26 zones"
  printf 'zone-%s\n' "${letters:$1:1}"
}

# normalize_zone Z: "a" or "zone-a" -> "zone-a"; any other name is kept.
normalize_zone() {
  if [[ "$1" =~ ^[a-z]$ ]]; then
    printf 'zone-%s\n' "$1"
  else
    printf '%s\n' "$1"
  fi
}

# node_pod_cidr ZONE N: a /24 of fake pod IPs for node N of ZONE, so that
# kwok hands out pod IPs per node (its cluster-wide default pool has only
# 254 addresses). zone-a..zone-z get 10.1..26.N.0/24, other zone names
# 10.64..191.N.0/24 by checksum. Nothing routes these addresses. Empty when
# N > 255 (kwok then uses its default pool).
node_pod_cidr() {
  local zone="$1" n="$2" letters=abcdefghijklmnopqrstuvwxyz octet rest
  [[ "${n}" =~ ^[0-9]+$ ]] && ((10#${n} >= 1 && 10#${n} <= 255)) || return 0
  if [[ "${zone}" =~ ^zone-([a-z])$ ]]; then
    rest="${letters%%"${BASH_REMATCH[1]}"*}"
    octet=$((${#rest} + 1))
  else
    octet=$((64 + $(printf '%s' "${zone}" | cksum | cut -d' ' -f1) % 128))
  fi
  printf '10.%d.%d.0/24\n' "${octet}" "$((10#${n}))"
}

# node_manifest NAME ZONE: a fake Node that kwok-controller keeps Ready.
# Capacity = allocatable, no taints, so the real kube-scheduler places pods on
# it like on any worker.
node_manifest() {
  local name="$1" zone="$2" cidr spec=" {}"
  cidr="$(node_pod_cidr "${zone}" "${name##*-}")"
  if [[ -n "${cidr}" ]]; then
    spec="
  podCIDR: ${cidr}
  podCIDRs: [${cidr}]"
  fi
  cat <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: ${name}
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
  labels:
    type: kwok
    kubernetes.io/hostname: ${name}
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    beta.kubernetes.io/os: linux
    beta.kubernetes.io/arch: amd64
    node-role.kubernetes.io/agent: ""
    topology.kubernetes.io/region: local
    topology.kubernetes.io/zone: ${zone}
spec:${spec}
status:
  allocatable:
    cpu: "${NODE_CPU}"
    memory: ${NODE_MEMORY}
    pods: "${NODE_PODS}"
  capacity:
    cpu: "${NODE_CPU}"
    memory: ${NODE_MEMORY}
    pods: "${NODE_PODS}"
  nodeInfo:
    architecture: amd64
    operatingSystem: linux
EOF
}

# wait_nodes_ready TIMEOUT NAME...: waits until the nodes report Ready.
wait_nodes_ready() {
  local timeout="$1"
  shift
  [[ $# -gt 0 ]] || return 0
  kc wait --for=condition=Ready --timeout="${timeout}" "${@/#/node/}" >/dev/null
}

# add_nodes ZONE COUNT: creates COUNT more nodes in ZONE (numbered after the
# highest existing <prefix>-<zone>-<n>) and waits until they are Ready.
# Prints the new node names on stdout.
add_nodes() {
  local zone count max=0 n name names=()
  zone="$(normalize_zone "$1")"
  count="$2"
  [[ "${zone}" =~ ^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$ ]] || die "invalid zone '${zone}'"
  [[ "${count}" =~ ^[0-9]+$ ]] || die "invalid node count '${count}'"
  while read -r name; do
    n="${name#"${NODE_PREFIX}-${zone}-"}"
    if [[ "${n}" =~ ^[0-9]+$ ]] && ((10#${n} > max)); then max=$((10#${n})); fi
  done < <(kc get nodes -o name | sed 's|^node/||')
  for ((n = max + 1; n <= max + count; n++)); do
    names+=("${NODE_PREFIX}-${zone}-${n}")
  done
  ensure_nodes "${zone}" "${names[@]}"
  printf '%s\n' "${names[@]}"
}

# ensure_nodes ZONE NAME...: creates the named nodes in ZONE unless they
# exist (existing nodes are left as they are, cordoned or not), then waits
# until all are Ready.
ensure_nodes() {
  local zone="$1" name manifest="" existing
  shift
  [[ $# -gt 0 ]] || return 0
  existing=" $(kc get nodes -o name | sed 's|^node/||' | tr '\n' ' ') "
  for name in "$@"; do
    [[ "${existing}" == *" ${name} "* ]] && continue
    manifest+="$(node_manifest "${name}" "${zone}")"$'\n'
  done
  if [[ -n "${manifest}" ]]; then
    printf '%s' "${manifest}" | kc create -f - >/dev/null
  fi
  # kwok marks a few nodes Ready a second under load: wait longer for more.
  wait_nodes_ready "$((120 + $# / 2))s" "$@"
}
