#!/usr/bin/env bash
# Packs the release archives krew installs, writes dist/SHA256SUMS and the
# archives' sha256 values into krew-manifest.yaml.
#
#   scripts/release.sh v0.1.0 [TARGET...]                 # builds, then packs
#   RELEASE_BINARY=path scripts/release.sh v0.1.0 TARGET  # packs a binary already built
#
# Each TARGET is a Rust target triple. Without RELEASE_BINARY the script
# builds it in the dist profile (Cargo.toml), its toolchain installed
# (rustup target add ...; darwin targets build on macOS runners); without
# targets it builds the four the manifest lists. With RELEASE_BINARY it builds nothing and packs that file as the
# one TARGET named.
#
# An archive holds the binary, LICENSE, README.md, the kubectl_complete-maintain
# script and the completion scripts. The same inputs give the same bytes:
# entries sorted by name, every mtime the commit's time (SOURCE_DATE_EPOCH
# when set), owner and group 0, modes 0755/0644, and gzip without a name or
# timestamp (`gzip -n`). It needs GNU tar (`gtar` on macOS).
#
#   RELEASE_DIST      where the archives and SHA256SUMS go (dist)
#   RELEASE_MANIFEST  the manifest to write (krew-manifest.yaml); a path
#                     that does not exist yet starts as a copy of it
set -euo pipefail
cd "$(dirname "$0")/.."

version=${1:?usage: scripts/release.sh vX.Y.Z [TARGET...]}
shift
[[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
  { echo "release: $version is not a v-prefixed semantic version (krew's rule)" >&2; exit 2; }
targets=("$@")
if [ -n "${RELEASE_BINARY:-}" ]; then
  [ ${#targets[@]} -eq 1 ] || { echo "release: RELEASE_BINARY packs one binary: name its one TARGET" >&2; exit 2; }
  [ -f "$RELEASE_BINARY" ] || { echo "release: RELEASE_BINARY $RELEASE_BINARY is not a file" >&2; exit 2; }
fi
[ ${#targets[@]} -gt 0 ] || targets=(x86_64-unknown-linux-musl aarch64-unknown-linux-musl x86_64-apple-darwin aarch64-apple-darwin)

tar=tar
command -v gtar >/dev/null && tar=gtar
"$tar" --version 2>/dev/null | grep -q 'GNU tar' ||
  { echo "release: GNU tar is needed for reproducible archives (install gnu-tar)" >&2; exit 2; }
# sha256sum where there is one, shasum on macOS: the same output.
sha256() { if command -v sha256sum >/dev/null; then sha256sum "$@"; else shasum -a 256 "$@"; fi; }
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || true)}
[ -n "$epoch" ] || { echo "release: no commit to date the archives by: set SOURCE_DATE_EPOCH" >&2; exit 2; }

dist=${RELEASE_DIST:-dist}
manifest=${RELEASE_MANIFEST:-krew-manifest.yaml}
mkdir -p "$dist"
[ -e "$manifest" ] || cp krew-manifest.yaml "$manifest"
sed -i.bak -E "s/^  version: .*/  version: ${version}/; s#/download/v[^/]+/kubectl-maintain-v[^-]+-#/download/${version}/kubectl-maintain-${version}-#" "$manifest"
rm -f "$manifest.bak"

files=(LICENSE README.md completions/kubectl_complete-maintain completions/kubectl-maintain.bash
       completions/_kubectl-maintain completions/kubectl-maintain.fish completions/_kubectl-maintain.ps1)

for target in "${targets[@]}"; do
  binary=${RELEASE_BINARY:-}
  if [ -z "$binary" ]; then
    cargo build --profile dist --locked --target "$target"
    binary="target/$target/dist/kubectl-maintain"
  fi
  stage=$(mktemp -d)
  chmod 0755 "$stage"
  install -m 0755 "$binary" "$stage/kubectl-maintain"
  for f in "${files[@]}"; do
    mode=0644
    [ -x "$f" ] && mode=0755
    install -m "$mode" "$f" "$stage/$(basename "$f")"
  done
  archive="$dist/kubectl-maintain-${version}-${target}.tar.gz"
  "$tar" -C "$stage" --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner \
    --format=gnu -cf - . | gzip -9 -n > "$archive"
  rm -rf "$stage"
  sum=$(sha256 "$archive" | cut -d' ' -f1)
  # The sha256 line follows the uri line of this archive.
  awk -v uri="kubectl-maintain-${version}-${target}.tar.gz" -v sum="$sum" '
    index($0, uri) { print; found = 1; next }
    found && /sha256:/ { sub(/sha256: .*/, "sha256: \"" sum "\""); found = 0 }
    { print }' "$manifest" > "$manifest.new"
  mv "$manifest.new" "$manifest"
  echo "release: $archive $sum"
done

# SHA256SUMS: every archive in the directory, by name.
(cd "$dist" && for a in kubectl-maintain-*.tar.gz; do [ -e "$a" ] && echo "$a"; done | LC_ALL=C sort |
  while read -r a; do sha256 "$a"; done > SHA256SUMS)
echo "release: $dist/SHA256SUMS"
