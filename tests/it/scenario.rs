//! Scenarios built from typed pieces instead of YAML assembled with
//! `format!`: nodes, Deployments, budgets and pods, with the sandbox's
//! timing knobs set so that tests run fast.

use serde_json::{Value, json};

use crate::harness::Cluster;

const READY: &str = "sandbox.kubectl-maintain.io/ready-seconds";
const SHUTDOWN: &str = "sandbox.kubectl-maintain.io/shutdown-seconds";
const COMPLETE_AFTER: &str = "sandbox.kubectl-maintain.io/complete-after-seconds";

/// Objects a sandbox starts with.
#[derive(Default)]
pub(crate) struct Scenario {
    objects: Vec<Value>,
    /// Fixed YAML documents (constants shared by tests).
    raw: Vec<&'static str>,
}

impl Scenario {
    pub(crate) fn new() -> Self {
        Scenario::default()
    }

    /// Fixed YAML documents, appended as they are.
    pub(crate) fn raw(mut self, yaml: &'static str) -> Self {
        self.raw.push(yaml);
        self
    }

    /// Any object, as JSON.
    pub(crate) fn object(mut self, object: Value) -> Self {
        self.objects.push(object);
        self
    }

    pub(crate) fn node(self, name: &str) -> Self {
        self.labelled_node(name, &[])
    }

    pub(crate) fn labelled_node(self, name: &str, labels: &[(&str, &str)]) -> Self {
        let labels: serde_json::Map<String, Value> = labels
            .iter()
            .map(|(k, v)| ((*k).to_string(), json!(v)))
            .collect();
        self.object(json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels},
        }))
    }

    /// A node that takes no new pods until a test uncordons it.
    pub(crate) fn cordoned_node(self, name: &str) -> Self {
        self.object(json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name},
            "spec": {"unschedulable": true},
        }))
    }

    /// A Deployment in namespace `apps` whose pods carry `app: NAME`, are
    /// Ready in 0.4 s and stop in 0.3 s.
    pub(crate) fn deployment(self, name: &str, replicas: u32) -> Self {
        self.deployment_with(name, replicas, |_| {})
    }

    /// A Deployment as `deployment` makes it, changed by `tweak` (which gets
    /// the whole object).
    pub(crate) fn deployment_with(
        self,
        name: &str,
        replicas: u32,
        tweak: impl FnOnce(&mut Value),
    ) -> Self {
        let mut d = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "apps"},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {
                        "labels": {"app": name},
                        "annotations": {READY: "0.4", SHUTDOWN: "0.3"},
                    },
                    "spec": {"containers": [{"name": "c", "image": "app"}]},
                },
            },
        });
        tweak(&mut d);
        self.object(d)
    }

    /// A StatefulSet `db` of one in `apps` with a 10Gi claim of StorageClass
    /// `zonal` (a CSI provisioner binding on first consumer, added too),
    /// changed by `tweak` (which gets the StatefulSet).
    pub(crate) fn zonal_db(self, tweak: impl FnOnce(&mut Value)) -> Self {
        let mut db = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "db", "namespace": "apps"},
            "spec": {"replicas": 1, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                "template": {"metadata": {"labels": {"app": "db"},
                    "annotations": {READY: "0.2", SHUTDOWN: "0.2"}},
                    "spec": {"containers": [{"name": "c", "image": "db"}]}},
                "volumeClaimTemplates": [{"metadata": {"name": "data"},
                    "spec": {"storageClassName": "zonal", "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "10Gi"}}}}]}});
        tweak(&mut db);
        self.object(
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "zonal"}, "provisioner": "disk.csi.example",
            "volumeBindingMode": "WaitForFirstConsumer"}),
        )
        .object(db)
    }

    /// A PodDisruptionBudget in `apps` over `app: APP`'s pods; `rule` is
    /// its YAML, such as `maxUnavailable: 1`.
    pub(crate) fn pdb(self, app: &str, rule: &str) -> Self {
        let rule: Value = serde_saphyr::from_str(rule).expect("a PDB rule in YAML");
        let mut spec = json!({"selector": {"matchLabels": {"app": app}}});
        for (k, v) in rule.as_object().expect("a mapping") {
            spec[k] = v.clone();
        }
        self.object(json!({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": app, "namespace": "apps"},
            "spec": spec,
        }))
    }

    /// A pod bound to `node`, Ready at once; `tweak` changes the object.
    pub(crate) fn pod(
        self,
        namespace: &str,
        name: &str,
        node: &str,
        tweak: impl FnOnce(&mut Value),
    ) -> Self {
        let mut p = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "annotations": {READY: "0"}},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x"}]},
        });
        tweak(&mut p);
        self.object(p)
    }

    /// Two nodes as kubectl's filters see them: `n1` refused for its bare
    /// pod, `n2` drained of a pod a controller owns (`seconds` to stop),
    /// and a cordoned `spare` that takes nothing.
    pub(crate) fn one_refused_one_drainable(seconds: f64) -> Self {
        Scenario::new()
            .node("n1")
            .node("n2")
            .cordoned_node("spare")
            .pod("default", "bare", "n1", |_| {})
            .pod("apps", "owned", "n2", |p| {
                owned_by_a_gone_replicaset(p, seconds);
            })
    }

    /// The scenario as the sandbox reads it (JSON documents are YAML).
    pub(crate) fn yaml(&self) -> String {
        self.objects
            .iter()
            .map(Value::to_string)
            .chain(
                self.raw
                    .iter()
                    .map(|r| r.trim_start().trim_start_matches("---").to_string()),
            )
            .collect::<Vec<_>>()
            .join("\n---\n")
    }

    /// A sandbox serving this scenario as Kubernetes `1.<minor>`.
    pub(crate) fn start(&self, minor: u32) -> Cluster {
        Cluster::start(&self.yaml(), minor)
    }
}

/// Sets a pod's (or a pod template's) shutdown time.
pub(crate) fn shutdown(pod: &mut Value, seconds: f64) {
    pod["metadata"]["annotations"][SHUTDOWN] = json!(seconds.to_string());
}

/// Makes a pod one a controller owns (a ReplicaSet already gone), so
/// kubectl's filters evict it, and gives it `seconds` to stop: the node it
/// is on drains, beside one a bare pod refuses.
pub(crate) fn owned_by_a_gone_replicaset(pod: &mut Value, seconds: f64) {
    pod["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1",
        "kind": "ReplicaSet", "name": "gone", "uid": "1", "controller": true}]);
    shutdown(pod, seconds);
}

/// Makes a pod complete by itself after `seconds` of running.
pub(crate) fn completes_after(pod: &mut Value, seconds: f64) {
    pod["metadata"]["annotations"][COMPLETE_AFTER] = json!(seconds.to_string());
    pod["spec"]["restartPolicy"] = json!("Never");
}

/// kured's DaemonSet (its reboot lock is an annotation on it).
pub(crate) fn kured() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "kured", "namespace": "kube-system"},
        "spec": {"selector": {"matchLabels": {"name": "kured"}},
            "template": {"metadata": {"labels": {"name": "kured"}},
                "spec": {"containers": [{"name": "kured", "image": "kured"}]}}},
    })
}

/// A Deployment's pod template.
pub(crate) fn template(deployment: &mut Value) -> &mut Value {
    &mut deployment["spec"]["template"]
}
