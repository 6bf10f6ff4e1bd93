
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'kubectl-maintain' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'kubectl-maintain'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'kubectl-maintain' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('drain', 'drain', [CompletionResultType]::ParameterValue, 'Cordon nodes and evict their pods in priority waves (a drop-in for kubectl drain)')
            [CompletionResult]::new('plan', 'plan', [CompletionResultType]::ParameterValue, 'Show which pods each wave would evict, and what would be refused, without changing anything')
            [CompletionResult]::new('roll', 'roll', [CompletionResultType]::ParameterValue, 'Maintain a pool node by node: lock, drain, act (--exec, --wait-for-reboot), Ready, uncordon, next; resumable')
            [CompletionResult]::new('uncordon', 'uncordon', [CompletionResultType]::ParameterValue, 'Return nodes to service, undoing exactly what the drain changed')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'List the nodes under maintenance: since when, why, what is still on them')
            [CompletionResult]::new('demo', 'demo', [CompletionResultType]::ParameterValue, 'Drain a node of a simulated cluster, to see what kubectl maintain does')
            [CompletionResult]::new('completion', 'completion', [CompletionResultType]::ParameterValue, 'Print a shell completion script (bash, zsh, fish, powershell)')
            [CompletionResult]::new('sandbox', 'sandbox', [CompletionResultType]::ParameterValue, 'Serve a simulated cluster on loopback, for rehearsals and tests')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-maintain;drain' {
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Select the nodes by label instead of naming them')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Select the nodes by label instead of naming them')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Continue even if there are pods that do not declare a controller')
            [CompletionResult]::new('--ignore-daemonsets', '--ignore-daemonsets', [CompletionResultType]::ParameterName, 'Ignore DaemonSet-managed pods')
            [CompletionResult]::new('--delete-emptydir-data', '--delete-emptydir-data', [CompletionResultType]::ParameterName, 'Continue even if there are pods using emptyDir (their data is deleted)')
            [CompletionResult]::new('--grace-period', '--grace-period', [CompletionResultType]::ParameterName, 'Seconds each pod gets to terminate; negative uses the pod''s own')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Give up after this long (0: never), e.g. 5m')
            [CompletionResult]::new('--deadline', '--deadline', [CompletionResultType]::ParameterName, 'After this long on a node, stop asking and delete what is left, bypassing PodDisruptionBudgets; each pod is deleted its grace period before the deadline, so that it still gets all of it. Pods held by drain markers are left unless --deadline-overrides-markers')
            [CompletionResult]::new('--detach-timeout', '--detach-timeout', [CompletionResultType]::ParameterName, 'How long to wait for the evicted pods'' volumes to detach before the node counts as timed out')
            [CompletionResult]::new('--pod-selector', '--pod-selector', [CompletionResultType]::ParameterName, 'Only pods matching this label selector are drained')
            [CompletionResult]::new('--disable-eviction', '--disable-eviction', [CompletionResultType]::ParameterName, 'Delete pods instead of evicting them, bypassing PodDisruptionBudgets')
            [CompletionResult]::new('--skip-wait-for-delete-timeout', '--skip-wait-for-delete-timeout', [CompletionResultType]::ParameterName, 'Pods terminating for longer than this many seconds are not waited for (0: wait)')
            [CompletionResult]::new('--chunk-size', '--chunk-size', [CompletionResultType]::ParameterName, 'List pods in pages of this many (0: all at once)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'none, client (show the plan) or server (also ask the API server); no changes are made')
            [CompletionResult]::new('--plan', '--plan', [CompletionResultType]::ParameterName, 'A DrainPlan file: waves and rules (docs/plan.md)')
            [CompletionResult]::new('--max-parallel', '--max-parallel', [CompletionResultType]::ParameterName, 'Nodes drained at the same time')
            [CompletionResult]::new('--max-blocked-nodes', '--max-blocked-nodes', [CompletionResultType]::ParameterName, 'Stop starting nodes once more than N could not be drained (timed out, refused, failed); those not started stay cordoned. Default: go on, as kubectl drain does')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'With --simulate: copy the cluster from this file (`kubectl get ... -o yaml`, as the sandbox loads it) instead of reading the live one')
            [CompletionResult]::new('--assume-shutdown', '--assume-shutdown', [CompletionResultType]::ParameterName, 'With --simulate: every pod takes this long to stop once deleted (within its grace period), instead of what its spec says')
            [CompletionResult]::new('--assume-ready', '--assume-ready', [CompletionResultType]::ParameterName, 'With --simulate: every new pod is Ready this long after it starts, instead of what its readiness probe says')
            [CompletionResult]::new('--assume-times', '--assume-times', [CompletionResultType]::ParameterName, 'With --simulate: shutdown and readiness times per workload, from a WorkloadTimes YAML file (docs/usage.md), over --assume-shutdown and --assume-ready')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Report format on stdout')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Report format on stdout')
            [CompletionResult]::new('--taint', '--taint', [CompletionResultType]::ParameterName, 'Add this taint (key[=value]:Effect) at cordon; uncordon removes it. Repeatable')
            [CompletionResult]::new('--reason', '--reason', [CompletionResultType]::ParameterName, 'Why: recorded on the node, shown by status')
            [CompletionResult]::new('--node-conditions', '--node-conditions', [CompletionResultType]::ParameterName, 'Write the DrainInProgress and Drained node conditions (KEP-5683) on nodes/status; =false to turn them off')
            [CompletionResult]::new('--max-unavailable', '--max-unavailable', [CompletionResultType]::ParameterName, 'Refuse unless at most this many nodes (N or P% of all nodes) are unavailable at once, counting nodes already cordoned')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'The address and port of the Kubernetes API server')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The address and port of the Kubernetes API server')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token for authentication to the API server')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'Path to a cert file for the certificate authority')
            [CompletionResult]::new('--client-certificate', '--client-certificate', [CompletionResultType]::ParameterName, 'Path to a client certificate file for TLS')
            [CompletionResult]::new('--client-key', '--client-key', [CompletionResultType]::ParameterName, 'Path to a client key file for TLS')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not check the server''s certificate (insecure)')
            [CompletionResult]::new('--tls-server-name', '--tls-server-name', [CompletionResultType]::ParameterName, 'Server name to use for server certificate validation')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--as-uid', '--as-uid', [CompletionResultType]::ParameterName, 'UID to impersonate for the operation')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a single request before giving up (e.g. 30s; 0: no limit)')
            [CompletionResult]::new('--disable-compression', '--disable-compression', [CompletionResultType]::ParameterName, 'Do not ask the server for compressed responses')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Accepted as kubectl accepts it; a drain works across namespaces')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Accepted as kubectl accepts it; a drain works across namespaces')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'kubectl''s log level; accepted, the drain''s own lines do not change')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'kubectl''s log level; accepted, the drain''s own lines do not change')
            [CompletionResult]::new('--cache-dir', '--cache-dir', [CompletionResultType]::ParameterName, 'kubectl''s discovery cache; accepted (the drain caches nothing)')
            [CompletionResult]::new('--match-server-version', '--match-server-version', [CompletionResultType]::ParameterName, 'Accepted as kubectl accepts it')
            [CompletionResult]::new('--warnings-as-errors', '--warnings-as-errors', [CompletionResultType]::ParameterName, 'Accepted as kubectl accepts it')
            [CompletionResult]::new('--skip-wait-for-detach', '--skip-wait-for-detach', [CompletionResultType]::ParameterName, 'Do not wait, once a node''s pods are gone, for the volumes they used to detach from it')
            [CompletionResult]::new('--surge', '--surge', [CompletionResultType]::ParameterName, 'For a pod whose PodDisruptionBudget allows no disruption, scale its Deployment up by one first and let the pod go once the budget allows it; scaled back when the node is done')
            [CompletionResult]::new('--deadline-overrides-markers', '--deadline-overrides-markers', [CompletionResultType]::ParameterName, 'With --deadline: delete pods held by drain markers at the deadline too')
            [CompletionResult]::new('--allow-short-deadline', '--allow-short-deadline', [CompletionResultType]::ParameterName, 'With --deadline shorter than some pods'' grace period: yes, delete those pods as soon as an eviction is refused (otherwise the drain refuses before any change)')
            [CompletionResult]::new('--by-zone', '--by-zone', [CompletionResultType]::ParameterName, 'Finish the nodes of one zone (topology.kubernetes.io/zone) before starting the next zone''s')
            [CompletionResult]::new('--ignore-markers', '--ignore-markers', [CompletionResultType]::ParameterName, 'Ignore pods'' drain markers (cluster.x-k8s.io/drain, karpenter.sh/do-not-disrupt) and drain those pods as kubectl drain does')
            [CompletionResult]::new('--all-or-nothing', '--all-or-nothing', [CompletionResultType]::ParameterName, 'If kubectl''s filters refuse a pod on any selected node, change nothing (kubectl cordons every node and drains the others)')
            [CompletionResult]::new('--simulate', '--simulate', [CompletionResultType]::ParameterName, 'Predict the drain by running it on an in-process copy of the cluster, on a simulated clock, and read the cluster only; with drain, show the prediction before draining (docs/usage.md)')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Do not ask for confirmation')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do not ask for confirmation')
            [CompletionResult]::new('--exclude-from-load-balancers', '--exclude-from-load-balancers', [CompletionResultType]::ParameterName, 'Label the node node.kubernetes.io/exclude-from-external-load-balancers at cordon, taking it out of cloud load balancers; uncordon removes the label (unless it was there before)')
            [CompletionResult]::new('--allow-no-schedulable-nodes', '--allow-no-schedulable-nodes', [CompletionResultType]::ParameterName, 'Accepted for scripts written for v0.1.0; a drain no longer refuses these cases')
            [CompletionResult]::new('--allow-quorum-loss', '--allow-quorum-loss', [CompletionResultType]::ParameterName, 'Accepted for scripts written for v0.1.0; a drain does not check etcd quorum')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-maintain;plan' {
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Select the nodes by label instead of naming them')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Select the nodes by label instead of naming them')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Continue even if there are pods that do not declare a controller')
            [CompletionResult]::new('--ignore-daemonsets', '--ignore-daemonsets', [CompletionResultType]::ParameterName, 'Ignore DaemonSet-managed pods')
            [CompletionResult]::new('--delete-emptydir-data', '--delete-emptydir-data', [CompletionResultType]::ParameterName, 'Continue even if there are pods using emptyDir (their data is deleted)')
            [CompletionResult]::new('--grace-period', '--grace-period', [CompletionResultType]::ParameterName, 'Seconds each pod gets to terminate; negative uses the pod''s own')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Give up after this long (0: never), e.g. 5m')
            [CompletionResult]::new('--deadline', '--deadline', [CompletionResultType]::ParameterName, 'After this long on a node, stop asking and delete what is left, bypassing PodDisruptionBudgets; each pod is deleted its grace period before the deadline, so that it still gets all of it. Pods held by drain markers are left unless --deadline-overrides-markers')
            [CompletionResult]::new('--detach-timeout', '--detach-timeout', [CompletionResultType]::ParameterName, 'How long to wait for the evicted pods'' volumes to detach before the node counts as timed out')
            [CompletionResult]::new('--pod-selector', '--pod-selector', [CompletionResultType]::ParameterName, 'Only pods matching this label selector are drained')
            [CompletionResult]::new('--disable-eviction', '--disable-eviction', [CompletionResultType]::ParameterName, 'Delete pods instead of evicting them, bypassing PodDisruptionBudgets')
            [CompletionResult]::new('--skip-wait-for-delete-timeout', '--skip-wait-for-delete-timeout', [CompletionResultType]::ParameterName, 'Pods terminating for longer than this many seconds are not waited for (0: wait)')
            [CompletionResult]::new('--chunk-size', '--chunk-size', [CompletionResultType]::ParameterName, 'List pods in pages of this many (0: all at once)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'none, client (show the plan) or server (also ask the API server); no changes are made')
            [CompletionResult]::new('--plan', '--plan', [CompletionResultType]::ParameterName, 'A DrainPlan file: waves and rules (docs/plan.md)')
            [CompletionResult]::new('--max-parallel', '--max-parallel', [CompletionResultType]::ParameterName, 'Nodes drained at the same time')
            [CompletionResult]::new('--max-blocked-nodes', '--max-blocked-nodes', [CompletionResultType]::ParameterName, 'Stop starting nodes once more than N could not be drained (timed out, refused, failed); those not started stay cordoned. Default: go on, as kubectl drain does')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'With --simulate: copy the cluster from this file (`kubectl get ... -o yaml`, as the sandbox loads it) instead of reading the live one')
            [CompletionResult]::new('--assume-shutdown', '--assume-shutdown', [CompletionResultType]::ParameterName, 'With --simulate: every pod takes this long to stop once deleted (within its grace period), instead of what its spec says')
            [CompletionResult]::new('--assume-ready', '--assume-ready', [CompletionResultType]::ParameterName, 'With --simulate: every new pod is Ready this long after it starts, instead of what its readiness probe says')
            [CompletionResult]::new('--assume-times', '--assume-times', [CompletionResultType]::ParameterName, 'With --simulate: shutdown and readiness times per workload, from a WorkloadTimes YAML file (docs/usage.md), over --assume-shutdown and --assume-ready')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Report format on stdout')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Report format on stdout')
            [CompletionResult]::new('--taint', '--taint', [CompletionResultType]::ParameterName, 'Add this taint (key[=value]:Effect) at cordon; uncordon removes it. Repeatable')
            [CompletionResult]::new('--reason', '--reason', [CompletionResultType]::ParameterName, 'Why: recorded on the node, shown by status')
            [CompletionResult]::new('--node-conditions', '--node-conditions', [CompletionResultType]::ParameterName, 'Write the DrainInProgress and Drained node conditions (KEP-5683) on nodes/status; =false to turn them off')
            [CompletionResult]::new('--max-unavailable', '--max-unavailable', [CompletionResultType]::ParameterName, 'Refuse unless at most this many nodes (N or P% of all nodes) are unavailable at once, counting nodes already cordoned')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'The address and port of the Kubernetes API server')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The address and port of the Kubernetes API server')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token for authentication to the API server')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'Path to a cert file for the certificate authority')
            [CompletionResult]::new('--client-certificate', '--client-certificate', [CompletionResultType]::ParameterName, 'Path to a client certificate file for TLS')
            [CompletionResult]::new('--client-key', '--client-key', [CompletionResultType]::ParameterName, 'Path to a client key file for TLS')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not check the server''s certificate (insecure)')
            [CompletionResult]::new('--tls-server-name', '--tls-server-name', [CompletionResultType]::ParameterName, 'Server name to use for server certificate validation')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--as-uid', '--as-uid', [CompletionResultType]::ParameterName, 'UID to impersonate for the operation')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a single request before giving up (e.g. 30s; 0: no limit)')
            [CompletionResult]::new('--disable-compression', '--disable-compression', [CompletionResultType]::ParameterName, 'Do not ask the server for compressed responses')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Accepted as kubectl accepts it; a drain works across namespaces')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Accepted as kubectl accepts it; a drain works across namespaces')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'kubectl''s log level; accepted, the drain''s own lines do not change')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'kubectl''s log level; accepted, the drain''s own lines do not change')
            [CompletionResult]::new('--cache-dir', '--cache-dir', [CompletionResultType]::ParameterName, 'kubectl''s discovery cache; accepted (the drain caches nothing)')
            [CompletionResult]::new('--match-server-version', '--match-server-version', [CompletionResultType]::ParameterName, 'Accepted as kubectl accepts it')
            [CompletionResult]::new('--warnings-as-errors', '--warnings-as-errors', [CompletionResultType]::ParameterName, 'Accepted as kubectl accepts it')
            [CompletionResult]::new('--skip-wait-for-detach', '--skip-wait-for-detach', [CompletionResultType]::ParameterName, 'Do not wait, once a node''s pods are gone, for the volumes they used to detach from it')
            [CompletionResult]::new('--surge', '--surge', [CompletionResultType]::ParameterName, 'For a pod whose PodDisruptionBudget allows no disruption, scale its Deployment up by one first and let the pod go once the budget allows it; scaled back when the node is done')
            [CompletionResult]::new('--deadline-overrides-markers', '--deadline-overrides-markers', [CompletionResultType]::ParameterName, 'With --deadline: delete pods held by drain markers at the deadline too')
            [CompletionResult]::new('--allow-short-deadline', '--allow-short-deadline', [CompletionResultType]::ParameterName, 'With --deadline shorter than some pods'' grace period: yes, delete those pods as soon as an eviction is refused (otherwise the drain refuses before any change)')
            [CompletionResult]::new('--by-zone', '--by-zone', [CompletionResultType]::ParameterName, 'Finish the nodes of one zone (topology.kubernetes.io/zone) before starting the next zone''s')
            [CompletionResult]::new('--ignore-markers', '--ignore-markers', [CompletionResultType]::ParameterName, 'Ignore pods'' drain markers (cluster.x-k8s.io/drain, karpenter.sh/do-not-disrupt) and drain those pods as kubectl drain does')
            [CompletionResult]::new('--all-or-nothing', '--all-or-nothing', [CompletionResultType]::ParameterName, 'If kubectl''s filters refuse a pod on any selected node, change nothing (kubectl cordons every node and drains the others)')
            [CompletionResult]::new('--simulate', '--simulate', [CompletionResultType]::ParameterName, 'Predict the drain by running it on an in-process copy of the cluster, on a simulated clock, and read the cluster only; with drain, show the prediction before draining (docs/usage.md)')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Do not ask for confirmation')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do not ask for confirmation')
            [CompletionResult]::new('--exclude-from-load-balancers', '--exclude-from-load-balancers', [CompletionResultType]::ParameterName, 'Label the node node.kubernetes.io/exclude-from-external-load-balancers at cordon, taking it out of cloud load balancers; uncordon removes the label (unless it was there before)')
            [CompletionResult]::new('--allow-no-schedulable-nodes', '--allow-no-schedulable-nodes', [CompletionResultType]::ParameterName, 'Accepted for scripts written for v0.1.0; a drain no longer refuses these cases')
            [CompletionResult]::new('--allow-quorum-loss', '--allow-quorum-loss', [CompletionResultType]::ParameterName, 'Accepted for scripts written for v0.1.0; a drain does not check etcd quorum')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-maintain;roll' {
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Select the nodes by label instead of naming them')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Select the nodes by label instead of naming them')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Continue even if there are pods that do not declare a controller')
            [CompletionResult]::new('--ignore-daemonsets', '--ignore-daemonsets', [CompletionResultType]::ParameterName, 'Ignore DaemonSet-managed pods')
            [CompletionResult]::new('--delete-emptydir-data', '--delete-emptydir-data', [CompletionResultType]::ParameterName, 'Continue even if there are pods using emptyDir (their data is deleted)')
            [CompletionResult]::new('--grace-period', '--grace-period', [CompletionResultType]::ParameterName, 'Seconds each pod gets to terminate; negative uses the pod''s own')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Give up after this long (0: never), e.g. 5m')
            [CompletionResult]::new('--deadline', '--deadline', [CompletionResultType]::ParameterName, 'After this long on a node, stop asking and delete what is left, bypassing PodDisruptionBudgets; each pod is deleted its grace period before the deadline, so that it still gets all of it. Pods held by drain markers are left unless --deadline-overrides-markers')
            [CompletionResult]::new('--detach-timeout', '--detach-timeout', [CompletionResultType]::ParameterName, 'How long to wait for the evicted pods'' volumes to detach before the node counts as timed out')
            [CompletionResult]::new('--pod-selector', '--pod-selector', [CompletionResultType]::ParameterName, 'Only pods matching this label selector are drained')
            [CompletionResult]::new('--disable-eviction', '--disable-eviction', [CompletionResultType]::ParameterName, 'Delete pods instead of evicting them, bypassing PodDisruptionBudgets')
            [CompletionResult]::new('--skip-wait-for-delete-timeout', '--skip-wait-for-delete-timeout', [CompletionResultType]::ParameterName, 'Pods terminating for longer than this many seconds are not waited for (0: wait)')
            [CompletionResult]::new('--chunk-size', '--chunk-size', [CompletionResultType]::ParameterName, 'List pods in pages of this many (0: all at once)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'none, client (show the plan) or server (also ask the API server); no changes are made')
            [CompletionResult]::new('--plan', '--plan', [CompletionResultType]::ParameterName, 'A DrainPlan file: waves and rules (docs/plan.md)')
            [CompletionResult]::new('--max-parallel', '--max-parallel', [CompletionResultType]::ParameterName, 'Nodes drained at the same time')
            [CompletionResult]::new('--max-blocked-nodes', '--max-blocked-nodes', [CompletionResultType]::ParameterName, 'Stop starting nodes once more than N could not be drained (timed out, refused, failed); those not started stay cordoned. Default: go on, as kubectl drain does')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'With --simulate: copy the cluster from this file (`kubectl get ... -o yaml`, as the sandbox loads it) instead of reading the live one')
            [CompletionResult]::new('--assume-shutdown', '--assume-shutdown', [CompletionResultType]::ParameterName, 'With --simulate: every pod takes this long to stop once deleted (within its grace period), instead of what its spec says')
            [CompletionResult]::new('--assume-ready', '--assume-ready', [CompletionResultType]::ParameterName, 'With --simulate: every new pod is Ready this long after it starts, instead of what its readiness probe says')
            [CompletionResult]::new('--assume-times', '--assume-times', [CompletionResultType]::ParameterName, 'With --simulate: shutdown and readiness times per workload, from a WorkloadTimes YAML file (docs/usage.md), over --assume-shutdown and --assume-ready')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Report format on stdout')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Report format on stdout')
            [CompletionResult]::new('--taint', '--taint', [CompletionResultType]::ParameterName, 'Add this taint (key[=value]:Effect) at cordon; uncordon removes it. Repeatable')
            [CompletionResult]::new('--reason', '--reason', [CompletionResultType]::ParameterName, 'Why: recorded on the node, shown by status')
            [CompletionResult]::new('--node-conditions', '--node-conditions', [CompletionResultType]::ParameterName, 'Write the DrainInProgress and Drained node conditions (KEP-5683) on nodes/status; =false to turn them off')
            [CompletionResult]::new('--max-unavailable', '--max-unavailable', [CompletionResultType]::ParameterName, 'Refuse unless at most this many nodes (N or P% of all nodes) are unavailable at once, counting nodes already cordoned')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'The address and port of the Kubernetes API server')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The address and port of the Kubernetes API server')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token for authentication to the API server')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'Path to a cert file for the certificate authority')
            [CompletionResult]::new('--client-certificate', '--client-certificate', [CompletionResultType]::ParameterName, 'Path to a client certificate file for TLS')
            [CompletionResult]::new('--client-key', '--client-key', [CompletionResultType]::ParameterName, 'Path to a client key file for TLS')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not check the server''s certificate (insecure)')
            [CompletionResult]::new('--tls-server-name', '--tls-server-name', [CompletionResultType]::ParameterName, 'Server name to use for server certificate validation')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--as-uid', '--as-uid', [CompletionResultType]::ParameterName, 'UID to impersonate for the operation')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a single request before giving up (e.g. 30s; 0: no limit)')
            [CompletionResult]::new('--disable-compression', '--disable-compression', [CompletionResultType]::ParameterName, 'Do not ask the server for compressed responses')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Accepted as kubectl accepts it; a drain works across namespaces')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Accepted as kubectl accepts it; a drain works across namespaces')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'kubectl''s log level; accepted, the drain''s own lines do not change')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'kubectl''s log level; accepted, the drain''s own lines do not change')
            [CompletionResult]::new('--cache-dir', '--cache-dir', [CompletionResultType]::ParameterName, 'kubectl''s discovery cache; accepted (the drain caches nothing)')
            [CompletionResult]::new('--match-server-version', '--match-server-version', [CompletionResultType]::ParameterName, 'Accepted as kubectl accepts it')
            [CompletionResult]::new('--warnings-as-errors', '--warnings-as-errors', [CompletionResultType]::ParameterName, 'Accepted as kubectl accepts it')
            [CompletionResult]::new('--exec', '--exec', [CompletionResultType]::ParameterName, 'Run this shell command on each drained node''s turn, with NODE, NODE_ADDRESSES, NODE_INTERNAL_IP, NODE_EXTERNAL_IP and NODE_HOSTNAME in its environment; a failure leaves the node cordoned')
            [CompletionResult]::new('--action-timeout', '--action-timeout', [CompletionResultType]::ParameterName, 'How long --exec may run; then it and every process it started are ended and the node is left cordoned')
            [CompletionResult]::new('--ready-timeout', '--ready-timeout', [CompletionResultType]::ParameterName, 'How long a node may take to reboot, and then to be Ready')
            [CompletionResult]::new('--soak', '--soak', [CompletionResultType]::ParameterName, 'After uncordoning (and the budgets), wait this long before the node counts as done')
            [CompletionResult]::new('--lock-namespace', '--lock-namespace', [CompletionResultType]::ParameterName, 'Namespace of the per-node Leases that lock nodes against a second run')
            [CompletionResult]::new('--lease-duration', '--lease-duration', [CompletionResultType]::ParameterName, 'How long a lock lasts unless renewed (it is renewed every third of it)')
            [CompletionResult]::new('--kured-daemonset', '--kured-daemonset', [CompletionResultType]::ParameterName, 'kured''s DaemonSet, whose reboot lock the roll honours and holds during each action')
            [CompletionResult]::new('--skip-wait-for-detach', '--skip-wait-for-detach', [CompletionResultType]::ParameterName, 'Do not wait, once a node''s pods are gone, for the volumes they used to detach from it')
            [CompletionResult]::new('--surge', '--surge', [CompletionResultType]::ParameterName, 'For a pod whose PodDisruptionBudget allows no disruption, scale its Deployment up by one first and let the pod go once the budget allows it; scaled back when the node is done')
            [CompletionResult]::new('--deadline-overrides-markers', '--deadline-overrides-markers', [CompletionResultType]::ParameterName, 'With --deadline: delete pods held by drain markers at the deadline too')
            [CompletionResult]::new('--allow-short-deadline', '--allow-short-deadline', [CompletionResultType]::ParameterName, 'With --deadline shorter than some pods'' grace period: yes, delete those pods as soon as an eviction is refused (otherwise the drain refuses before any change)')
            [CompletionResult]::new('--by-zone', '--by-zone', [CompletionResultType]::ParameterName, 'Finish the nodes of one zone (topology.kubernetes.io/zone) before starting the next zone''s')
            [CompletionResult]::new('--ignore-markers', '--ignore-markers', [CompletionResultType]::ParameterName, 'Ignore pods'' drain markers (cluster.x-k8s.io/drain, karpenter.sh/do-not-disrupt) and drain those pods as kubectl drain does')
            [CompletionResult]::new('--all-or-nothing', '--all-or-nothing', [CompletionResultType]::ParameterName, 'If kubectl''s filters refuse a pod on any selected node, change nothing (kubectl cordons every node and drains the others)')
            [CompletionResult]::new('--simulate', '--simulate', [CompletionResultType]::ParameterName, 'Predict the drain by running it on an in-process copy of the cluster, on a simulated clock, and read the cluster only; with drain, show the prediction before draining (docs/usage.md)')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Do not ask for confirmation')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do not ask for confirmation')
            [CompletionResult]::new('--exclude-from-load-balancers', '--exclude-from-load-balancers', [CompletionResultType]::ParameterName, 'Label the node node.kubernetes.io/exclude-from-external-load-balancers at cordon, taking it out of cloud load balancers; uncordon removes the label (unless it was there before)')
            [CompletionResult]::new('--allow-no-schedulable-nodes', '--allow-no-schedulable-nodes', [CompletionResultType]::ParameterName, 'Accepted for scripts written for v0.1.0; a drain no longer refuses these cases')
            [CompletionResult]::new('--allow-quorum-loss', '--allow-quorum-loss', [CompletionResultType]::ParameterName, 'Accepted for scripts written for v0.1.0; a drain does not check etcd quorum')
            [CompletionResult]::new('--wait-for-reboot', '--wait-for-reboot', [CompletionResultType]::ParameterName, 'After --exec (or for an external actor), wait until the node reboots (NotReady, or a new boot ID) before waiting for Ready')
            [CompletionResult]::new('--wait-for-budgets', '--wait-for-budgets', [CompletionResultType]::ParameterName, 'After uncordoning, wait until every PodDisruptionBudget of the evicted pods has all its pods healthy (at most --ready-timeout)')
            [CompletionResult]::new('--fresh', '--fresh', [CompletionResultType]::ParameterName, 'Start the roll over, ignoring what an earlier run of the same command recorded')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-maintain;uncordon' {
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Select the nodes by label instead of naming them')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Select the nodes by label instead of naming them')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'The address and port of the Kubernetes API server')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The address and port of the Kubernetes API server')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token for authentication to the API server')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'Path to a cert file for the certificate authority')
            [CompletionResult]::new('--client-certificate', '--client-certificate', [CompletionResultType]::ParameterName, 'Path to a client certificate file for TLS')
            [CompletionResult]::new('--client-key', '--client-key', [CompletionResultType]::ParameterName, 'Path to a client key file for TLS')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not check the server''s certificate (insecure)')
            [CompletionResult]::new('--tls-server-name', '--tls-server-name', [CompletionResultType]::ParameterName, 'Server name to use for server certificate validation')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--as-uid', '--as-uid', [CompletionResultType]::ParameterName, 'UID to impersonate for the operation')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a single request before giving up (e.g. 30s; 0: no limit)')
            [CompletionResult]::new('--disable-compression', '--disable-compression', [CompletionResultType]::ParameterName, 'Do not ask the server for compressed responses')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Accepted as kubectl accepts it; a drain works across namespaces')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Accepted as kubectl accepts it; a drain works across namespaces')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'kubectl''s log level; accepted, the drain''s own lines do not change')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'kubectl''s log level; accepted, the drain''s own lines do not change')
            [CompletionResult]::new('--cache-dir', '--cache-dir', [CompletionResultType]::ParameterName, 'kubectl''s discovery cache; accepted (the drain caches nothing)')
            [CompletionResult]::new('--match-server-version', '--match-server-version', [CompletionResultType]::ParameterName, 'Accepted as kubectl accepts it')
            [CompletionResult]::new('--warnings-as-errors', '--warnings-as-errors', [CompletionResultType]::ParameterName, 'Accepted as kubectl accepts it')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-maintain;status' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: KUBECONFIG, then ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'The address and port of the Kubernetes API server')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The address and port of the Kubernetes API server')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token for authentication to the API server')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'Path to a cert file for the certificate authority')
            [CompletionResult]::new('--client-certificate', '--client-certificate', [CompletionResultType]::ParameterName, 'Path to a client certificate file for TLS')
            [CompletionResult]::new('--client-key', '--client-key', [CompletionResultType]::ParameterName, 'Path to a client key file for TLS')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not check the server''s certificate (insecure)')
            [CompletionResult]::new('--tls-server-name', '--tls-server-name', [CompletionResultType]::ParameterName, 'Server name to use for server certificate validation')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable)')
            [CompletionResult]::new('--as-uid', '--as-uid', [CompletionResultType]::ParameterName, 'UID to impersonate for the operation')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'How long to wait for a single request before giving up (e.g. 30s; 0: no limit)')
            [CompletionResult]::new('--disable-compression', '--disable-compression', [CompletionResultType]::ParameterName, 'Do not ask the server for compressed responses')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Accepted as kubectl accepts it; a drain works across namespaces')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Accepted as kubectl accepts it; a drain works across namespaces')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'kubectl''s log level; accepted, the drain''s own lines do not change')
            [CompletionResult]::new('--v', '--v', [CompletionResultType]::ParameterName, 'kubectl''s log level; accepted, the drain''s own lines do not change')
            [CompletionResult]::new('--cache-dir', '--cache-dir', [CompletionResultType]::ParameterName, 'kubectl''s discovery cache; accepted (the drain caches nothing)')
            [CompletionResult]::new('--match-server-version', '--match-server-version', [CompletionResultType]::ParameterName, 'Accepted as kubectl accepts it')
            [CompletionResult]::new('--warnings-as-errors', '--warnings-as-errors', [CompletionResultType]::ParameterName, 'Accepted as kubectl accepts it')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-maintain;demo' {
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Give up on the blocked pods after this long')
            [CompletionResult]::new('--keep-running', '--keep-running', [CompletionResultType]::ParameterName, 'Keep the sandbox serving after the drain, to look around with kubectl')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-maintain;completion' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-maintain;sandbox' {
            [CompletionResult]::new('--scenario', '--scenario', [CompletionResultType]::ParameterName, 'Scenario file: Kubernetes objects as YAML (several documents or a v1 List)')
            [CompletionResult]::new('--synthetic-nodes', '--synthetic-nodes', [CompletionResultType]::ParameterName, 'Generate a synthetic cluster of this many nodes instead of reading a scenario')
            [CompletionResult]::new('--pods-per-node', '--pods-per-node', [CompletionResultType]::ParameterName, 'Pods per node of the synthetic cluster (its DaemonSet pod included)')
            [CompletionResult]::new('--listen', '--listen', [CompletionResultType]::ParameterName, 'Address to listen on; port 0 picks a free port')
            [CompletionResult]::new('--kubeconfig-out', '--kubeconfig-out', [CompletionResultType]::ParameterName, 'Write a kubeconfig pointing at the sandbox here once it is ready')
            [CompletionResult]::new('--request-log', '--request-log', [CompletionResultType]::ParameterName, 'Log every request as one JSON object per line to this file')
            [CompletionResult]::new('--kube-version', '--kube-version', [CompletionResultType]::ParameterName, 'Kubernetes version served at /version (major.minor)')
            [CompletionResult]::new('--watch-history', '--watch-history', [CompletionResultType]::ParameterName, 'Changes a watch can resume from before it gets 410 Expired')
            [CompletionResult]::new('--fault-500', '--fault-500', [CompletionResultType]::ParameterName, 'Share of resource requests answered 500 (0 to 1)')
            [CompletionResult]::new('--fault-503', '--fault-503', [CompletionResultType]::ParameterName, 'Share of resource requests answered 503 with Retry-After (0 to 1)')
            [CompletionResult]::new('--fault-429', '--fault-429', [CompletionResultType]::ParameterName, 'Share of resource requests answered 429 TooManyRequests (0 to 1)')
            [CompletionResult]::new('--latency-ms', '--latency-ms', [CompletionResultType]::ParameterName, 'Milliseconds added before every resource request is answered')
            [CompletionResult]::new('--watch-cut-after', '--watch-cut-after', [CompletionResultType]::ParameterName, 'Close every watch stream after this many events')
            [CompletionResult]::new('--fault-seed', '--fault-seed', [CompletionResultType]::ParameterName, 'Seed for the fault dice, to repeat a run')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kubectl-maintain;help' {
            [CompletionResult]::new('drain', 'drain', [CompletionResultType]::ParameterValue, 'Cordon nodes and evict their pods in priority waves (a drop-in for kubectl drain)')
            [CompletionResult]::new('plan', 'plan', [CompletionResultType]::ParameterValue, 'Show which pods each wave would evict, and what would be refused, without changing anything')
            [CompletionResult]::new('roll', 'roll', [CompletionResultType]::ParameterValue, 'Maintain a pool node by node: lock, drain, act (--exec, --wait-for-reboot), Ready, uncordon, next; resumable')
            [CompletionResult]::new('uncordon', 'uncordon', [CompletionResultType]::ParameterValue, 'Return nodes to service, undoing exactly what the drain changed')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'List the nodes under maintenance: since when, why, what is still on them')
            [CompletionResult]::new('demo', 'demo', [CompletionResultType]::ParameterValue, 'Drain a node of a simulated cluster, to see what kubectl maintain does')
            [CompletionResult]::new('completion', 'completion', [CompletionResultType]::ParameterValue, 'Print a shell completion script (bash, zsh, fish, powershell)')
            [CompletionResult]::new('sandbox', 'sandbox', [CompletionResultType]::ParameterValue, 'Serve a simulated cluster on loopback, for rehearsals and tests')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-maintain;help;drain' {
            break
        }
        'kubectl-maintain;help;plan' {
            break
        }
        'kubectl-maintain;help;roll' {
            break
        }
        'kubectl-maintain;help;uncordon' {
            break
        }
        'kubectl-maintain;help;status' {
            break
        }
        'kubectl-maintain;help;demo' {
            break
        }
        'kubectl-maintain;help;completion' {
            break
        }
        'kubectl-maintain;help;sandbox' {
            break
        }
        'kubectl-maintain;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
