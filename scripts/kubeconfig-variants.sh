#!/bin/bash
# Kubeconfig and network variants, the real kubectl beside kubectl maintain:
# each row runs `kubectl get nodes` (1.33) and `kubectl maintain status` with
# the same environment and flags against a fresh `kubectl maintain sandbox`,
# and prints exit code and last stderr line of each (issue #52's table).
#   scripts/kubeconfig-variants.sh [path/to/kubectl-maintain]
set -u
KM=${1:-target/debug/kubectl-maintain}
KM=$(readlink -f "$KM")
K=${KUBECTL_1_33:-$(dirname "$(readlink -f "$(command -v kubectl)")")/kubectl.1.33}
work=$(mktemp -d)
trap 'kill $sandbox 2>/dev/null; wait $sandbox 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
mkdir -p home
printf 'apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n' > s.yaml
"$KM" sandbox --scenario s.yaml --kubeconfig-out kc > line.txt 2>&1 &
sandbox=$!
for _ in $(seq 100); do [ -s kc ] && break; sleep 0.1; done
SERVER=$(grep server: kc | awk '{print $2}')
CA=$(grep certificate-authority-data kc | awk '{print $2}')
TOKEN=$(grep token: kc | awk '{print $2}')
echo "$CA" | base64 -d > ca.crt
mk() { # name cluster-extra user-yaml
cat > "$1" <<Y
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
$2
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
users:
- name: u
  user:
$3
Y
}
mk good.kc "    server: $SERVER
    certificate-authority-data: $CA" "    token: $TOKEN"
mk cafile.kc "    server: $SERVER
    certificate-authority: $PWD/ca.crt" "    token: $TOKEN"
mk insecure.kc "    server: $SERVER
    insecure-skip-tls-verify: true" "    token: $TOKEN"
mk both.kc "    server: $SERVER
    certificate-authority: $PWD/ca.crt
    insecure-skip-tls-verify: true" "    token: $TOKEN"
mk wrongca.kc "    server: $SERVER
    certificate-authority: /etc/ssl/certs/ca-certificates.crt" "    token: $TOKEN"
mk wrongname.kc "    server: $SERVER
    certificate-authority-data: $CA
    tls-server-name: wrong.example" "    token: $TOKEN"
mk refused.kc "    server: https://127.0.0.1:1
    certificate-authority-data: $CA" "    token: $TOKEN"
mk unresolvable.kc "    server: https://no-such-host.invalid:6443
    certificate-authority-data: $CA" "    token: $TOKEN"
mk wrongtoken.kc "    server: $SERVER
    certificate-authority-data: $CA" "    token: not-the-token"
printf '#!/bin/sh\necho "{\\"apiVersion\\":\\"client.authentication.k8s.io/v1\\",\\"kind\\":\\"ExecCredential\\",\\"status\\":{\\"token\\":\\"%s\\"}}"\n' "$TOKEN" > plugin.sh; chmod +x plugin.sh
printf '#!/bin/sh\necho "idp down" >&2\nexit 1\n' > badplugin.sh; chmod +x badplugin.sh
mk exec.kc "    server: $SERVER
    certificate-authority-data: $CA" "    exec: {apiVersion: client.authentication.k8s.io/v1, command: $PWD/plugin.sh, interactiveMode: Never}"
mk badexec.kc "    server: $SERVER
    certificate-authority-data: $CA" "    exec: {apiVersion: client.authentication.k8s.io/v1, command: $PWD/badplugin.sh, interactiveMode: Never}"
mk proxyurl.kc "    server: $SERVER
    certificate-authority-data: $CA
    proxy-url: http://127.0.0.1:1" "    token: $TOKEN"
printf 'apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: SECRETTOK\n   bad: [\n' > malformed.kc
# One run of a command: its exit code, then its last stderr line that is not
# one of klog's (`E1128 12:00:00.000 ...`), which kubectl prints beside its own.
once() {
  "$@" >/dev/null 2>err.txt
  local code=$?
  echo "$code: $(grep -v '^[EIW][0-9]\{4\} ' err.txt | tail -1)"
}
row() { # label envs... -- args...
  local label=$1; shift
  local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  local run=(env -i PATH="$PATH" HOME="$work/home" "${envs[@]}" timeout 60)
  theirs=$(once "${run[@]}" "$K" get nodes "$@")
  local t1=$(date +%s.%N)
  ours=$(once "${run[@]}" "$KM" status "$@")
  local t2=$(date +%s.%N)
  printf '| %s | %s | %s | %.1f s |\n' "$label" "${theirs%: }" "${ours%: }" "$(echo "$t2-$t1" | bc -l)"
}
echo "| variant | kubectl 1.33 get nodes (exit: last stderr line) | kubectl maintain status | ours, time |"
echo "|---|---|---|---|"
row "CA data, token" KUBECONFIG=good.kc --
row "CA file" KUBECONFIG=cafile.kc --
row "insecure-skip-tls-verify" KUBECONFIG=insecure.kc --
row "CA and insecure together" KUBECONFIG=both.kc --
row "wrong CA" KUBECONFIG=wrongca.kc --
row "wrong tls-server-name" KUBECONFIG=wrongname.kc --
row "refused server" KUBECONFIG=refused.kc --
row "unresolvable server" KUBECONFIG=unresolvable.kc --
row "wrong token" KUBECONFIG=wrongtoken.kc --
row "exec plugin v1" KUBECONFIG=exec.kc --
row "failing exec plugin" KUBECONFIG=badexec.kc --
row "malformed file (token inside)" KUBECONFIG=malformed.kc --
row "KUBECONFIG=missing:good" KUBECONFIG=missing.kc:good.kc --
row "--context typo" KUBECONFIG=good.kc -- --context typo
row "--user no-such-user" KUBECONFIG=good.kc -- --user no-such-user
row "--kubeconfig missing" -- --kubeconfig /nonexistent
row "insecure + --certificate-authority" KUBECONFIG=insecure.kc -- --certificate-authority $PWD/ca.crt
row "--server --token, no file" KUBECONFIG=/nonexistent -- --server $SERVER --token $TOKEN --insecure-skip-tls-verify
row "proxy-url refused" KUBECONFIG=proxyurl.kc --
row "HTTPS_PROXY refused, loopback server" KUBECONFIG=good.kc HTTPS_PROXY=http://127.0.0.1:1 --
row "no server in kubeconfig" KUBECONFIG=/nonexistent --
# Secrets never shown: the owner's token appears in no output above.
