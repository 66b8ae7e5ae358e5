#!/usr/bin/env bash
# Builds the Kubernetes control-plane binaries and etcd from Go modules, at
# the versions pinned by the build modules under hack/tools/:
#
#   hack/tools/kube/  k8s.io/kubernetes: kube-apiserver, kube-controller-manager,
#                     kube-scheduler, kubectl (another module with KUBE_MOD_DIR)
#   hack/tools/etcd/  go.etcd.io/etcd/server/v3: etcd
#   hack/tools/kwok/  sigs.k8s.io/kwok: kwok (the kwok controller), kwokctl
#
# Usage: hack/build-k8s-binaries.sh [COMPONENT...]
#   COMPONENT is one of kube-apiserver, kube-controller-manager, kube-scheduler,
#   kubectl, etcd, kwok, kwokctl, "all" (every component) or "cluster" (what
#   hack/cluster/up.sh needs, i.e. all of them). Default: kube-apiserver etcd
#   (what envtest needs).
#
# Binaries go to bin/k8s/<kubernetes version>/. A component is rebuilt only
# when its binary is missing or its pinned version (or build recipe) changed;
# the file .versions in that directory records what each binary was built
# from. Set FORCE=1 to rebuild anyway.
#
# Progress goes to stderr; the last line on stdout is the absolute output
# directory, so that
#   KUBEBUILDER_ASSETS=$(hack/build-k8s-binaries.sh | tail -1)
# works for controller-runtime's envtest.
#
# Only Go is needed. Builds use the committed go.sum files (-mod=readonly),
# so they are reproducible; to bump a version edit the build module's go.mod
# and run `go mod tidy` in it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# KUBE_MOD_DIR selects another build module for the Kubernetes binaries (an
# older minor, say: KUBE_MOD_DIR=hack/tools/kube-1.33); relative paths are
# taken from the repository root. Output still goes to bin/k8s/<its version>/.
KUBE_MOD_DIR="${KUBE_MOD_DIR:-hack/tools/kube}"
[[ "${KUBE_MOD_DIR}" == /* ]] || KUBE_MOD_DIR="${ROOT}/${KUBE_MOD_DIR}"
KUBE_MOD_DIR="${KUBE_MOD_DIR%/}"
ETCD_MOD_DIR="${ROOT}/hack/tools/etcd"
KWOK_MOD_DIR="${ROOT}/hack/tools/kwok"
ALL_COMPONENTS=(kube-apiserver etcd kube-controller-manager kube-scheduler kubectl kwok kwokctl)

# Bump when the way binaries are built changes, so existing ones get rebuilt.
RECIPE=1

# The build modules are standalone: never let a go.work file elsewhere in the
# tree pull them into a workspace.
export GOWORK=off

log() { printf 'build-k8s-binaries: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

usage() {
  sed -n '2,/^set -euo pipefail$/{/^#/s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}" >&2
}

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum | cut -d' ' -f1
  else
    shasum -a 256 | cut -d' ' -f1
  fi
}

# pinned_version DIR MODULE: the version of MODULE selected by build module DIR.
pinned_version() {
  local v
  v="$(cd "$1" && go list -mod=readonly -m -f '{{.Version}}' "$2")" ||
    die "cannot resolve $2 in ${1#"${ROOT}"/}"
  [[ -n "${v}" ]] || die "no version for $2 in ${1#"${ROOT}"/}"
  printf '%s\n' "${v}"
}

command -v go >/dev/null 2>&1 || die "go is not on PATH"

components=()
for arg in "$@"; do
  case "${arg}" in
    -h | --help) usage; exit 0 ;;
    all | cluster) components+=("${ALL_COMPONENTS[@]}") ;;
    kube-apiserver | kube-controller-manager | kube-scheduler | kubectl | etcd | kwok | kwokctl)
      components+=("${arg}") ;;
    *) usage; die "unknown component: ${arg}" ;;
  esac
done
if [[ ${#components[@]} -eq 0 ]]; then
  components=(kube-apiserver etcd)
fi

# --- pinned versions -------------------------------------------------------

K8S_VERSION="$(pinned_version "${KUBE_MOD_DIR}" k8s.io/kubernetes)"
if [[ ! "${K8S_VERSION}" =~ ^v1\.([0-9]+)\.([0-9]+)$ ]]; then
  die "unexpected k8s.io/kubernetes version ${K8S_VERSION}"
fi
K8S_MAJOR=1
K8S_MINOR="${BASH_REMATCH[1]}"
STAGING_VERSION="v0.${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"

# Every staging repository must be replaced with the release matching
# k8s.io/kubernetes (v1.X.Y -> v0.X.Y); catch a half-done bump early.
while read -r from _ to ver; do
  [[ "${from}" == k8s.io/* ]] || continue
  [[ "${to}" == "${from}" && "${ver}" == "${STAGING_VERSION}" ]] ||
    die "${KUBE_MOD_DIR#"${ROOT}"/}/go.mod: replace ${from} => ${to} ${ver}; want ${from} ${STAGING_VERSION}"
done < <(grep -E '^[[:space:]]*(replace[[:space:]]+)?k8s\.io/[^[:space:]]+[[:space:]]+=>' "${KUBE_MOD_DIR}/go.mod" |
  sed -E 's/^[[:space:]]*(replace[[:space:]]+)?//')

OUT="${ROOT}/bin/k8s/${K8S_VERSION}"
mkdir -p "${OUT}"
STAMPS="${OUT}/.versions"

# Serialise concurrent runs (e.g. parallel test packages) on the same output.
if command -v flock >/dev/null 2>&1; then
  exec 9>"${OUT}/.lock"
  flock 9
fi

TMP_BIN=""
cleanup() { if [[ -n "${TMP_BIN}" ]]; then rm -f "${TMP_BIN}"; fi; }
trap cleanup EXIT

# --- build -----------------------------------------------------------------

KUBE_LDFLAGS="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  KUBE_LDFLAGS+=" -X ${pkg}.gitVersion=${K8S_VERSION}"
  KUBE_LDFLAGS+=" -X ${pkg}.gitMajor=${K8S_MAJOR}"
  KUBE_LDFLAGS+=" -X ${pkg}.gitMinor=${K8S_MINOR}"
  KUBE_LDFLAGS+=" -X ${pkg}.gitTreeState=clean"
done
# The tags upstream release builds use (grpcnotrace drops x/net/trace).
KUBE_TAGS="selinux,notest,grpcnotrace"
ETCD_LDFLAGS="-s -w"
# kwok's own version, and the Kubernetes version kwokctl assumes by default,
# are link-time variables (as in kwok's release builds); kwokctl picks
# component flags by Kubernetes version, so tell it the one built here.
# Filled in once the kwok version is known.
KWOK_LDFLAGS=""

etcd_version=""
kwok_version=""
summary=()

for name in "${components[@]}"; do
  # Skip duplicates on the command line.
  for done_name in "${summary[@]+"${summary[@]}"}"; do
    [[ "${done_name%%:*}" == "${name}" ]] && continue 2
  done

  case "${name}" in
    etcd)
      if [[ -z "${etcd_version}" ]]; then
        etcd_version="$(pinned_version "${ETCD_MOD_DIR}" go.etcd.io/etcd/server/v3)"
      fi
      mod_dir="${ETCD_MOD_DIR}"
      module="go.etcd.io/etcd/server/v3"
      version="${etcd_version}"
      pkg="go.etcd.io/etcd/server/v3"
      tags=""
      ldflags="${ETCD_LDFLAGS}"
      version_args=(--version)
      ;;
    kwok | kwokctl)
      if [[ -z "${kwok_version}" ]]; then
        kwok_version="$(pinned_version "${KWOK_MOD_DIR}" sigs.k8s.io/kwok)"
        KWOK_LDFLAGS="-s -w"
        KWOK_LDFLAGS+=" -X sigs.k8s.io/kwok/pkg/consts.Version=${kwok_version#v}"
        KWOK_LDFLAGS+=" -X sigs.k8s.io/kwok/pkg/consts.KubeVersion=${K8S_VERSION#v}"
      fi
      mod_dir="${KWOK_MOD_DIR}"
      module="sigs.k8s.io/kwok"
      version="${kwok_version}"
      pkg="sigs.k8s.io/kwok/cmd/${name}"
      tags=""
      ldflags="${KWOK_LDFLAGS}"
      version_args=(--version)
      ;;
    *)
      mod_dir="${KUBE_MOD_DIR}"
      module="k8s.io/kubernetes"
      version="${K8S_VERSION}"
      pkg="k8s.io/kubernetes/cmd/${name}"
      tags="${KUBE_TAGS}"
      ldflags="${KUBE_LDFLAGS}"
      if [[ "${name}" == kubectl ]]; then
        version_args=(version --client)
      else
        version_args=(--version)
      fi
      ;;
  esac

  fingerprint="$(
    {
      echo "recipe=${RECIPE} pkg=${pkg} tags=${tags} ldflags=${ldflags}"
      echo "goos=$(go env GOOS) goarch=$(go env GOARCH)"
      cat "${mod_dir}/go.mod" "${mod_dir}/go.sum"
    } | sha256 | cut -c1-16
  )"
  stamp="${name} ${module}@${version} ${fingerprint}"

  if [[ "${FORCE:-0}" != 1 && -x "${OUT}/${name}" && -f "${STAMPS}" ]] &&
    grep -qxF "${stamp}" "${STAMPS}"; then
    log "${name}: up to date (${module}@${version})"
    summary+=("${name}: cached")
    continue
  fi

  log "${name}: building from ${module}@${version} ..."
  start="${SECONDS}"
  TMP_BIN="${OUT}/.${name}.tmp.$$"
  (
    cd "${mod_dir}"
    CGO_ENABLED=0 go build -mod=readonly -trimpath -buildvcs=false \
      -tags="${tags}" -ldflags="${ldflags}" -o "${TMP_BIN}" "${pkg}"
  ) || die "${name}: go build failed"
  "${TMP_BIN}" "${version_args[@]}" >/dev/null 2>&1 ||
    die "${name}: built binary fails '${version_args[*]}'"
  mv -f "${TMP_BIN}" "${OUT}/${name}"
  TMP_BIN=""

  {
    if [[ -f "${STAMPS}" ]]; then grep -v "^${name} " "${STAMPS}" || true; fi
    echo "${stamp}"
  } >"${STAMPS}.tmp"
  mv -f "${STAMPS}.tmp" "${STAMPS}"

  elapsed=$((SECONDS - start))
  log "${name}: built in ${elapsed}s"
  summary+=("${name}: built in ${elapsed}s")
done

summary_text="$(printf '%s; ' "${summary[@]}")"
log "done: ${summary_text%; }"
printf '%s\n' "${OUT}"
