#!/usr/bin/env bash
# Installs what Paddock needs on Debian/Ubuntu, and nothing already there.
#
#   scripts/deps.sh        what `make run` needs
#   scripts/deps.sh kube   also what the kube runtime's tests need (`make
#                          test`): etcd, containerd, the CNI plugins, and the
#                          Kubernetes binaries built by tools/kube/build.sh
#                          into /var/cache/paddock/kube-v1.37.2 (cold ~8.5 min
#                          on 2 idle cores, ~2.7 GB RAM; warm: under a second)
set -euo pipefail
kube=0
[ "${1:-}" = kube ] && kube=1
export PATH=/usr/local/go/bin:$PATH

need_go="1.26"
if ! command -v go >/dev/null; then
  echo "deps: Go $need_go or newer is required (expected at /usr/local/go/bin/go)" >&2
  exit 1
fi
have=$(go env GOVERSION | sed 's/^go//')
if [ "$(printf '%s\n%s\n' "$need_go" "$have" | sort -V | head -n1)" != "$need_go" ]; then
  echo "deps: Go $have is too old; Paddock needs $need_go or newer" >&2
  exit 1
fi

# command → Debian package
declare -A pkgs=(
  [mkfs.xfs]=xfsprogs      # writable-layer store (XFS project quotas)
  [mkfs.ext4]=e2fsprogs    # volumes (ext4 images, docs/state.md)
  [mmdebstrap]=mmdebstrap  # `paddock template build debian`
  [ip]=iproute2            # network tests create their own namespaces
  [nft]=nftables           # inspecting rules in tests
  [bwrap]=bubblewrap       # benchmark peer
  [runc]=runc              # benchmark peer
  [chromium]=chromium      # the sandbox browser (docs/browser.md)
  [docker-registry]=docker-registry # image template tests: a real registry (docs/templates.md)
  [skopeo]=skopeo          # image template tests: docker-save and OCI archives
  [umoci]=umoci            # image pull benchmark peer
  [buildah]=buildah        # Dockerfile build benchmark peer
  [busybox]=busybox-static # Dockerfile build tests: a small static userland
)
if [ $kube = 1 ]; then
  pkgs[etcd]=etcd-server   # kube tests: the cluster's store
  pkgs[containerd]=containerd # kube tests: the node's container runtime (with runc)
fi
missing=()
for cmd in "${!pkgs[@]}"; do
  command -v "$cmd" >/dev/null || missing+=("${pkgs[$cmd]}")
done
[ -e /etc/ssl/certs/ca-certificates.crt ] || missing+=(ca-certificates)
[ -e /usr/share/fonts/truetype/liberation ] || missing+=(fonts-liberation) # pages render with real fonts
if [ $kube = 1 ]; then
  [ -e /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins) # kube tests: the pod network
fi
# The Python SDK's suite and wheel (sdk/sdktest), with Debian's python3:
# python module → Debian package.
declare -A pymods=([httpx]=python3-httpx [websockets]=python3-websockets [pytest]=python3-pytest
  [pip]=python3-pip [setuptools]=python3-setuptools [wheel]=python3-wheel)
for mod in "${!pymods[@]}"; do
  /usr/bin/python3 -c "import $mod" 2>/dev/null || missing+=("${pymods[$mod]}")
done
# Code contexts (docs/code.md): Debian's Jupyter kernel and data stack for
# /usr/bin/python3, and TypeScript for Node.
for mod in ipykernel:python3-ipykernel numpy:python3-numpy pandas:python3-pandas matplotlib:python3-matplotlib; do
  /usr/bin/python3 -c "import ${mod%%:*}" 2>/dev/null || missing+=("${mod#*:}")
done
[ -e /usr/share/nodejs/typescript ] || missing+=(node-typescript)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "deps: missing ${missing[*]}; run as root to install them" >&2
    exit 1
  fi
  echo "deps: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ $kube = 1 ]; then
  "$(dirname "$0")/../tools/kube/build.sh"
fi

# gVisor's runsc (docs/gvisor.md): built from the Go module proxy at a pinned
# version, never downloaded as a binary, into a cache directory outside the
# repository, and reused when already there. The version and the directory
# rule must match internal/runtime/gvisor (RunscVersion, DefaultRunscPath).
# PADDOCK_NO_RUNSC=1 skips it (gVisor sandboxes are then refused).
runsc_version="v0.0.0-20260701204157-69c2d17aea96"
if [ -n "${PADDOCK_CACHE:-}" ]; then
  cache="$PADDOCK_CACHE"
elif [ "$(id -u)" = 0 ]; then
  cache=/var/cache/paddock
else
  cache="${XDG_CACHE_HOME:-$HOME/.cache}/paddock"
fi
runsc_dir="$cache/runsc-$runsc_version"
if [ "${PADDOCK_NO_RUNSC:-}" = 1 ]; then
  echo "deps: runsc skipped (PADDOCK_NO_RUNSC=1)"
elif [ -x "$runsc_dir/runsc" ]; then
  echo "deps: runsc $runsc_version at $runsc_dir/runsc (cached)"
else
  echo "deps: building runsc $runsc_version into $runsc_dir (about 80 s on 2 cores)"
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.runsc-build.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  # gVisor builds only without cgo; -mod=mod because its go.mod is not tidy
  # for the module proxy's view.
  CGO_ENABLED=0 GOFLAGS=-mod=mod GOBIN="$tmp" go install -trimpath "gvisor.dev/gvisor/runsc@$runsc_version"
  mkdir -p "$runsc_dir"
  # Publish atomically: a half-written binary is never found as cached.
  mv "$tmp/runsc" "$runsc_dir/runsc.new" && mv "$runsc_dir/runsc.new" "$runsc_dir/runsc"
  rm -rf "$tmp"
  trap - EXIT
  echo "deps: runsc $runsc_version at $runsc_dir/runsc"
fi
