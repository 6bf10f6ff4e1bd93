# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kubectl_maintain_global_optspecs
    string join \n h/help V/version
end

function __fish_kubectl_maintain_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_kubectl_maintain_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_kubectl_maintain_using_subcommand
    set -l cmd (__fish_kubectl_maintain_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c kubectl-maintain -n "__fish_kubectl_maintain_needs_command" -s h -l help -d 'Print help'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_needs_command" -s V -l version -d 'Print version'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_needs_command" -f -a "drain" -d 'Cordon nodes and evict their pods in priority waves (a drop-in for kubectl drain)'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_needs_command" -f -a "plan" -d 'Show which pods each wave would evict, and what would be refused, without changing anything'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_needs_command" -f -a "roll" -d 'Maintain a pool node by node: lock, drain, act (--exec, --wait-for-reboot), Ready, uncordon, next; resumable'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_needs_command" -f -a "uncordon" -d 'Return nodes to service, undoing exactly what the drain changed'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_needs_command" -f -a "status" -d 'List the nodes under maintenance: state, since when, why, what is still on them; -w follows a run handed to the cluster'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_needs_command" -f -a "logs" -d 'Print the log of a run handed to the cluster (--in-cluster); -f follows it across its pods to its end'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_needs_command" -f -a "abort" -d 'Stop a run handed to the cluster after the node in progress, remove its Job, and say what is left'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_needs_command" -f -a "demo" -d 'Drain a node of a simulated cluster, to see what kubectl maintain does'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_needs_command" -f -a "completion" -d 'Print a shell completion script (bash, zsh, fish, powershell)'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_needs_command" -f -a "sandbox" -d 'Serve a simulated cluster on loopback, for rehearsals and tests'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -s l -l selector -d 'Select the nodes by label instead of naming them' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l kubelet-version -d 'Choose the nodes whose kubelet reports a version in RANGE (<1.33, >=1.30,<1.33, 1.32), all or those -l selects' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l force -d 'Continue even if there are pods that do not declare a controller' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l ignore-daemonsets -d 'Ignore DaemonSet-managed pods' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l delete-emptydir-data -d 'Continue even if there are pods using emptyDir (their data is deleted)' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l grace-period -d 'Seconds each pod gets to terminate; negative uses the pod\'s own' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l timeout -d 'Give up after this long (0: never), e.g. 5m' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l deadline -d 'After this long on a node, stop asking and delete what is left, bypassing PodDisruptionBudgets; each pod is deleted its grace period before the deadline, so that it still gets all of it. Pods held by drain markers are left unless --deadline-overrides-markers' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l detach-timeout -d 'How long to wait for the evicted pods\' volumes to detach before the node counts as timed out' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l pod-selector -d 'Only pods matching this label selector are drained' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l disable-eviction -d 'Delete pods instead of evicting them, bypassing PodDisruptionBudgets' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l eviction-api -d 'Which API evicts: auto (Kubernetes 1.37\'s EvictionRequest when the cluster serves it and its controller answers, so each pod\'s eviction responders act first; else the eviction subresource), request (EvictionRequest or fail before any change), eviction (the subresource, as kubectl drain)' -r -f -a "auto\t'EvictionRequest when the cluster serves it and its controller answers; the eviction subresource otherwise'
request\t'EvictionRequest, or fail before any change when it is not served'
eviction\t'The eviction subresource, as kubectl drain'"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l lost-pod-timeout -d 'On a node whose kubelet is down (NotReady), a pod whose deletion was asked longer ago than this counts as gone, as Cluster API does; 0 waits for it, as kubectl drain does' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l fence-command -d 'With --node-shut-down: a command that powers the node off (IPMI, Redfish, a cloud CLI), run with NODE and NODE_ADDRESSES in its environment; exit 0 is the proof' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l skip-wait-for-delete-timeout -d 'Pods terminating for longer than this many seconds are not waited for (0: wait)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l chunk-size -d 'List pods in pages of this many (0: all at once)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l dry-run -d 'none, client (show the plan) or server (also ask the API server); no changes are made' -r -f -a "none\t'`false` is kubectl\'s deprecated spelling'
client\t'`true` (or no value) is kubectl\'s deprecated spelling'
server\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l plan -d 'A DrainPlan file: waves and rules (docs/plan.md)' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l max-parallel -d 'Nodes drained at the same time' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l max-blocked-nodes -d 'Stop starting nodes once more than N could not be drained (timed out, refused, failed); those not started stay cordoned. Default: go on, as kubectl drain does' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l from -d 'With --simulate: copy the cluster from this file (`kubectl get ... -o yaml`, as the sandbox loads it) instead of reading the live one' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l assume-shutdown -d 'With --simulate: every pod takes this long to stop once deleted (within its grace period), instead of what its spec says' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l assume-ready -d 'With --simulate: every new pod is Ready this long after it starts, instead of what its readiness probe says' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l assume-times -d 'With --simulate: shutdown and readiness times per workload, from a WorkloadTimes YAML file (docs/usage.md), over --assume-shutdown and --assume-ready' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -s o -l output -d 'Report format on stdout (default: table; without a terminal and without -o, stdout carries kubectl drain\'s lines instead, see --lines)' -r -f -a "table\t''
json\t''
yaml\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l lines -d 'What stdout and stderr carry: auto (kubectl drain\'s lines when stdout is not a terminal and no -o is given, else ours), kubectl (kubectl drain\'s lines on stdout and stderr, our report after them on stderr), report (our progress on stderr, our report on stdout)' -r -f -a "auto\t''
kubectl\t''
report\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l taint -d 'Add this taint (key[=value]:Effect) at cordon; uncordon removes it. Repeatable' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l reason -d 'Why: recorded on the node, shown by status' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l node-conditions -d 'Write the DrainInProgress and Drained node conditions (KEP-5683) on nodes/status; =false to turn them off' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l label-during -d 'Set this label (KEY=VALUE) at cordon; uncordon puts back what the node had under KEY before (nothing, or its old value), unless it was changed since. Repeatable' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l protect-from-autoscalers -d 'Annotate the node so that cluster-autoscaler and Karpenter leave it alone while under maintenance (cluster-autoscaler.kubernetes.io/scale-down-disabled and karpenter.sh/do-not-disrupt, "true"); uncordon puts back what was there. Default: false for drain (a drained node may be on its way out), true for roll (the node comes back)' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l max-unavailable -d 'Take a node only while at most this many nodes (N or P% of all nodes) are unavailable, counting cordoned and NotReady nodes and this run\'s; otherwise hold and say why (a drain then cordons each node at its turn)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l image -d 'With --in-cluster: the container image to run (default: this version\'s release image)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l notify -d 'Tell this webhook when the run starts, a node starts, is done or is blocked, the run holds, finishes or fails (repeatable); Slack and Teams webhooks by their host, or json+URL, slack+URL, teams+URL (docs/notifications.md); env:NAME or file:PATH read the URL from there, off the command line' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l notify-after -d 'How long a node or the run must be held before it is told as blocked or held' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l notify-template -d 'A notification\'s text, as kured\'s message templates (%s is the node; also {node}, {run}, {command}, {reason}, {summary}); KIND is run.started, node.started, node.done, node.blocked, run.held, run.finished or run.failed (repeatable)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l metrics-addr -d 'Serve Prometheus metrics on /metrics at this address (HOST:PORT, or :PORT) while the run lasts (docs/metrics.md)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l pushgateway -d 'Push the metrics to this Prometheus Pushgateway at each node\'s end and at the run\'s end (env:NAME or file:PATH read the URL from there)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l block-on-alerts -d 'Take no next node while an alert fires: a Prometheus or Alertmanager URL (env:NAME or file:PATH read it from there)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l alert-filter -d 'With --block-on-alerts, only alerts whose NAME{label="value",...} matches this regular expression hold the run' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l alert-check-interval -d 'With --block-on-alerts, how often firing alerts are asked again' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l window -d 'Start nodes only inside this maintenance window, such as "Sat,Sun 02:00-06:00 Europe/Berlin" (repeatable; a node in progress finishes)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l announce -d 'Set MaintenancePlanned on every node of the run this long before the first drain' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l kubeconfig -d 'Path to the kubeconfig file (default: KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -s s -l server -d 'The address and port of the Kubernetes API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l token -d 'Bearer token for authentication to the API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l certificate-authority -d 'Path to a cert file for the certificate authority' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l client-certificate -d 'Path to a client certificate file for TLS' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l client-key -d 'Path to a client key file for TLS' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l insecure-skip-tls-verify -d 'Do not check the server\'s certificate (insecure)' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l tls-server-name -d 'Server name to use for server certificate validation' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l as-uid -d 'UID to impersonate for the operation' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l request-timeout -d 'How long to wait for a single request before giving up (e.g. 30s; 0: no limit)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l disable-compression -d 'Do not ask the server for compressed responses' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -s n -l namespace -d 'Accepted as kubectl accepts it; a drain works across namespaces' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -s v -l v -d 'kubectl\'s log level; accepted, the drain\'s own lines do not change' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l cache-dir -d 'kubectl\'s discovery cache; accepted (the drain caches nothing)' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l match-server-version -d 'Accepted as kubectl accepts it' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l warnings-as-errors -d 'Accepted as kubectl accepts it' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l username -d 'Username for basic authentication to the API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l password -d 'Password for basic authentication to the API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l log-flush-frequency -d 'kubectl\'s log flush interval (e.g. 5s); accepted, the plugin writes each line at once' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l vmodule -d 'kubectl\'s per-file log levels (pattern=N,...); accepted, the plugin has no such logs' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l profile -d 'kubectl\'s Go profiler (none|cpu|heap|goroutine|threadcreate|block|mutex); accepted, no profile is written' -r -f -a "none\t''
cpu\t''
heap\t''
goroutine\t''
threadcreate\t''
block\t''
mutex\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l profile-output -d 'Where kubectl writes --profile; accepted, no profile is written' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l skip-wait-for-detach -d 'Do not wait, once a node\'s pods are gone, for the volumes they used to detach from it'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l surge -d 'For a pod whose PodDisruptionBudget allows no disruption, scale its Deployment up by one first and let the pod go once the budget allows it; scaled back when the node is done'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l deadline-overrides-markers -d 'With --deadline: delete pods held by drain markers at the deadline too'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l allow-short-deadline -d 'With --deadline shorter than some pods\' grace period: yes, delete those pods as soon as an eviction is refused (otherwise the drain refuses before any change)'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l node-shut-down -d 'Take nodes whose kubelet is down out of service (the node.kubernetes.io/out-of-service taint), so that their StatefulSet pods and volumes move at once; only with proof that they are powered off: the cloud\'s node.kubernetes.io/shutdown taint, --fence-command, or the node\'s name typed at the prompt'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l by-zone -d 'Finish the nodes of one zone (topology.kubernetes.io/zone) before starting the next zone\'s'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l ignore-markers -d 'Ignore pods\' drain markers (cluster.x-k8s.io/drain, karpenter.sh/do-not-disrupt) and drain those pods as kubectl drain does'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l all-or-nothing -d 'If kubectl\'s filters refuse a pod on any selected node, change nothing (kubectl cordons every node and drains the others)'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l simulate -d 'Predict the drain by running it on an in-process copy of the cluster, on a simulated clock, and read the cluster only; with drain, show the prediction before draining (docs/usage.md)'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -s y -l yes -d 'Do not ask for confirmation'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l exclude-from-load-balancers -d 'Label the node node.kubernetes.io/exclude-from-external-load-balancers at cordon, taking it out of cloud load balancers; uncordon removes the label (unless it was there before)'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l allow-no-schedulable-nodes -d 'Accepted for scripts written for v0.1.0; a drain no longer refuses these cases'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l allow-quorum-loss -d 'Accepted for scripts written for v0.1.0; a drain does not check etcd quorum'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l in-cluster -d 'Run this drain or roll in the cluster as a Job (in --namespace, default kube-system) under a ServiceAccount with exactly the permissions its flags need; prints how to follow it'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l render -d 'With --in-cluster: print the objects as YAML and apply nothing (for GitOps)'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -l cleanup -d 'With --in-cluster: remove the ServiceAccount, ClusterRole, binding and ConfigMap a run of the same command made'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand drain" -s V -l version -d 'Print version'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -s l -l selector -d 'Select the nodes by label instead of naming them' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l kubelet-version -d 'Choose the nodes whose kubelet reports a version in RANGE (<1.33, >=1.30,<1.33, 1.32), all or those -l selects' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l force -d 'Continue even if there are pods that do not declare a controller' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l ignore-daemonsets -d 'Ignore DaemonSet-managed pods' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l delete-emptydir-data -d 'Continue even if there are pods using emptyDir (their data is deleted)' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l grace-period -d 'Seconds each pod gets to terminate; negative uses the pod\'s own' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l timeout -d 'Give up after this long (0: never), e.g. 5m' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l deadline -d 'After this long on a node, stop asking and delete what is left, bypassing PodDisruptionBudgets; each pod is deleted its grace period before the deadline, so that it still gets all of it. Pods held by drain markers are left unless --deadline-overrides-markers' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l detach-timeout -d 'How long to wait for the evicted pods\' volumes to detach before the node counts as timed out' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l pod-selector -d 'Only pods matching this label selector are drained' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l disable-eviction -d 'Delete pods instead of evicting them, bypassing PodDisruptionBudgets' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l eviction-api -d 'Which API evicts: auto (Kubernetes 1.37\'s EvictionRequest when the cluster serves it and its controller answers, so each pod\'s eviction responders act first; else the eviction subresource), request (EvictionRequest or fail before any change), eviction (the subresource, as kubectl drain)' -r -f -a "auto\t'EvictionRequest when the cluster serves it and its controller answers; the eviction subresource otherwise'
request\t'EvictionRequest, or fail before any change when it is not served'
eviction\t'The eviction subresource, as kubectl drain'"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l lost-pod-timeout -d 'On a node whose kubelet is down (NotReady), a pod whose deletion was asked longer ago than this counts as gone, as Cluster API does; 0 waits for it, as kubectl drain does' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l fence-command -d 'With --node-shut-down: a command that powers the node off (IPMI, Redfish, a cloud CLI), run with NODE and NODE_ADDRESSES in its environment; exit 0 is the proof' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l skip-wait-for-delete-timeout -d 'Pods terminating for longer than this many seconds are not waited for (0: wait)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l chunk-size -d 'List pods in pages of this many (0: all at once)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l dry-run -d 'none, client (show the plan) or server (also ask the API server); no changes are made' -r -f -a "none\t'`false` is kubectl\'s deprecated spelling'
client\t'`true` (or no value) is kubectl\'s deprecated spelling'
server\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l plan -d 'A DrainPlan file: waves and rules (docs/plan.md)' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l max-parallel -d 'Nodes drained at the same time' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l max-blocked-nodes -d 'Stop starting nodes once more than N could not be drained (timed out, refused, failed); those not started stay cordoned. Default: go on, as kubectl drain does' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l from -d 'With --simulate: copy the cluster from this file (`kubectl get ... -o yaml`, as the sandbox loads it) instead of reading the live one' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l assume-shutdown -d 'With --simulate: every pod takes this long to stop once deleted (within its grace period), instead of what its spec says' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l assume-ready -d 'With --simulate: every new pod is Ready this long after it starts, instead of what its readiness probe says' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l assume-times -d 'With --simulate: shutdown and readiness times per workload, from a WorkloadTimes YAML file (docs/usage.md), over --assume-shutdown and --assume-ready' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -s o -l output -d 'Report format on stdout (default: table; without a terminal and without -o, stdout carries kubectl drain\'s lines instead, see --lines)' -r -f -a "table\t''
json\t''
yaml\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l lines -d 'What stdout and stderr carry: auto (kubectl drain\'s lines when stdout is not a terminal and no -o is given, else ours), kubectl (kubectl drain\'s lines on stdout and stderr, our report after them on stderr), report (our progress on stderr, our report on stdout)' -r -f -a "auto\t''
kubectl\t''
report\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l taint -d 'Add this taint (key[=value]:Effect) at cordon; uncordon removes it. Repeatable' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l reason -d 'Why: recorded on the node, shown by status' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l node-conditions -d 'Write the DrainInProgress and Drained node conditions (KEP-5683) on nodes/status; =false to turn them off' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l label-during -d 'Set this label (KEY=VALUE) at cordon; uncordon puts back what the node had under KEY before (nothing, or its old value), unless it was changed since. Repeatable' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l protect-from-autoscalers -d 'Annotate the node so that cluster-autoscaler and Karpenter leave it alone while under maintenance (cluster-autoscaler.kubernetes.io/scale-down-disabled and karpenter.sh/do-not-disrupt, "true"); uncordon puts back what was there. Default: false for drain (a drained node may be on its way out), true for roll (the node comes back)' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l max-unavailable -d 'Take a node only while at most this many nodes (N or P% of all nodes) are unavailable, counting cordoned and NotReady nodes and this run\'s; otherwise hold and say why (a drain then cordons each node at its turn)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l image -d 'With --in-cluster: the container image to run (default: this version\'s release image)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l notify -d 'Tell this webhook when the run starts, a node starts, is done or is blocked, the run holds, finishes or fails (repeatable); Slack and Teams webhooks by their host, or json+URL, slack+URL, teams+URL (docs/notifications.md); env:NAME or file:PATH read the URL from there, off the command line' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l notify-after -d 'How long a node or the run must be held before it is told as blocked or held' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l notify-template -d 'A notification\'s text, as kured\'s message templates (%s is the node; also {node}, {run}, {command}, {reason}, {summary}); KIND is run.started, node.started, node.done, node.blocked, run.held, run.finished or run.failed (repeatable)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l metrics-addr -d 'Serve Prometheus metrics on /metrics at this address (HOST:PORT, or :PORT) while the run lasts (docs/metrics.md)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l pushgateway -d 'Push the metrics to this Prometheus Pushgateway at each node\'s end and at the run\'s end (env:NAME or file:PATH read the URL from there)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l block-on-alerts -d 'Take no next node while an alert fires: a Prometheus or Alertmanager URL (env:NAME or file:PATH read it from there)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l alert-filter -d 'With --block-on-alerts, only alerts whose NAME{label="value",...} matches this regular expression hold the run' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l alert-check-interval -d 'With --block-on-alerts, how often firing alerts are asked again' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l window -d 'Start nodes only inside this maintenance window, such as "Sat,Sun 02:00-06:00 Europe/Berlin" (repeatable; a node in progress finishes)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l announce -d 'Set MaintenancePlanned on every node of the run this long before the first drain' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l kubeconfig -d 'Path to the kubeconfig file (default: KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -s s -l server -d 'The address and port of the Kubernetes API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l token -d 'Bearer token for authentication to the API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l certificate-authority -d 'Path to a cert file for the certificate authority' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l client-certificate -d 'Path to a client certificate file for TLS' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l client-key -d 'Path to a client key file for TLS' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l insecure-skip-tls-verify -d 'Do not check the server\'s certificate (insecure)' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l tls-server-name -d 'Server name to use for server certificate validation' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l as-uid -d 'UID to impersonate for the operation' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l request-timeout -d 'How long to wait for a single request before giving up (e.g. 30s; 0: no limit)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l disable-compression -d 'Do not ask the server for compressed responses' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -s n -l namespace -d 'Accepted as kubectl accepts it; a drain works across namespaces' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -s v -l v -d 'kubectl\'s log level; accepted, the drain\'s own lines do not change' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l cache-dir -d 'kubectl\'s discovery cache; accepted (the drain caches nothing)' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l match-server-version -d 'Accepted as kubectl accepts it' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l warnings-as-errors -d 'Accepted as kubectl accepts it' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l username -d 'Username for basic authentication to the API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l password -d 'Password for basic authentication to the API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l log-flush-frequency -d 'kubectl\'s log flush interval (e.g. 5s); accepted, the plugin writes each line at once' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l vmodule -d 'kubectl\'s per-file log levels (pattern=N,...); accepted, the plugin has no such logs' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l profile -d 'kubectl\'s Go profiler (none|cpu|heap|goroutine|threadcreate|block|mutex); accepted, no profile is written' -r -f -a "none\t''
cpu\t''
heap\t''
goroutine\t''
threadcreate\t''
block\t''
mutex\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l profile-output -d 'Where kubectl writes --profile; accepted, no profile is written' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l skip-wait-for-detach -d 'Do not wait, once a node\'s pods are gone, for the volumes they used to detach from it'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l surge -d 'For a pod whose PodDisruptionBudget allows no disruption, scale its Deployment up by one first and let the pod go once the budget allows it; scaled back when the node is done'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l deadline-overrides-markers -d 'With --deadline: delete pods held by drain markers at the deadline too'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l allow-short-deadline -d 'With --deadline shorter than some pods\' grace period: yes, delete those pods as soon as an eviction is refused (otherwise the drain refuses before any change)'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l node-shut-down -d 'Take nodes whose kubelet is down out of service (the node.kubernetes.io/out-of-service taint), so that their StatefulSet pods and volumes move at once; only with proof that they are powered off: the cloud\'s node.kubernetes.io/shutdown taint, --fence-command, or the node\'s name typed at the prompt'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l by-zone -d 'Finish the nodes of one zone (topology.kubernetes.io/zone) before starting the next zone\'s'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l ignore-markers -d 'Ignore pods\' drain markers (cluster.x-k8s.io/drain, karpenter.sh/do-not-disrupt) and drain those pods as kubectl drain does'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l all-or-nothing -d 'If kubectl\'s filters refuse a pod on any selected node, change nothing (kubectl cordons every node and drains the others)'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l simulate -d 'Predict the drain by running it on an in-process copy of the cluster, on a simulated clock, and read the cluster only; with drain, show the prediction before draining (docs/usage.md)'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -s y -l yes -d 'Do not ask for confirmation'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l exclude-from-load-balancers -d 'Label the node node.kubernetes.io/exclude-from-external-load-balancers at cordon, taking it out of cloud load balancers; uncordon removes the label (unless it was there before)'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l allow-no-schedulable-nodes -d 'Accepted for scripts written for v0.1.0; a drain no longer refuses these cases'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l allow-quorum-loss -d 'Accepted for scripts written for v0.1.0; a drain does not check etcd quorum'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l in-cluster -d 'Run this drain or roll in the cluster as a Job (in --namespace, default kube-system) under a ServiceAccount with exactly the permissions its flags need; prints how to follow it'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l render -d 'With --in-cluster: print the objects as YAML and apply nothing (for GitOps)'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -l cleanup -d 'With --in-cluster: remove the ServiceAccount, ClusterRole, binding and ConfigMap a run of the same command made'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand plan" -s V -l version -d 'Print version'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -s l -l selector -d 'Select the nodes by label instead of naming them' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l kubelet-version -d 'Choose the nodes whose kubelet reports a version in RANGE (<1.33, >=1.30,<1.33, 1.32), all or those -l selects' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l force -d 'Continue even if there are pods that do not declare a controller' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l ignore-daemonsets -d 'Ignore DaemonSet-managed pods' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l delete-emptydir-data -d 'Continue even if there are pods using emptyDir (their data is deleted)' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l grace-period -d 'Seconds each pod gets to terminate; negative uses the pod\'s own' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l timeout -d 'Give up after this long (0: never), e.g. 5m' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l deadline -d 'After this long on a node, stop asking and delete what is left, bypassing PodDisruptionBudgets; each pod is deleted its grace period before the deadline, so that it still gets all of it. Pods held by drain markers are left unless --deadline-overrides-markers' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l detach-timeout -d 'How long to wait for the evicted pods\' volumes to detach before the node counts as timed out' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l pod-selector -d 'Only pods matching this label selector are drained' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l disable-eviction -d 'Delete pods instead of evicting them, bypassing PodDisruptionBudgets' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l eviction-api -d 'Which API evicts: auto (Kubernetes 1.37\'s EvictionRequest when the cluster serves it and its controller answers, so each pod\'s eviction responders act first; else the eviction subresource), request (EvictionRequest or fail before any change), eviction (the subresource, as kubectl drain)' -r -f -a "auto\t'EvictionRequest when the cluster serves it and its controller answers; the eviction subresource otherwise'
request\t'EvictionRequest, or fail before any change when it is not served'
eviction\t'The eviction subresource, as kubectl drain'"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l lost-pod-timeout -d 'On a node whose kubelet is down (NotReady), a pod whose deletion was asked longer ago than this counts as gone, as Cluster API does; 0 waits for it, as kubectl drain does' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l fence-command -d 'With --node-shut-down: a command that powers the node off (IPMI, Redfish, a cloud CLI), run with NODE and NODE_ADDRESSES in its environment; exit 0 is the proof' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l skip-wait-for-delete-timeout -d 'Pods terminating for longer than this many seconds are not waited for (0: wait)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l chunk-size -d 'List pods in pages of this many (0: all at once)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l dry-run -d 'none, client (show the plan) or server (also ask the API server); no changes are made' -r -f -a "none\t'`false` is kubectl\'s deprecated spelling'
client\t'`true` (or no value) is kubectl\'s deprecated spelling'
server\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l plan -d 'A DrainPlan file: waves and rules (docs/plan.md)' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l max-parallel -d 'Nodes drained at the same time' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l max-blocked-nodes -d 'Stop starting nodes once more than N could not be drained (timed out, refused, failed); those not started stay cordoned. Default: go on, as kubectl drain does' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l from -d 'With --simulate: copy the cluster from this file (`kubectl get ... -o yaml`, as the sandbox loads it) instead of reading the live one' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l assume-shutdown -d 'With --simulate: every pod takes this long to stop once deleted (within its grace period), instead of what its spec says' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l assume-ready -d 'With --simulate: every new pod is Ready this long after it starts, instead of what its readiness probe says' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l assume-times -d 'With --simulate: shutdown and readiness times per workload, from a WorkloadTimes YAML file (docs/usage.md), over --assume-shutdown and --assume-ready' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -s o -l output -d 'Report format on stdout (default: table; without a terminal and without -o, stdout carries kubectl drain\'s lines instead, see --lines)' -r -f -a "table\t''
json\t''
yaml\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l lines -d 'What stdout and stderr carry: auto (kubectl drain\'s lines when stdout is not a terminal and no -o is given, else ours), kubectl (kubectl drain\'s lines on stdout and stderr, our report after them on stderr), report (our progress on stderr, our report on stdout)' -r -f -a "auto\t''
kubectl\t''
report\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l taint -d 'Add this taint (key[=value]:Effect) at cordon; uncordon removes it. Repeatable' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l reason -d 'Why: recorded on the node, shown by status' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l node-conditions -d 'Write the DrainInProgress and Drained node conditions (KEP-5683) on nodes/status; =false to turn them off' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l label-during -d 'Set this label (KEY=VALUE) at cordon; uncordon puts back what the node had under KEY before (nothing, or its old value), unless it was changed since. Repeatable' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l protect-from-autoscalers -d 'Annotate the node so that cluster-autoscaler and Karpenter leave it alone while under maintenance (cluster-autoscaler.kubernetes.io/scale-down-disabled and karpenter.sh/do-not-disrupt, "true"); uncordon puts back what was there. Default: false for drain (a drained node may be on its way out), true for roll (the node comes back)' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l max-unavailable -d 'Take a node only while at most this many nodes (N or P% of all nodes) are unavailable, counting cordoned and NotReady nodes and this run\'s; otherwise hold and say why (a drain then cordons each node at its turn)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l image -d 'With --in-cluster: the container image to run (default: this version\'s release image)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l notify -d 'Tell this webhook when the run starts, a node starts, is done or is blocked, the run holds, finishes or fails (repeatable); Slack and Teams webhooks by their host, or json+URL, slack+URL, teams+URL (docs/notifications.md); env:NAME or file:PATH read the URL from there, off the command line' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l notify-after -d 'How long a node or the run must be held before it is told as blocked or held' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l notify-template -d 'A notification\'s text, as kured\'s message templates (%s is the node; also {node}, {run}, {command}, {reason}, {summary}); KIND is run.started, node.started, node.done, node.blocked, run.held, run.finished or run.failed (repeatable)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l metrics-addr -d 'Serve Prometheus metrics on /metrics at this address (HOST:PORT, or :PORT) while the run lasts (docs/metrics.md)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l pushgateway -d 'Push the metrics to this Prometheus Pushgateway at each node\'s end and at the run\'s end (env:NAME or file:PATH read the URL from there)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l block-on-alerts -d 'Take no next node while an alert fires: a Prometheus or Alertmanager URL (env:NAME or file:PATH read it from there)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l alert-filter -d 'With --block-on-alerts, only alerts whose NAME{label="value",...} matches this regular expression hold the run' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l alert-check-interval -d 'With --block-on-alerts, how often firing alerts are asked again' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l window -d 'Start nodes only inside this maintenance window, such as "Sat,Sun 02:00-06:00 Europe/Berlin" (repeatable; a node in progress finishes)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l announce -d 'Set MaintenancePlanned on every node of the run this long before the first drain' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l kubeconfig -d 'Path to the kubeconfig file (default: KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -s s -l server -d 'The address and port of the Kubernetes API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l token -d 'Bearer token for authentication to the API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l certificate-authority -d 'Path to a cert file for the certificate authority' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l client-certificate -d 'Path to a client certificate file for TLS' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l client-key -d 'Path to a client key file for TLS' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l insecure-skip-tls-verify -d 'Do not check the server\'s certificate (insecure)' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l tls-server-name -d 'Server name to use for server certificate validation' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l as-uid -d 'UID to impersonate for the operation' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l request-timeout -d 'How long to wait for a single request before giving up (e.g. 30s; 0: no limit)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l disable-compression -d 'Do not ask the server for compressed responses' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -s n -l namespace -d 'Accepted as kubectl accepts it; a drain works across namespaces' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -s v -l v -d 'kubectl\'s log level; accepted, the drain\'s own lines do not change' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l cache-dir -d 'kubectl\'s discovery cache; accepted (the drain caches nothing)' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l match-server-version -d 'Accepted as kubectl accepts it' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l warnings-as-errors -d 'Accepted as kubectl accepts it' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l username -d 'Username for basic authentication to the API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l password -d 'Password for basic authentication to the API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l log-flush-frequency -d 'kubectl\'s log flush interval (e.g. 5s); accepted, the plugin writes each line at once' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l vmodule -d 'kubectl\'s per-file log levels (pattern=N,...); accepted, the plugin has no such logs' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l profile -d 'kubectl\'s Go profiler (none|cpu|heap|goroutine|threadcreate|block|mutex); accepted, no profile is written' -r -f -a "none\t''
cpu\t''
heap\t''
goroutine\t''
threadcreate\t''
block\t''
mutex\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l profile-output -d 'Where kubectl writes --profile; accepted, no profile is written' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l exec -d 'Run this shell command on each drained node\'s turn, with NODE, NODE_ADDRESSES, NODE_INTERNAL_IP, NODE_EXTERNAL_IP and NODE_HOSTNAME in its environment; a failure leaves the node cordoned. env:NAME or file:PATH reads a command that carries a credential from there: it is never shown, and an in-cluster run keeps it in its Secret' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l action-timeout -d 'How long --exec may run; then it and every process it started are ended and the node is left cordoned' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l ready-timeout -d 'How long a node may take to reboot, and then to be Ready' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l soak -d 'After uncordoning (and the budgets), wait this long before the node counts as done' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l lock-namespace -d 'Namespace of the per-node Leases that lock nodes against a second run' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l lease-duration -d 'How long a lock lasts unless renewed (it is renewed every third of it)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l kured-daemonset -d 'kured\'s DaemonSet, whose reboot lock the roll honours and holds during each action' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l skip-wait-for-detach -d 'Do not wait, once a node\'s pods are gone, for the volumes they used to detach from it'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l surge -d 'For a pod whose PodDisruptionBudget allows no disruption, scale its Deployment up by one first and let the pod go once the budget allows it; scaled back when the node is done'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l deadline-overrides-markers -d 'With --deadline: delete pods held by drain markers at the deadline too'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l allow-short-deadline -d 'With --deadline shorter than some pods\' grace period: yes, delete those pods as soon as an eviction is refused (otherwise the drain refuses before any change)'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l node-shut-down -d 'Take nodes whose kubelet is down out of service (the node.kubernetes.io/out-of-service taint), so that their StatefulSet pods and volumes move at once; only with proof that they are powered off: the cloud\'s node.kubernetes.io/shutdown taint, --fence-command, or the node\'s name typed at the prompt'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l by-zone -d 'Finish the nodes of one zone (topology.kubernetes.io/zone) before starting the next zone\'s'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l ignore-markers -d 'Ignore pods\' drain markers (cluster.x-k8s.io/drain, karpenter.sh/do-not-disrupt) and drain those pods as kubectl drain does'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l all-or-nothing -d 'If kubectl\'s filters refuse a pod on any selected node, change nothing (kubectl cordons every node and drains the others)'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l simulate -d 'Predict the drain by running it on an in-process copy of the cluster, on a simulated clock, and read the cluster only; with drain, show the prediction before draining (docs/usage.md)'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -s y -l yes -d 'Do not ask for confirmation'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l exclude-from-load-balancers -d 'Label the node node.kubernetes.io/exclude-from-external-load-balancers at cordon, taking it out of cloud load balancers; uncordon removes the label (unless it was there before)'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l allow-no-schedulable-nodes -d 'Accepted for scripts written for v0.1.0; a drain no longer refuses these cases'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l allow-quorum-loss -d 'Accepted for scripts written for v0.1.0; a drain does not check etcd quorum'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l in-cluster -d 'Run this drain or roll in the cluster as a Job (in --namespace, default kube-system) under a ServiceAccount with exactly the permissions its flags need; prints how to follow it'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l render -d 'With --in-cluster: print the objects as YAML and apply nothing (for GitOps)'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l cleanup -d 'With --in-cluster: remove the ServiceAccount, ClusterRole, binding and ConfigMap a run of the same command made'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l wait-for-reboot -d 'After --exec (or for an external actor), wait until the node reboots (NotReady, or a new boot ID) before waiting for Ready'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l wait-for-budgets -d 'After uncordoning, wait until every PodDisruptionBudget of the evicted pods has all its pods healthy (at most --ready-timeout)'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l fresh -d 'Start the roll over, ignoring what an earlier run of the same command recorded'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -l draino-pre-activities -d 'Wait for draino\'s pre-activity annotations (node-lifecycle.datadoghq.com/pre-activity-*) on each node to be done before its drain'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand roll" -s V -l version -d 'Print version'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -s l -l selector -d 'Select the nodes by label instead of naming them' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l out-of-service-timeout -d 'How long to wait, on a node taken out of service and Ready again, for its terminating pods and VolumeAttachments to be gone before its out-of-service taint is removed; past it, the node is left as it is' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l dry-run -d 'none, client (say what would be uncordoned) or server (also ask the API server); no changes are made' -r -f -a "none\t'`false` is kubectl\'s deprecated spelling'
client\t'`true` (or no value) is kubectl\'s deprecated spelling'
server\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l kubeconfig -d 'Path to the kubeconfig file (default: KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -s s -l server -d 'The address and port of the Kubernetes API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l token -d 'Bearer token for authentication to the API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l certificate-authority -d 'Path to a cert file for the certificate authority' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l client-certificate -d 'Path to a client certificate file for TLS' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l client-key -d 'Path to a client key file for TLS' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l insecure-skip-tls-verify -d 'Do not check the server\'s certificate (insecure)' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l tls-server-name -d 'Server name to use for server certificate validation' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l as-uid -d 'UID to impersonate for the operation' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l request-timeout -d 'How long to wait for a single request before giving up (e.g. 30s; 0: no limit)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l disable-compression -d 'Do not ask the server for compressed responses' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -s n -l namespace -d 'Accepted as kubectl accepts it; a drain works across namespaces' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -s v -l v -d 'kubectl\'s log level; accepted, the drain\'s own lines do not change' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l cache-dir -d 'kubectl\'s discovery cache; accepted (the drain caches nothing)' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l match-server-version -d 'Accepted as kubectl accepts it' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l warnings-as-errors -d 'Accepted as kubectl accepts it' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l username -d 'Username for basic authentication to the API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l password -d 'Password for basic authentication to the API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l log-flush-frequency -d 'kubectl\'s log flush interval (e.g. 5s); accepted, the plugin writes each line at once' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l vmodule -d 'kubectl\'s per-file log levels (pattern=N,...); accepted, the plugin has no such logs' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l profile -d 'kubectl\'s Go profiler (none|cpu|heap|goroutine|threadcreate|block|mutex); accepted, no profile is written' -r -f -a "none\t''
cpu\t''
heap\t''
goroutine\t''
threadcreate\t''
block\t''
mutex\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l profile-output -d 'Where kubectl writes --profile; accepted, no profile is written' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -l even-if-not-ready -d 'Uncordon a node that is not Ready too (its out-of-service taint stays until it is Ready)'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand uncordon" -s V -l version -d 'Print version'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l kubelet-version -d 'Show only the nodes whose kubelet reports a version in RANGE (<1.33, >=1.30,<1.33, 1.32)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l run -d 'The run to show (its Job\'s name); implies showing the run rather than the nodes' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -s o -l output -d 'Output format' -r -f -a "table\t''
json\t''
yaml\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l kubeconfig -d 'Path to the kubeconfig file (default: KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -s s -l server -d 'The address and port of the Kubernetes API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l token -d 'Bearer token for authentication to the API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l certificate-authority -d 'Path to a cert file for the certificate authority' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l client-certificate -d 'Path to a client certificate file for TLS' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l client-key -d 'Path to a client key file for TLS' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l insecure-skip-tls-verify -d 'Do not check the server\'s certificate (insecure)' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l tls-server-name -d 'Server name to use for server certificate validation' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l as-uid -d 'UID to impersonate for the operation' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l request-timeout -d 'How long to wait for a single request before giving up (e.g. 30s; 0: no limit)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l disable-compression -d 'Do not ask the server for compressed responses' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -s n -l namespace -d 'Accepted as kubectl accepts it; a drain works across namespaces' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -s v -l v -d 'kubectl\'s log level; accepted, the drain\'s own lines do not change' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l cache-dir -d 'kubectl\'s discovery cache; accepted (the drain caches nothing)' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l match-server-version -d 'Accepted as kubectl accepts it' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l warnings-as-errors -d 'Accepted as kubectl accepts it' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l username -d 'Username for basic authentication to the API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l password -d 'Password for basic authentication to the API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l log-flush-frequency -d 'kubectl\'s log flush interval (e.g. 5s); accepted, the plugin writes each line at once' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l vmodule -d 'kubectl\'s per-file log levels (pattern=N,...); accepted, the plugin has no such logs' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l profile -d 'kubectl\'s Go profiler (none|cpu|heap|goroutine|threadcreate|block|mutex); accepted, no profile is written' -r -f -a "none\t''
cpu\t''
heap\t''
goroutine\t''
threadcreate\t''
block\t''
mutex\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -l profile-output -d 'Where kubectl writes --profile; accepted, no profile is written' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -s w -l watch -d 'Follow a run handed to the cluster (the newest, or --run) until it ends: its pod, each node\'s phase, holds and blockers'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -s h -l help -d 'Print help'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand status" -s V -l version -d 'Print version'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l kubeconfig -d 'Path to the kubeconfig file (default: KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -s s -l server -d 'The address and port of the Kubernetes API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l token -d 'Bearer token for authentication to the API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l certificate-authority -d 'Path to a cert file for the certificate authority' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l client-certificate -d 'Path to a client certificate file for TLS' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l client-key -d 'Path to a client key file for TLS' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l insecure-skip-tls-verify -d 'Do not check the server\'s certificate (insecure)' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l tls-server-name -d 'Server name to use for server certificate validation' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l as-uid -d 'UID to impersonate for the operation' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l request-timeout -d 'How long to wait for a single request before giving up (e.g. 30s; 0: no limit)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l disable-compression -d 'Do not ask the server for compressed responses' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -s n -l namespace -d 'Accepted as kubectl accepts it; a drain works across namespaces' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -s v -l v -d 'kubectl\'s log level; accepted, the drain\'s own lines do not change' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l cache-dir -d 'kubectl\'s discovery cache; accepted (the drain caches nothing)' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l match-server-version -d 'Accepted as kubectl accepts it' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l warnings-as-errors -d 'Accepted as kubectl accepts it' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l username -d 'Username for basic authentication to the API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l password -d 'Password for basic authentication to the API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l log-flush-frequency -d 'kubectl\'s log flush interval (e.g. 5s); accepted, the plugin writes each line at once' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l vmodule -d 'kubectl\'s per-file log levels (pattern=N,...); accepted, the plugin has no such logs' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l profile -d 'kubectl\'s Go profiler (none|cpu|heap|goroutine|threadcreate|block|mutex); accepted, no profile is written' -r -f -a "none\t''
cpu\t''
heap\t''
goroutine\t''
threadcreate\t''
block\t''
mutex\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l profile-output -d 'Where kubectl writes --profile; accepted, no profile is written' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -s f -l follow -d 'Stream the log, across the run\'s pod restarts and replacements, until the run ends'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -l timestamps -d 'Prefix each line with its time, as kubectl logs --timestamps'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -s h -l help -d 'Print help'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand logs" -s V -l version -d 'Print version'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l kubeconfig -d 'Path to the kubeconfig file (default: KUBECONFIG, then ~/.kube/config)' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l cluster -d 'The kubeconfig cluster to use' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l user -d 'The kubeconfig user to use' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -s s -l server -d 'The address and port of the Kubernetes API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l token -d 'Bearer token for authentication to the API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l certificate-authority -d 'Path to a cert file for the certificate authority' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l client-certificate -d 'Path to a client certificate file for TLS' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l client-key -d 'Path to a client key file for TLS' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l insecure-skip-tls-verify -d 'Do not check the server\'s certificate (insecure)' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l tls-server-name -d 'Server name to use for server certificate validation' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l as -d 'Username to impersonate for the operation' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l as-group -d 'Group to impersonate for the operation (repeatable)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l as-uid -d 'UID to impersonate for the operation' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l request-timeout -d 'How long to wait for a single request before giving up (e.g. 30s; 0: no limit)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l disable-compression -d 'Do not ask the server for compressed responses' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -s n -l namespace -d 'Accepted as kubectl accepts it; a drain works across namespaces' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -s v -l v -d 'kubectl\'s log level; accepted, the drain\'s own lines do not change' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l cache-dir -d 'kubectl\'s discovery cache; accepted (the drain caches nothing)' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l match-server-version -d 'Accepted as kubectl accepts it' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l warnings-as-errors -d 'Accepted as kubectl accepts it' -r -f -a "true\t''
false\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l username -d 'Username for basic authentication to the API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l password -d 'Password for basic authentication to the API server' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l log-flush-frequency -d 'kubectl\'s log flush interval (e.g. 5s); accepted, the plugin writes each line at once' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l vmodule -d 'kubectl\'s per-file log levels (pattern=N,...); accepted, the plugin has no such logs' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l profile -d 'kubectl\'s Go profiler (none|cpu|heap|goroutine|threadcreate|block|mutex); accepted, no profile is written' -r -f -a "none\t''
cpu\t''
heap\t''
goroutine\t''
threadcreate\t''
block\t''
mutex\t''"
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -l profile-output -d 'Where kubectl writes --profile; accepted, no profile is written' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -s h -l help -d 'Print help'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand abort" -s V -l version -d 'Print version'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand demo" -l timeout -d 'Give up on the blocked pods after this long' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand demo" -l keep-running -d 'Keep the sandbox serving after the drain, to look around with kubectl'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand demo" -s h -l help -d 'Print help'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand demo" -s V -l version -d 'Print version'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand completion" -s h -l help -d 'Print help'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand completion" -s V -l version -d 'Print version'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand sandbox" -l scenario -d 'Scenario file: Kubernetes objects as YAML (several documents or a v1 List)' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand sandbox" -l synthetic-nodes -d 'Generate a synthetic cluster of this many nodes instead of reading a scenario' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand sandbox" -l pods-per-node -d 'Pods per node of the synthetic cluster (its DaemonSet pod included)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand sandbox" -l listen -d 'Address to listen on, a loopback one unless --expose; port 0 picks a free port' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand sandbox" -l kubeconfig-out -d 'Write the sandbox\'s kubeconfig (its CA and its owner\'s token, minted at each start) here, readable by you alone; without it, one is written in a private directory removed at exit' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand sandbox" -l request-log -d 'Log every request as one JSON object per line to this file' -r -F
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand sandbox" -l local-image -d 'Run containers of IMAGE (any tag or digest) as the local program PATH, with their arguments, environment, ServiceAccount token and volumes, as nobody unless the pod sets runAsUser (needs root). Repeatable' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand sandbox" -l kube-version -d 'Kubernetes version served at /version (major.minor)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand sandbox" -l watch-history -d 'Changes of each resource a watch can resume from before it gets 410 Expired' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand sandbox" -l fault-500 -d 'Share of resource requests answered 500 (0 to 1)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand sandbox" -l fault-503 -d 'Share of resource requests answered 503 with Retry-After (0 to 1)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand sandbox" -l fault-429 -d 'Share of resource requests answered 429 TooManyRequests (0 to 1)' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand sandbox" -l latency-ms -d 'Milliseconds added before every resource request is answered' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand sandbox" -l watch-cut-after -d 'Close every watch stream after this many events' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand sandbox" -l fault-seed -d 'Seed for the fault dice, to repeat a run' -r
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand sandbox" -l expose -d 'Serve on a --listen address that is not loopback: anyone who reaches it and holds its kubeconfig may do anything to the simulated cluster'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand sandbox" -s h -l help -d 'Print help'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand sandbox" -s V -l version -d 'Print version'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand help; and not __fish_seen_subcommand_from drain plan roll uncordon status logs abort demo completion sandbox help" -f -a "drain" -d 'Cordon nodes and evict their pods in priority waves (a drop-in for kubectl drain)'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand help; and not __fish_seen_subcommand_from drain plan roll uncordon status logs abort demo completion sandbox help" -f -a "plan" -d 'Show which pods each wave would evict, and what would be refused, without changing anything'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand help; and not __fish_seen_subcommand_from drain plan roll uncordon status logs abort demo completion sandbox help" -f -a "roll" -d 'Maintain a pool node by node: lock, drain, act (--exec, --wait-for-reboot), Ready, uncordon, next; resumable'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand help; and not __fish_seen_subcommand_from drain plan roll uncordon status logs abort demo completion sandbox help" -f -a "uncordon" -d 'Return nodes to service, undoing exactly what the drain changed'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand help; and not __fish_seen_subcommand_from drain plan roll uncordon status logs abort demo completion sandbox help" -f -a "status" -d 'List the nodes under maintenance: state, since when, why, what is still on them; -w follows a run handed to the cluster'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand help; and not __fish_seen_subcommand_from drain plan roll uncordon status logs abort demo completion sandbox help" -f -a "logs" -d 'Print the log of a run handed to the cluster (--in-cluster); -f follows it across its pods to its end'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand help; and not __fish_seen_subcommand_from drain plan roll uncordon status logs abort demo completion sandbox help" -f -a "abort" -d 'Stop a run handed to the cluster after the node in progress, remove its Job, and say what is left'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand help; and not __fish_seen_subcommand_from drain plan roll uncordon status logs abort demo completion sandbox help" -f -a "demo" -d 'Drain a node of a simulated cluster, to see what kubectl maintain does'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand help; and not __fish_seen_subcommand_from drain plan roll uncordon status logs abort demo completion sandbox help" -f -a "completion" -d 'Print a shell completion script (bash, zsh, fish, powershell)'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand help; and not __fish_seen_subcommand_from drain plan roll uncordon status logs abort demo completion sandbox help" -f -a "sandbox" -d 'Serve a simulated cluster on loopback, for rehearsals and tests'
complete -c kubectl-maintain -n "__fish_kubectl_maintain_using_subcommand help; and not __fish_seen_subcommand_from drain plan roll uncordon status logs abort demo completion sandbox help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
