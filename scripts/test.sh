#!/usr/bin/env bash
# The tests, on a fresh machine: installs from Debian what they need when it
# is missing (as root), fails (never skips) when something cannot be had,
# then runs every test. README.md's second command; .ci/run calls it too.
set -euo pipefail
cd "$(dirname "$0")/.."

need() {
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "test: $1 is required but not on PATH: $2" >&2
    exit 1
  fi
}
# Real components the tests use, from Debian: podman and buildah build the
# image offline (tests/it/image.rs); util-linux's unshare and setpriv run the
# Job's container in the sandbox (tests/it/in_cluster_job.rs, as root).
# Debian's prometheus, prometheus-pushgateway and prometheus-alertmanager are
# the real metrics and alerting parts a run talks to (tests/it/unattended.rs);
# curl drives them from the tests. tinyproxy is the real HTTP CONNECT proxy
# the proxy tests go through (tests/it/connecting.rs), microsocks the real
# SOCKS5 proxy with a login (RFC 1929) they go through too. tmux is the terminal
# the screen tests read at 80 and 120 columns (tests/it/screen.rs). openssl
# makes client keys and certificates as operators and kubeadm do
# (tests/it/client_certificates.rs).
# Installed when missing (we are root); a failed install fails.
missing=()
for tool in podman:podman buildah:buildah unshare:util-linux setpriv:util-linux \
  prometheus:prometheus prometheus-pushgateway:prometheus-pushgateway \
  prometheus-alertmanager:prometheus-alertmanager curl:curl tinyproxy:tinyproxy \
  microsocks:microsocks tmux:tmux openssl:openssl; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool##*:}")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "test: installing ${missing[*]} from Debian"
  if ! { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"; } >/tmp/test-apt.log 2>&1; then
    tail -n 20 /tmp/test-apt.log >&2
    echo "test: could not install ${missing[*]} (see /tmp/test-apt.log)" >&2
    exit 1
  fi
fi
need podman "the image test builds the Containerfile offline"
need unshare "the sandbox runs the Job's container in private namespaces"
need setpriv "the sandbox runs the Job's container as its runAsUser"
need prometheus "a real Prometheus scrapes --metrics-addr and fires the alert that holds a roll"
need prometheus-pushgateway "the roll pushes its metrics to a real Pushgateway"
need prometheus-alertmanager "--block-on-alerts reads Alertmanager's API too"
need curl "the tests push, delete and query through the Prometheus APIs"
need tinyproxy "the proxy tests send requests through a real HTTP CONNECT proxy"
need microsocks "the proxy tests send requests through a real SOCKS5 proxy with a login"
need tmux "the screen tests read the bars in a real terminal at 80 and 120 columns"
need openssl "the client-certificate tests make RSA, EC and Ed25519 keys and sign them with the sandbox's CA"
if [ "$(id -u)" != 0 ]; then
  echo "test: the in-cluster tests run containers in private mount namespaces: run as root" >&2
  exit 1
fi
need cargo "install the Rust toolchain"
need kubectl "the integration tests run the real kubectl (1.27 to 1.33) against the sandbox"
need script "util-linux script(1) gives the terminal tests a pseudo-terminal (Debian: bsdutils)"
need python3 "a test pip-installs the Python kubernetes client into a virtualenv (python3 with venv)"

# The side-by-side tests (tests/it/script_lines.rs) run kubectl 1.27 and 1.33
# themselves: kubectl.1.MINOR on PATH or beside kubectl (the Google Cloud SDK's
# layout), or KUBECTL_1_MINOR.
for minor in 27 33; do
  var="KUBECTL_1_$minor"
  beside="$(dirname "$(readlink -f "$(command -v kubectl)")")/kubectl.1.$minor"
  if [ -z "${!var:-}" ] && ! command -v "kubectl.1.$minor" >/dev/null 2>&1 && [ ! -x "$beside" ]; then
    echo "test: kubectl 1.$minor is required: put kubectl.1.$minor on PATH or set $var" >&2
    exit 1
  fi
done
echo "test: kubectl: $(kubectl version --client 2>/dev/null | head -n 1)"
# The integration tests mostly wait on their sandboxes' clocks: on 2 cores
# the suite used 160 s of CPU in 560 s at 2 threads, and ends in 290 s at 4
# with the same results. TEST_THREADS overrides it.
cargo test --workspace -- --test-threads="${TEST_THREADS:-4}"
