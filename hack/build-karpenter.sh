#!/usr/bin/env bash
# Builds Karpenter's kwok cloud provider (sigs.k8s.io/karpenter/kwok), at the
# version pinned by the build module hack/tools/karpenter/, into
# bin/karpenter/<version>/karpenter-kwok, and copies next to it the CRDs it
# needs (NodePool, NodeClaim, NodeOverlay, CapacityBuffer from the module's
# kwok/charts/crds/, KWOKNodeClass from kwok/apis/crds/) into crds/.
#
# Karpenter's go.mod needs a newer Go than the rest of the project: the
# toolchain it names (the go directive of hack/tools/karpenter/go.mod) is
# fetched through the Go module proxy (GOTOOLCHAIN).
#
# Rebuilt only when the binary is missing or the pinned version changed.
# FORCE=1 rebuilds anyway. The last line on stdout is the output directory.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MOD_DIR="${ROOT}/hack/tools/karpenter"
export GOWORK=off
GO_VERSION="$(sed -n 's/^go \([0-9.]*\)$/\1/p' "${MOD_DIR}/go.mod")"
[[ -n "${GO_VERSION}" ]] || { echo "build-karpenter: no go directive in ${MOD_DIR}/go.mod" >&2; exit 1; }
export GOTOOLCHAIN="go${GO_VERSION}"

log() { printf 'build-karpenter: %s\n' "$*" >&2; }

VERSION="$(cd "${MOD_DIR}" && go list -mod=readonly -m -f '{{.Version}}' sigs.k8s.io/karpenter)"
OUT="${ROOT}/bin/karpenter/${VERSION}"
BIN="${OUT}/karpenter-kwok"
STAMP="${OUT}/.built"
WANT="sigs.k8s.io/karpenter ${VERSION} go${GO_VERSION} recipe=1"

mkdir -p "${OUT}"
if command -v flock >/dev/null 2>&1; then
  exec 9>"${OUT}/.lock"
  flock 9
fi

if [[ "${FORCE:-}" != 1 && -x "${BIN}" && -f "${STAMP}" && "$(cat "${STAMP}")" == "${WANT}" ]]; then
  log "karpenter-kwok ${VERSION} is up to date"
else
  log "building karpenter-kwok ${VERSION} with go${GO_VERSION} (about 2 minutes cold)"
  (cd "${MOD_DIR}" && CGO_ENABLED=0 go build -mod=readonly -trimpath -buildvcs=false \
    -ldflags="-s -w -X sigs.k8s.io/karpenter/pkg/operator.Version=${VERSION}" \
    -o "${BIN}.tmp" sigs.k8s.io/karpenter/kwok)
  mv "${BIN}.tmp" "${BIN}"
  "${BIN}" --help >/dev/null 2>&1 || { log "the built binary does not run"; exit 1; }
  MOD_SRC="$(cd "${MOD_DIR}" && go list -mod=readonly -m -f '{{.Dir}}' sigs.k8s.io/karpenter)"
  rm -rf "${OUT}/crds"
  mkdir -p "${OUT}/crds"
  cp "${MOD_SRC}"/kwok/charts/crds/*.yaml "${MOD_SRC}"/kwok/apis/crds/*.yaml "${OUT}/crds/"
  chmod u+w "${OUT}"/crds/*.yaml
  echo "${WANT}" > "${STAMP}"
fi
echo "${OUT}"
