//! The permissions a run in the cluster gets: exactly the verbs and
//! resources the requests of this run's flags make, each with why, so that
//! the roles the Job runs under hold nothing more: what is read or written
//! in one namespace only (the heartbeat leases in kube-node-lease, the
//! roll's locks in `--lock-namespace`, renewed by name, the nodes' Events
//! in `default`, kured's DaemonSet, its own Job) is a Role there, the rest
//! a ClusterRole. Pure: the flags in, the rules out;
//! crate::in_cluster::render writes them.
//!
//! The requests behind each rule, by module: the node list, cordon and
//! conditions (drain/discover.rs, drain/cordon.rs, publish/conditions.rs),
//! pod lists and the pod watch (drain/engine.rs, drain/driver.rs), evictions
//! or deletions (drain/evict/evictor.rs), DaemonSets for `--ignore-daemonsets`
//! (drain/discover.rs), budgets (drain/budgets/), the heartbeat leases of a
//! node that is not Ready (drain/heartbeat.rs), volumes (drain/detach.rs,
//! drain/dead_node.rs), KubeVirt's VMIs (drain/evict/kubevirt.rs), Events
//! (publish/node_events.rs), `--surge` (drain/surge.rs), a roll's locks and
//! node watch (roll/lease.rs, pool/node_watch.rs), kured's lock (roll/kured.rs).

/// One rule of the ClusterRole, and why the run needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rule {
    pub(crate) api_group: &'static str,
    pub(crate) resources: Vec<&'static str>,
    pub(crate) verbs: Vec<&'static str>,
    /// Only these objects, when the run names them.
    pub(crate) resource_names: Vec<String>,
    /// Only in this namespace (a Role), or everywhere (a ClusterRole).
    pub(crate) namespace: Option<String>,
    pub(crate) why: &'static str,
}

/// What the run's flags ask of the API.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Needs {
    /// A roll (locks, a node watch), not a drain.
    pub(crate) roll: bool,
    /// `--disable-eviction` or `--deadline`: pods are deleted.
    pub(crate) deletes_pods: bool,
    /// `--disable-eviction` alone: no eviction is ever asked.
    pub(crate) no_evictions: bool,
    /// `--eviction-api` auto or request: pods may be evicted through
    /// Kubernetes 1.37's EvictionRequests.
    pub(crate) eviction_requests: bool,
    pub(crate) surge: bool,
    /// `--surge`'s Deployments (namespace, name): those whose pods were on
    /// the run's nodes when it was submitted. `None` when unknown
    /// (`--render` asks the cluster nothing): any Deployment.
    pub(crate) surge_deployments: Option<Vec<(String, String)>>,
    /// `--node-conditions` (the default).
    pub(crate) node_conditions: bool,
    /// Not `--skip-wait-for-detach`.
    pub(crate) waits_for_detach: bool,
    /// The plan selects pods by namespace labels.
    pub(crate) namespace_selectors: bool,
    /// A roll's `--kured-daemonset` (namespace, name), when that
    /// DaemonSet exists.
    pub(crate) kured: Option<(String, String)>,
    /// A roll's `--lock-namespace`.
    pub(crate) lock_namespace: Option<String>,
    /// The nodes whose locks the roll reads and renews, when known (named,
    /// or selected when the run was submitted); `None` (`--render` of a
    /// selector asks the cluster nothing): any Lease of the namespace.
    pub(crate) lock_nodes: Option<Vec<String>>,
}

fn rule(
    api_group: &'static str,
    resources: &[&'static str],
    verbs: &[&'static str],
    why: &'static str,
) -> Rule {
    Rule {
        api_group,
        resources: resources.to_vec(),
        verbs: verbs.to_vec(),
        resource_names: Vec::new(),
        namespace: None,
        why,
    }
}

/// The rule in one namespace only.
fn within(namespace: &str, r: Rule) -> Rule {
    Rule {
        namespace: Some(namespace.to_string()),
        ..r
    }
}

/// A run reads its own Job before it takes each node: `kubectl maintain
/// abort` asks it there to stop after the nodes in progress.
pub(crate) fn own_job(namespace: &str, name: &str) -> Rule {
    Rule {
        resource_names: vec![name.to_string()],
        namespace: Some(namespace.to_string()),
        ..rule(
            "batch",
            &["jobs"],
            &["get"],
            "read its own Job before each node, where `kubectl maintain abort` asks it to stop",
        )
    }
}

/// `--surge`: a Deployment is read and patched only when it is one of
/// `deployments`, each as a Role in its namespace naming it; the list
/// (to find a surge a dead run left) and the ReplicaSets and autoscalers
/// read on the way stay cluster-wide, read-only.
fn surge(deployments: Option<&[(String, String)]>) -> Vec<Rule> {
    let change = || {
        rule(
            "apps",
            &["deployments"],
            &["get", "patch"],
            "--surge: scale a Deployment up by one, and back",
        )
    };
    let mut out = vec![
        rule(
            "apps",
            &["deployments"],
            &["list"],
            "--surge: find a surge a run that died left, to undo it",
        ),
        rule(
            "apps",
            &["replicasets"],
            &["get"],
            "--surge: find a pod's Deployment",
        ),
        rule(
            "autoscaling",
            &["horizontalpodautoscalers"],
            &["get"],
            "--surge: not past a HorizontalPodAutoscaler's maximum",
        ),
    ];
    let Some(deployments) = deployments else {
        out.push(change());
        return out;
    };
    let mut by_namespace = std::collections::BTreeMap::<&str, Vec<String>>::new();
    for (ns, name) in deployments {
        by_namespace.entry(ns).or_default().push(name.clone());
    }
    for (ns, mut names) in by_namespace {
        names.sort();
        names.dedup();
        let mut r = within(ns, change());
        r.resource_names = names;
        out.push(r);
    }
    out
}

/// A run that ends well deletes its own ClusterRole; the garbage
/// collector then removes what it owns (crate::in_cluster::retire).
pub(crate) fn own_cluster_role(name: &str) -> Rule {
    Rule {
        resource_names: vec![name.to_string()],
        ..rule(
            "rbac.authorization.k8s.io",
            &["clusterroles"],
            &["delete"],
            "delete its own ClusterRole when it ends, and with it its bindings",
        )
    }
}

/// The rules, in a stable order.
pub(crate) fn rules(n: &Needs) -> Vec<Rule> {
    let mut out = every_run();
    out.extend(by_flags(n));
    out
}

/// What every drain asks of the API.
fn every_run() -> Vec<Rule> {
    vec![
        rule(
            "",
            &["nodes"],
            &["get", "list", "watch", "patch"],
            "select, read and cordon the nodes (and put its taints on)",
        ),
        rule(
            "",
            &["pods"],
            &["get", "list", "watch"],
            "list each node's pods and watch them go",
        ),
        rule(
            "apps",
            &["daemonsets"],
            &["get"],
            "tell a DaemonSet pod from an orphan (--ignore-daemonsets)",
        ),
        rule(
            "policy",
            &["poddisruptionbudgets"],
            &["get", "list", "watch"],
            "read the budgets that refuse an eviction, and wait for them",
        ),
        within(
            "kube-node-lease",
            rule(
                "coordination.k8s.io",
                &["leases"],
                &["get"],
                "read a not-Ready node's heartbeat lease",
            ),
        ),
        // A cluster-scoped object's Events live in `default`
        // (publish/node_events.rs), as kubectl's and the kubelet's do.
        within(
            "default",
            rule(
                "",
                &["events"],
                &["create", "patch"],
                "record the maintenance as Events on the nodes",
            ),
        ),
        rule(
            "kubevirt.io",
            &["virtualmachineinstances"],
            &["get"],
            "follow a KubeVirt VM's evacuation",
        ),
        rule(
            "",
            &["persistentvolumeclaims"],
            &["get"],
            "the volumes a node waits for to detach, and those of a pod on a dead node",
        ),
    ]
}

/// What this run's flags add.
fn by_flags(n: &Needs) -> Vec<Rule> {
    let mut out = Vec::new();
    if !n.no_evictions {
        out.push(rule(
            "",
            &["pods/eviction"],
            &["create"],
            "evict the pods (budgets honoured)",
        ));
    }
    if n.deletes_pods {
        out.push(rule(
            "",
            &["pods"],
            &["delete"],
            "delete pods (--disable-eviction, --deadline)",
        ));
    }
    if n.eviction_requests {
        out.push(rule(
            "lifecycle.k8s.io",
            &["evictionrequests"],
            &["create", "get", "patch", "delete"],
            "ask for each pod's eviction, adopt a request left by a killed run, withdraw or remove it at the end (--eviction-api, Kubernetes 1.37)",
        ));
        out.push(rule(
            "lifecycle.k8s.io",
            &["evictions"],
            &["list"],
            "read which eviction responder holds a pod and what it says",
        ));
    }
    if n.node_conditions {
        out.push(rule(
            "",
            &["nodes/status"],
            &["patch"],
            "write the DrainInProgress and Drained node conditions",
        ));
    }
    if n.waits_for_detach {
        out.push(rule(
            "storage.k8s.io",
            &["volumeattachments"],
            &["list", "watch"],
            "wait for the evicted pods' volumes to detach",
        ));
        out.push(rule(
            "",
            &["persistentvolumes"],
            &["get"],
            "find the evicted pods' volumes in the nodes' status.volumesAttached",
        ));
    }
    if n.namespace_selectors {
        out.push(rule(
            "",
            &["namespaces"],
            &["list"],
            "the plan's namespace selectors",
        ));
    }
    if n.surge {
        out.extend(surge(n.surge_deployments.as_deref()));
    }
    if let Some(ns) = &n.lock_namespace {
        out.extend(locks(ns, n.lock_nodes.as_deref()));
    }
    if let Some((ns, name)) = &n.kured {
        let mut r = within(
            ns,
            rule(
                "apps",
                &["daemonsets"],
                &["update"],
                "hold kured's reboot lock (--kured-daemonset), which exists",
            ),
        );
        r.resource_names = vec![name.clone()];
        out.push(r);
    }
    out
}

/// A roll's locks in `--lock-namespace`. RBAC cannot hold a create to a
/// name; what is read and renewed it can: the nodes' own locks, never the
/// control plane's leader-election Leases beside them in kube-system.
fn locks(ns: &str, nodes: Option<&[String]>) -> Vec<Rule> {
    let mut out = vec![within(
        ns,
        rule(
            "coordination.k8s.io",
            &["leases"],
            &["create"],
            "take a node's lock, one Lease per node (--lock-namespace)",
        ),
    )];
    let mut held = within(
        ns,
        rule(
            "coordination.k8s.io",
            &["leases"],
            &["get", "update"],
            "read, renew and release the nodes' locks and their records",
        ),
    );
    match nodes {
        Some([]) => {}
        Some(nodes) => {
            held.resource_names = nodes.iter().map(|n| crate::roll::lease::name(n)).collect();
            out.push(held);
        }
        None => out.push(held),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allows(rules: &[Rule], group: &str, resource: &str, verb: &str) -> bool {
        rules.iter().any(|r| {
            r.api_group == group && r.resources.contains(&resource) && r.verbs.contains(&verb)
        })
    }

    #[test]
    fn a_drain_needs_less_than_a_roll_with_surge() {
        let drain = rules(&Needs {
            node_conditions: true,
            waits_for_detach: true,
            ..Needs::default()
        });
        let roll = rules(&Needs {
            roll: true,
            lock_namespace: Some("kube-system".into()),
            surge: true,
            node_conditions: true,
            waits_for_detach: true,
            ..Needs::default()
        });
        assert!(allows(&drain, "", "pods/eviction", "create"));
        assert!(!allows(&drain, "coordination.k8s.io", "leases", "create"));
        assert!(!allows(&drain, "apps", "deployments", "patch"));
        assert!(allows(&roll, "coordination.k8s.io", "leases", "create"));
        assert!(allows(&roll, "apps", "deployments", "patch"));
        assert!(drain.len() < roll.len());
        // The locks in their namespace only, the heartbeats in theirs.
        let lock = roll
            .iter()
            .find(|r| r.resources == ["leases"] && r.verbs.contains(&"create"))
            .unwrap();
        assert_eq!(lock.namespace.as_deref(), Some("kube-system"));
        assert!(
            roll.iter()
                .filter(|r| r.resources.contains(&"leases"))
                .all(|r| r.namespace.is_some())
        );
        // Named locks only, where the nodes are known: never the control
        // plane's leader-election Leases beside them.
        let named = rules(&Needs {
            roll: true,
            lock_namespace: Some("kube-system".into()),
            lock_nodes: Some(vec!["n1".into(), "n2".into()]),
            ..Needs::default()
        });
        let update = named
            .iter()
            .find(|r| r.resources == ["leases"] && r.verbs.contains(&"update"))
            .unwrap();
        assert_eq!(
            update.resource_names,
            ["kubectl-maintain-n1", "kubectl-maintain-n2"]
        );
        // Events in `default` alone, where the nodes' Events go.
        let events = drain.iter().find(|r| r.resources == ["events"]).unwrap();
        assert_eq!(events.namespace.as_deref(), Some("default"));
        // kured's rule only when its DaemonSet exists, on it alone.
        assert!(!allows(&roll, "apps", "daemonsets", "update"));
        let kured = rules(&Needs {
            kured: Some(("kube-system".into(), "kured".into())),
            ..Needs::default()
        });
        let r = kured.iter().find(|r| r.verbs == ["update"]).unwrap();
        assert_eq!(
            (r.namespace.as_deref(), r.resource_names.as_slice()),
            (Some("kube-system"), ["kured".to_string()].as_slice())
        );
        // --surge patches the Deployments found, in their namespaces only.
        let found = rules(&Needs {
            surge: true,
            surge_deployments: Some(vec![
                ("shop".into(), "web".into()),
                ("shop".into(), "api".into()),
                ("db".into(), "pg".into()),
            ]),
            ..Needs::default()
        });
        let patches: Vec<(Option<&str>, &[String])> = found
            .iter()
            .filter(|r| r.resources == ["deployments"] && r.verbs.contains(&"patch"))
            .map(|r| (r.namespace.as_deref(), r.resource_names.as_slice()))
            .collect();
        assert_eq!(
            patches,
            [
                (Some("db"), ["pg".to_string()].as_slice()),
                (
                    Some("shop"),
                    ["api".to_string(), "web".to_string()].as_slice()
                ),
            ]
        );
        let none = rules(&Needs {
            surge: true,
            surge_deployments: Some(Vec::new()),
            ..Needs::default()
        });
        assert!(!allows(&none, "apps", "deployments", "patch"));
        // Nothing a drain has is missing from the roll.
        for r in &drain {
            assert!(roll.contains(r), "{r:?}");
        }
    }

    #[test]
    fn flags_that_change_no_request_change_no_rule() {
        let plain = rules(&Needs::default());
        let no_evictions = rules(&Needs {
            no_evictions: true,
            deletes_pods: true,
            ..Needs::default()
        });
        assert!(!allows(&no_evictions, "", "pods/eviction", "create"));
        assert!(!allows(
            &plain,
            "lifecycle.k8s.io",
            "evictionrequests",
            "create"
        ));
        let requests = rules(&Needs {
            eviction_requests: true,
            ..Needs::default()
        });
        assert!(allows(
            &requests,
            "lifecycle.k8s.io",
            "evictionrequests",
            "patch"
        ));
        assert!(allows(&requests, "lifecycle.k8s.io", "evictions", "list"));
        assert!(!allows(
            &requests,
            "lifecycle.k8s.io",
            "evictions",
            "create"
        ));
        assert!(allows(&no_evictions, "", "pods", "delete"));
        assert!(!allows(&plain, "", "pods", "delete"));
        assert!(!allows(&plain, "", "nodes/status", "patch"));
        assert!(!allows(
            &plain,
            "storage.k8s.io",
            "volumeattachments",
            "list"
        ));
    }
}
