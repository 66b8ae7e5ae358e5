#!/usr/bin/env bash
# Builds the Kubernetes control-plane binaries, etcd and kwok from Go
# modules, at the versions pinned by the build modules under hack/tools/:
#
#   hack/tools/kube/  k8s.io/kubernetes v1.37: kube-apiserver,
#                     kube-controller-manager, kube-scheduler, kubectl; and,
#                     because its tools.go names them, etcd (the release
#                     Kubernetes 1.37 runs) and kwok, kwokctl, built against
#                     the same dependencies
#   hack/tools/etcd/  go.etcd.io/etcd/server/v3: etcd, and
#   hack/tools/kwok/  sigs.k8s.io/kwok: kwok (the kwok controller), kwokctl,
#                     for a Kubernetes build module whose tools.go does not
#                     name them (KUBE_MOD_DIR below)
#
# Usage: hack/build-k8s-binaries.sh [COMPONENT...]
#   COMPONENT is one of kube-apiserver, kube-controller-manager, kube-scheduler,
#   kubectl, etcd, kwok, kwokctl, "all" (every component) or "cluster" (what
#   hack/cluster/up.sh needs, i.e. all of them). Default: kube-apiserver etcd
#   (what envtest needs).
#
# KUBE_MOD_DIR selects another Kubernetes build module (an older minor, say:
# KUBE_MOD_DIR=hack/tools/kube-1.33; relative to the repository root).
#
# Binaries go to bin/k8s/<kubernetes version>/. A component is rebuilt only
# when its binary is missing or its pinned version (or build recipe) changed;
# the file .versions in that directory records what each binary was built
# from. Set FORCE=1 to rebuild anyway. What one build module provides is
# built by one `go build` (the commands share most packages), and builds
# from different modules run side by side.
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
KUBE_MOD_DIR="${KUBE_MOD_DIR:-hack/tools/kube}"
[[ "${KUBE_MOD_DIR}" == /* ]] || KUBE_MOD_DIR="${ROOT}/${KUBE_MOD_DIR}"
KUBE_MOD_DIR="${KUBE_MOD_DIR%/}"
# etcd and kwok come from the Kubernetes build module when its tools.go
# names their commands, else from their own build modules.
names_command() { grep -qF "\"$2\"" "$1/tools.go" 2>/dev/null; }
ETCD_MOD_DIR="${ROOT}/hack/tools/etcd"
if names_command "${KUBE_MOD_DIR}" go.etcd.io/etcd/server/v3; then ETCD_MOD_DIR="${KUBE_MOD_DIR}"; fi
KWOK_MOD_DIR="${ROOT}/hack/tools/kwok"
if names_command "${KUBE_MOD_DIR}" sigs.k8s.io/kwok/cmd/kwok; then KWOK_MOD_DIR="${KUBE_MOD_DIR}"; fi
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

TMP_DIR="$(mktemp -d "${OUT}/.build.XXXXXX")"
trap 'rm -rf "${TMP_DIR}"' EXIT

# --- what to build ---------------------------------------------------------

KUBE_LDFLAGS="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  KUBE_LDFLAGS+=" -X ${pkg}.gitVersion=${K8S_VERSION}"
  KUBE_LDFLAGS+=" -X ${pkg}.gitMajor=${K8S_MAJOR}"
  KUBE_LDFLAGS+=" -X ${pkg}.gitMinor=${K8S_MINOR}"
  KUBE_LDFLAGS+=" -X ${pkg}.gitTreeState=clean"
done
# The tags upstream release builds use (grpcnotrace drops x/net/trace); a
# build module's tags apply to every command built from it.
KUBE_TAGS="selinux,notest,grpcnotrace"
ETCD_LDFLAGS="-s -w"
# kwok's own version, and the Kubernetes version kwokctl assumes by default,
# are link-time variables (as in kwok's release builds); kwokctl picks
# component flags by Kubernetes version, so tell it the one built here.
# Filled in once the kwok version is known.
KWOK_LDFLAGS=""

tags_of() { if [[ "$1" == "${KUBE_MOD_DIR}" ]]; then echo "${KUBE_TAGS}"; fi; }

# exec_name PKG: the file name `go build -o DIR/` gives the command PKG
# (example.com/cmd/v3 is installed as cmd).
exec_name() {
  local base="${1##*/}"
  if [[ "${base}" =~ ^v[0-9]+$ && "$1" == */* ]]; then
    base="${1%/*}"
    base="${base##*/}"
  fi
  printf '%s\n' "${base}"
}

etcd_version=""
kwok_version=""
summary=()
declare -A pkg_of ldflags_of version_args_of stamp_of
mod_dirs=()                 # build modules with something to build, in order
declare -A names_in         # build module -> the components built from it

for name in "${components[@]}"; do
  # Skip duplicates on the command line.
  [[ -n "${stamp_of[${name}]+x}" ]] && continue

  case "${name}" in
    etcd)
      if [[ -z "${etcd_version}" ]]; then
        etcd_version="$(pinned_version "${ETCD_MOD_DIR}" go.etcd.io/etcd/server/v3)"
      fi
      mod_dir="${ETCD_MOD_DIR}"
      module="go.etcd.io/etcd/server/v3"
      version="${etcd_version}"
      pkg="go.etcd.io/etcd/server/v3"
      ldflags="${ETCD_LDFLAGS}"
      version_args_of[${name}]="--version"
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
      ldflags="${KWOK_LDFLAGS}"
      version_args_of[${name}]="--version"
      ;;
    *)
      mod_dir="${KUBE_MOD_DIR}"
      module="k8s.io/kubernetes"
      version="${K8S_VERSION}"
      pkg="k8s.io/kubernetes/cmd/${name}"
      ldflags="${KUBE_LDFLAGS}"
      if [[ "${name}" == kubectl ]]; then
        version_args_of[${name}]="version --client"
      else
        version_args_of[${name}]="--version"
      fi
      ;;
  esac
  tags="$(tags_of "${mod_dir}")"

  fingerprint="$(
    {
      echo "recipe=${RECIPE} pkg=${pkg} tags=${tags} ldflags=${ldflags}"
      echo "goos=$(go env GOOS) goarch=$(go env GOARCH)"
      cat "${mod_dir}/go.mod" "${mod_dir}/go.sum"
    } | sha256 | cut -c1-16
  )"
  stamp_of[${name}]="${name} ${module}@${version} ${fingerprint}"

  if [[ "${FORCE:-0}" != 1 && -x "${OUT}/${name}" && -f "${STAMPS}" ]] &&
    grep -qxF "${stamp_of[${name}]}" "${STAMPS}"; then
    log "${name}: up to date (${module}@${version})"
    summary+=("${name}: cached")
    continue
  fi
  pkg_of[${name}]="${pkg}"
  ldflags_of[${name}]="${ldflags}"
  if [[ -z "${names_in[${mod_dir}]+x}" ]]; then
    mod_dirs+=("${mod_dir}")
    names_in[${mod_dir}]=""
  fi
  names_in[${mod_dir}]+="${names_in[${mod_dir}]:+ }${name}"
done

# --- build -----------------------------------------------------------------

# build_module DIR OUTDIR NAME...: one `go build` of the commands NAME... of
# build module DIR into OUTDIR, each checked by running it.
build_module() {
  local dir="$1" out="$2" name pkg args=() pkgs=()
  shift 2
  args=(-mod=readonly -trimpath -buildvcs=false -tags="$(tags_of "${dir}")")
  for name in "$@"; do
    pkg="${pkg_of[${name}]}"
    pkgs+=("${pkg}")
    # Per-command link flags: the pattern is the command's own package.
    args+=("-ldflags=${pkg}=${ldflags_of[${name}]}")
  done
  mkdir -p "${out}"
  (cd "${dir}" && CGO_ENABLED=0 go build "${args[@]}" -o "${out}/" "${pkgs[@]}") || return 1
  for name in "$@"; do
    pkg="${pkg_of[${name}]}"
    if [[ "$(exec_name "${pkg}")" != "${name}" ]]; then
      mv -f "${out}/$(exec_name "${pkg}")" "${out}/${name}"
    fi
    # shellcheck disable=SC2086 # the version arguments are words
    "${out}/${name}" ${version_args_of[${name}]} >/dev/null 2>&1 || {
      log "${name}: built binary fails '${version_args_of[${name}]}'"
      return 1
    }
  done
}

start="${SECONDS}"
pids=()
for i in "${!mod_dirs[@]}"; do
  dir="${mod_dirs[$i]}"
  read -r -a names <<<"${names_in[${dir}]}"
  log "building ${names[*]} from ${dir#"${ROOT}"/} (one go build) ..."
  (
    # The first module (Kubernetes' whenever it has anything to build) has
    # the longest build: the others, side by side, take the CPU it leaves
    # idle.
    if ((i > 0)); then renice -n 10 -p "${BASHPID}" >/dev/null 2>&1 || true; fi
    build_module "${dir}" "${TMP_DIR}/${i}" "${names[@]}"
    echo "$((SECONDS - start))" >"${TMP_DIR}/${i}.seconds"
  ) &
  pids+=("$!")
done

failed=()
for i in "${!mod_dirs[@]}"; do
  dir="${mod_dirs[$i]}"
  read -r -a names <<<"${names_in[${dir}]}"
  if ! wait "${pids[$i]}"; then
    failed+=("${names[@]}")
    continue
  fi
  for name in "${names[@]}"; do
    mv -f "${TMP_DIR}/${i}/${name}" "${OUT}/${name}"
    {
      if [[ -f "${STAMPS}" ]]; then grep -v "^${name} " "${STAMPS}" || true; fi
      echo "${stamp_of[${name}]}"
    } >"${STAMPS}.tmp"
    mv -f "${STAMPS}.tmp" "${STAMPS}"
    summary+=("${name}: built")
  done
  log "${names[*]}: built in $(cat "${TMP_DIR}/${i}.seconds")s"
done
if ((${#failed[@]} > 0)); then
  die "go build failed for ${failed[*]}"
fi
elapsed=$((SECONDS - start))

summary_text="$(printf '%s; ' "${summary[@]}")"
log "done in ${elapsed}s: ${summary_text%; }"
printf '%s\n' "${OUT}"
