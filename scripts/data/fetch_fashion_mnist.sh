#!/usr/bin/env bash
# Fashion-MNIST (MIT, (c) Zalando SE) from the Debian package dataset-fashion-mnist, unpacked into
# data/fashion-mnist/ without installing it system-wide: apt-get download + dpkg-deb -x + gunzip.
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=data/fashion-mnist
files=(train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte)
have=1; for f in "${files[@]}"; do [[ -s $dest/$f ]] || have=0; done
if [[ $have == 1 ]]; then echo "data: $dest already present"; exit 0; fi

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if ! (cd "$tmp" && apt-get download dataset-fashion-mnist >/dev/null 2>&1); then
  [[ ${APT_UPDATED:-0} == 1 ]] || { sudo_cmd=""; [[ $(id -u) != 0 ]] && sudo_cmd="sudo"; $sudo_cmd apt-get update -qq; }
  (cd "$tmp" && apt-get download dataset-fashion-mnist >/dev/null) ||
    { echo "data: could not download the Debian package dataset-fashion-mnist (is apt reachable?)" >&2; exit 1; }
fi
dpkg-deb -x "$tmp"/dataset-fashion-mnist_*.deb "$tmp/x"
mkdir -p "$dest"
for f in "${files[@]}"; do
  gunzip -c "$tmp/x/usr/share/datasets/fashion-mnist/$f.gz" > "$dest/$f.partial" && mv "$dest/$f.partial" "$dest/$f"
done
cp "$tmp"/x/usr/share/doc/dataset-fashion-mnist/copyright "$dest/COPYRIGHT" 2>/dev/null || true
echo "data: Fashion-MNIST written to $dest ($(du -sh $dest | cut -f1))"
