#!/usr/bin/env bash
# Builds promtool, Prometheus's rule checker and rule unit-test runner, from
# the Go module pinned by hack/tools/prometheus (github.com/prometheus/prometheus
# v0.X.Y is the Go module of Prometheus v3.X.Y), into
# bin/promtool-<module version>. Rebuilt only when missing, or when the build
# module or this recipe changes (FORCE=1 rebuilds anyway).
#
# Usage: hack/build-promtool.sh
#
# Progress goes to stderr; the last line on stdout is the binary's absolute
# path, so that PROMTOOL=$(hack/build-promtool.sh | tail -1) works.
#
# Only Go is needed; the build uses the committed go.sum (-mod=readonly).
# The remove_all_sd tag leaves out Prometheus's service discovery plugins,
# which promtool's rule commands do not use (upstream's own switch for
# smaller builds). Set GOFLAGS=-p=1 on a small machine.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MOD_DIR="${ROOT}/hack/tools/prometheus"
MODULE=github.com/prometheus/prometheus
RECIPE=1
export GOWORK=off

log() { printf 'build-promtool: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v go >/dev/null 2>&1 || die "go is not on PATH"
VERSION="$(cd "${MOD_DIR}" && go list -mod=readonly -m -f '{{.Version}}' "${MODULE}")" ||
  die "cannot resolve ${MODULE} in hack/tools/prometheus"
[[ "${VERSION}" =~ ^v0\.([0-9]+)\.([0-9]+)$ ]] || die "unexpected ${MODULE} version ${VERSION}"
# The Prometheus release the module version stands for (v0.316.0 -> 3.16.0).
MINOR="${BASH_REMATCH[1]}"
RELEASE="3.$((10#${MINOR} - 300)).${BASH_REMATCH[2]}"

mkdir -p "${ROOT}/bin"
OUT="${ROOT}/bin/promtool-${VERSION}"
STAMP="${OUT}.stamp"
TAGS=remove_all_sd
LDFLAGS="-s -w -X github.com/prometheus/common/version.Version=${RELEASE} -X github.com/prometheus/common/version.Branch=release -X github.com/prometheus/common/version.Revision=${VERSION}"

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum | cut -d' ' -f1; else shasum -a 256 | cut -d' ' -f1; fi
}
fingerprint="$(
  {
    echo "recipe=${RECIPE} tags=${TAGS} ldflags=${LDFLAGS}"
    echo "goos=$(go env GOOS) goarch=$(go env GOARCH)"
    cat "${MOD_DIR}/go.mod" "${MOD_DIR}/go.sum"
  } | sha256 | cut -c1-16
)"

# Serialise concurrent runs (parallel test packages) on the same output.
if command -v flock >/dev/null 2>&1; then
  exec 9>"${OUT}.lock"
  flock 9
fi

if [[ "${FORCE:-0}" != 1 && -x "${OUT}" && -f "${STAMP}" && "$(cat "${STAMP}")" == "${fingerprint}" ]]; then
  log "promtool: up to date (${MODULE}@${VERSION})"
else
  log "promtool: building ${MODULE}@${VERSION} (Prometheus ${RELEASE}); a few minutes the first time"
  tmp="$(mktemp "${OUT}.XXXXXX")"
  trap 'rm -f "${tmp}"' EXIT
  (cd "${MOD_DIR}" && CGO_ENABLED=0 go build -mod=readonly -trimpath -tags "${TAGS}" -ldflags "${LDFLAGS}" \
    -o "${tmp}" "${MODULE}/cmd/promtool")
  "${tmp}" --version >/dev/null || die "the built promtool does not run"
  mv -f "${tmp}" "${OUT}"
  printf '%s\n' "${fingerprint}" >"${STAMP}"
  log "promtool: built $("${OUT}" --version 2>&1 | head -1)"
fi
printf '%s\n' "${OUT}"
