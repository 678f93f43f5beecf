#!/usr/bin/env bash
# modern_torch.sh [CMD...] — runs CMD in a Debian testing ("forky") root with PyTorch 2.x (python3-torch,
# torchvision, transformers, onnx, onnxruntime, accelerate, pandas, pytest, numpy), the checkout mounted at
# its own path and the working directory kept, and what building flopwise's Python module for its Python takes.
# The root is made once (mmdebstrap, ~1 min, 1.6 GB) and cached
# at $FLOPWISE_MODERN_ROOT (default /var/cache/flopwise/modern-root); `.ready` is written last, so a half-made
# root is made again; concurrent callers wait on a lock while it is made. Without CMD: make it, print its path.
# /proc, /sys, /dev and the checkout are mounted in a private mount namespace, so they vanish when CMD ends.
set -euo pipefail
ROOT=${FLOPWISE_MODERN_ROOT:-/var/cache/flopwise/modern-root}
PKGS=python3-torch,python3-torchvision,python3-transformers,python3-onnx,python3-onnxruntime
PKGS+=,python3-accelerate,python3-pandas,python3-pytest,python3-numpy
# What building flopwise's Python module for the root's Python takes (scripts/modern_python.sh).
PKGS+=,g++,cmake,make,pybind11-dev,python3-dev,libonnx-dev,libprotobuf-dev,protobuf-compiler,zlib1g-dev
PKGS+=,libeigen3-dev,libcli11-dev,nlohmann-json3-dev,libtomlplusplus-dev,libjemalloc-dev,libsimdjson-dev
CHECKOUT=$(cd "$(dirname "$0")/.." && pwd)

make_root() {
  if [ -e "$ROOT/.ready" ]; then
    [ "$(cat "$ROOT/.ready")" = "$PKGS" ] && return 0
    add_packages && return 0  # a root made with fewer packages: the rest installed in it
  fi
  if grep -q " $ROOT/" /proc/mounts; then echo "modern_torch.sh: $ROOT has mounts; not remaking it" >&2; exit 1; fi
  source "$CHECKOUT/scripts/packages.sh"
  ensure_packages mmdebstrap
  # The host's own Debian mirror (the first non-security URI), so no host is named here.
  local mirror
  mirror=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
  rm -rf "$ROOT"
  # forky's Release file is past its Valid-Until date.
  mmdebstrap --variant=apt --aptopt='Acquire::Check-Valid-Until "false"' --include="$PKGS" \
    forky "$ROOT" "deb $mirror forky main" >&2
  echo "$PKGS" >"$ROOT/.ready"
}

# Installs PKGS into an existing root (apt inside it, /proc mounted in a private namespace); `.ready` then
# names them. Fails (and the root is made again) if apt cannot.
add_packages() {
  echo "modern_torch.sh: adding packages to $ROOT" >&2
  unshare --mount --propagation private sh -c '
    mount -t proc proc "$1/proc" &&
    chroot "$1" sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \$0 >/dev/null" \
      "$(echo "$2" | tr , " ")"' add "$ROOT" "$PKGS" >&2 || return 1
  echo "$PKGS" >"$ROOT/.ready"
}

mkdir -p "$(dirname "$ROOT")"
exec 9>"$ROOT.lock"
flock 9
make_root
flock -u 9
exec 9>&-

if [ $# -eq 0 ]; then echo "$ROOT"; exit 0; fi

case "$PWD/" in "$CHECKOUT"/*) WORKDIR=$PWD ;; *) WORKDIR=$CHECKOUT ;; esac
exec unshare --mount --propagation private bash -c '
  set -e
  root=$1 checkout=$2 workdir=$3; shift 3
  mount -t proc proc "$root/proc"
  mount --rbind /sys "$root/sys"
  mount --rbind /dev "$root/dev"
  mkdir -p "$root$checkout"
  mount --bind "$checkout" "$root$checkout"
  exec chroot "$root" /bin/sh -c "cd \"\$0\" && exec \"\$@\"" "$workdir" "$@"
' modern_torch "$ROOT" "$CHECKOUT" "$WORKDIR" "$@"
