#!/usr/bin/env bash
# Builds the release of the kubectl plugin kubectl-tdb for VERSION (vX.Y.Z,
# semver with the leading v krew requires) into bin/plugin-release/VERSION/:
#
#   kubectl-tdb_VERSION_<os>_<arch>.tar.gz  kubectl-tdb (.exe on windows) and LICENSE
#   sha256sums.txt                          `sha256sum -c` format
#   tdb.yaml                                the krew plugin manifest, rendered from
#                                           hack/krew/tdb.yaml.tmpl with the archives'
#                                           sha256 and their release download URIs
#
# The platforms are the ones the template names (its @SHA256_<os>_<arch>@
# placeholders), so the template is the only list. Binaries are static
# (CGO_ENABLED=0), without local paths or symbol tables, with the version
# stamped into internal/plugin.Version. Archives are reproducible: sorted
# entries, mtime 0, owner and group 0, fixed modes, gzip without name or time
# (GNU tar needed: `tar` or `gtar`). When the machine's own platform is among
# them, the script runs that binary's `version` and fails unless it prints
# VERSION. test/krew (make test-unit) validates what this writes.
#
# Usage: hack/plugin-release.sh vX.Y.Z   (GOFLAGS is passed on to go build)
# The last line on stdout is the output directory.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TEMPLATE="${ROOT}/hack/krew/tdb.yaml.tmpl"
PKG="./cmd/kubectl-tdb"
MODULE="github.com/tdb-operator/tdb-operator"
RELEASES="https://github.com/tdb-operator/tdb-operator/releases/download"

log() { printf 'plugin-release: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

[[ $# -eq 1 ]] || die "usage: $0 vX.Y.Z"
VERSION="$1"
# semver 2.0.0 (https://semver.org), with the leading v.
SEMVER='^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$'
[[ "${VERSION}" =~ ${SEMVER} ]] || die "version ${VERSION@Q} is not a semantic version with a leading v (vX.Y.Z)"

TAR=""
for t in tar gtar; do
  if command -v "$t" >/dev/null 2>&1 && "$t" --version 2>/dev/null | grep -q 'GNU tar'; then TAR="$t"; break; fi
done
[[ -n "${TAR}" ]] || die "GNU tar is needed (tar or gtar) for reproducible archives"
if command -v sha256sum >/dev/null 2>&1; then
  sha256() { sha256sum "$1" | cut -d' ' -f1; }
elif command -v shasum >/dev/null 2>&1; then
  sha256() { shasum -a 256 "$1" | cut -d' ' -f1; }
else
  die "sha256sum or shasum is needed"
fi

[[ -f "${TEMPLATE}" ]] || die "no template ${TEMPLATE}"
[[ -f "${ROOT}/LICENSE" ]] || die "no LICENSE at the repository root"
mapfile -t PLATFORMS < <(grep -o '@SHA256_[a-z0-9]*_[a-z0-9]*@' "${TEMPLATE}" | sed 's/^@SHA256_//; s/@$//' | sort -u)
[[ ${#PLATFORMS[@]} -gt 0 ]] || die "${TEMPLATE} names no platform (@SHA256_<os>_<arch>@)"

OUT="${ROOT}/bin/plugin-release/${VERSION}"
STAGE="$(mktemp -d)"
trap 'rm -rf "${STAGE}"' EXIT
rm -rf "${OUT}"
mkdir -p "${OUT}"

cd "${ROOT}"
HOST="$(go env GOOS)_$(go env GOARCH)"
LDFLAGS="-s -w -X ${MODULE}/internal/plugin.Version=${VERSION}"
SED_ARGS=(-e "s|@VERSION@|${VERSION}|g")
: >"${OUT}/sha256sums.txt"

for platform in "${PLATFORMS[@]}"; do
  goos="${platform%_*}"
  goarch="${platform#*_}"
  exe=""
  [[ "${goos}" == windows ]] && exe=".exe"
  archive="kubectl-tdb_${VERSION}_${goos}_${goarch}.tar.gz"
  dir="${STAGE}/${platform}"
  mkdir -p "${dir}"

  log "building ${goos}/${goarch}"
  CGO_ENABLED=0 GOOS="${goos}" GOARCH="${goarch}" \
    go build -trimpath -ldflags "${LDFLAGS}" -o "${dir}/kubectl-tdb${exe}" "${PKG}"
  cp "${ROOT}/LICENSE" "${dir}/LICENSE"
  chmod 0755 "${dir}/kubectl-tdb${exe}"
  chmod 0644 "${dir}/LICENSE"

  if [[ "${platform}" == "${HOST}" ]]; then
    got="$("${dir}/kubectl-tdb${exe}" version 2>&1)" || die "kubectl-tdb version failed: ${got}"
    [[ "${got}" == *"${VERSION}"* ]] || die "kubectl-tdb version printed ${got@Q}, not ${VERSION}: is ${MODULE}/internal/plugin.Version the variable it prints?"
  fi

  "${TAR}" --create --format=ustar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
    --directory="${dir}" "kubectl-tdb${exe}" LICENSE | gzip -n -9 >"${OUT}/${archive}"
  sum="$(sha256 "${OUT}/${archive}")"
  printf '%s  %s\n' "${sum}" "${archive}" >>"${OUT}/sha256sums.txt"
  SED_ARGS+=(-e "s|@SHA256_${platform}@|${sum}|g")
  log "${archive} ${sum}"
done

sed "${SED_ARGS[@]}" "${TEMPLATE}" >"${OUT}/tdb.yaml"
if grep -n '@[A-Za-z0-9_]*@' "${OUT}/tdb.yaml" >&2; then
  die "placeholders left in ${OUT}/tdb.yaml"
fi
grep -q "${RELEASES}/${VERSION}/" "${OUT}/tdb.yaml" || die "${OUT}/tdb.yaml has no URI under ${RELEASES}/${VERSION}/"

log "wrote ${#PLATFORMS[@]} archives, sha256sums.txt and tdb.yaml"
echo "${OUT}"
