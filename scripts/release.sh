#!/usr/bin/env bash
# Builds the release archives krew installs and writes their sha256 values
# into krew-manifest.yaml.
#
#   scripts/release.sh v0.1.0 [TARGET...]
#
# Each TARGET is a Rust target triple whose toolchain is installed (rustup
# target add ...; darwin targets build on macOS runners). Without targets it
# builds the four the manifest lists. Archives go to dist/: the binary, the
# kubectl_complete-maintain script, README.md and the completion scripts.
set -euo pipefail
cd "$(dirname "$0")/.."

version=${1:?usage: scripts/release.sh vX.Y.Z [TARGET...]}
shift
[[ $version == v* ]] || { echo "release: the version needs a leading v (krew's rule)" >&2; exit 2; }
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(x86_64-unknown-linux-musl aarch64-unknown-linux-musl x86_64-apple-darwin aarch64-apple-darwin)

mkdir -p dist
sed -i.bak -E "s/^  version: .*/  version: ${version}/; s#/download/v[^/]+/kubectl-maintain-v[^-]+-#/download/${version}/kubectl-maintain-${version}-#" krew-manifest.yaml
rm -f krew-manifest.yaml.bak

for target in "${targets[@]}"; do
  cargo build --release --locked --target "$target"
  stage=$(mktemp -d)
  cp "target/$target/release/kubectl-maintain" "$stage/"
  cp completions/kubectl_complete-maintain completions/kubectl-maintain.bash completions/_kubectl-maintain \
     completions/kubectl-maintain.fish completions/_kubectl-maintain.ps1 README.md "$stage/"
  archive="dist/kubectl-maintain-${version}-${target}.tar.gz"
  tar -C "$stage" -czf "$archive" .
  rm -rf "$stage"
  sum=$(sha256sum "$archive" | cut -d' ' -f1)
  # The sha256 line follows the uri line of this archive.
  awk -v uri="kubectl-maintain-${version}-${target}.tar.gz" -v sum="$sum" '
    index($0, uri) { print; found = 1; next }
    found && /sha256:/ { sub(/sha256: .*/, "sha256: \"" sum "\""); found = 0 }
    { print }' krew-manifest.yaml > krew-manifest.yaml.new
  mv krew-manifest.yaml.new krew-manifest.yaml
  echo "release: $archive $sum"
done
