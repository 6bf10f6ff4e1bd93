#!/usr/bin/env bash
# The krew manifest of a release: .krew.yaml rendered as krew-release-bot
# renders it ({{ .TagName }} the tag; {{ addURIAndSha "URL" .TagName }} the
# URL and the sha256 of its archive), the sums read from SUMS (sha256sum's
# output for the release's archives). What a custom index serves at
# plugins/maintain.yaml, and what the release attaches as maintain.yaml.
#
#   scripts/krew-manifest.sh v0.1.0 dist/SHA256SUMS > dist/maintain.yaml
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: scripts/krew-manifest.sh TAG SUMS" >&2
  exit 2
fi
tag=$1 sums=$2
root=$(cd "$(dirname "$0")/.." && pwd)
tag_action='{{ .TagName }}'
call='^([[:space:]]*)\{\{ addURIAndSha "([^"]+)" \.TagName \}\}$'
while IFS= read -r line || [ -n "$line" ]; do
  if [[ $line =~ $call ]]; then
    indent=${BASH_REMATCH[1]}
    uri=${BASH_REMATCH[2]//"$tag_action"/$tag}
    file=${uri##*/}
    sha=$(awk -v f="$file" '$2 == f || $2 == "*" f { print $1 }' "$sums")
    if [ -z "$sha" ]; then
      echo "krew-manifest: $sums has no sum for $file" >&2
      exit 1
    fi
    printf '%suri: %s\n%ssha256: "%s"\n' "$indent" "$uri" "$indent" "$sha"
  else
    case $line in *'{{'*) ;; *) printf '%s\n' "$line"; continue ;; esac
    line=${line//"$tag_action"/$tag}
    case $line in *'{{'*)
      echo "krew-manifest: a template action it cannot render: $line" >&2
      exit 1 ;;
    esac
    printf '%s\n' "$line"
  fi
done < "$root/.krew.yaml"
