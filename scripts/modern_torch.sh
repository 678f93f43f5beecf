#!/usr/bin/env bash
# modern_torch.sh [CMD...] — runs CMD in a Debian testing ("forky") root with PyTorch 2.x (python3-torch,
# torchvision, transformers, onnx, onnxruntime, accelerate, pandas, pytest, numpy), the checkout mounted at
# its own path and the working directory kept. The root is made once (mmdebstrap, ~1 min, 1.6 GB) and cached
# at $FLOPWISE_MODERN_ROOT (default /var/cache/flopwise/modern-root); `.ready` is written last, so a half-made
# root is made again; concurrent callers wait on a lock while it is made. Without CMD: make it, print its path.
# /proc, /sys, /dev and the checkout are mounted in a private mount namespace, so they vanish when CMD ends.
set -euo pipefail
ROOT=${FLOPWISE_MODERN_ROOT:-/var/cache/flopwise/modern-root}
PKGS=python3-torch,python3-torchvision,python3-transformers,python3-onnx,python3-onnxruntime
PKGS+=,python3-accelerate,python3-pandas,python3-pytest,python3-numpy
CHECKOUT=$(cd "$(dirname "$0")/.." && pwd)

make_root() {
  [ -e "$ROOT/.ready" ] && return 0
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
  touch "$ROOT/.ready"
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
