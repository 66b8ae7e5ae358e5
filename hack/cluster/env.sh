#!/usr/bin/env bash
# Prints shell exports for using the cluster made by hack/cluster/up.sh:
#
#   eval "$(hack/cluster/env.sh)"
#
# sets KUBECONFIG to the cluster's kubeconfig and puts the kubectl built for
# it (bin/k8s/<version>/) first on PATH. Environment: CLUSTER_NAME (default
# tdb), CLUSTER_WORKDIR.
set -euo pipefail

CLUSTER_LOG_PREFIX="cluster-env"
# shellcheck source=hack/cluster/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cluster_check_name
cluster_exists || die "cluster ${CLUSTER_NAME} does not exist; run hack/cluster/up.sh"
cluster_binaries_if_built || die "binaries not built; run hack/cluster/up.sh"
printf 'export KUBECONFIG=%q\n' "${CLUSTER_KUBECONFIG}"
printf 'export PATH=%q:"$PATH"\n' "${BIN}"
