#!/usr/bin/env bash
# Adds nodes to a running cluster made by hack/cluster/up.sh, e.g. to make
# room for pods while other nodes are drained.
#
# Usage: hack/cluster/add-nodes.sh ZONE [COUNT]
#   ZONE   zone-a, zone-b, ... (or just a, b, ...); a new zone name is fine
#   COUNT  how many nodes to add (default 1)
#
# New nodes are named <NODE_PREFIX>-<zone>-<n>, numbered after the highest
# existing one in that zone, have the same labels and allocatable as those
# up.sh makes (NODE_CPU, NODE_MEMORY, NODE_PODS) and are Ready when this
# returns. Their names are printed on stdout, one a line.
#
# Environment: CLUSTER_NAME (default tdb), CLUSTER_WORKDIR, NODE_PREFIX.
#
# Scripts can source hack/cluster/lib.sh and call `add_nodes ZONE COUNT`
# after `cluster_binaries` instead.
set -euo pipefail

CLUSTER_LOG_PREFIX="cluster-add-nodes"
# shellcheck source=hack/cluster/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() { sed -n '2,/^set -euo pipefail$/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}" >&2; }
case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  "") usage; die "missing ZONE" ;;
esac
[[ $# -le 2 ]] || { usage; die "too many arguments"; }
zone="$1"
count="${2:-1}"
[[ "${count}" =~ ^[1-9][0-9]*$ ]] || die "COUNT=${count}: want a positive number"

cluster_check_name
cluster_exists || die "cluster ${CLUSTER_NAME} does not exist; run hack/cluster/up.sh"
cluster_binaries_if_built || die "binaries not built; run hack/cluster/up.sh"
cluster_api_ready || die "cluster ${CLUSTER_NAME} is not running; run hack/cluster/up.sh"

add_nodes "${zone}" "${count}"
log "added ${count} node(s) in $(normalize_zone "${zone}")"
