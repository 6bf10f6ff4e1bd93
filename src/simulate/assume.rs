//! What the operator knows better than the pod specs: `--assume-shutdown`
//! and `--assume-ready` set every pod's and every pod template's simulated
//! times (the sandbox's knobs, docs/sandbox.md), overriding what the specs'
//! preStop hooks and readiness probes would give; `--assume-times FILE`
//! sets them per workload (crate::simulate::times_file), over both.

use std::collections::HashMap;
use std::time::Duration;

use kube_sandbox::config::{READY_SECONDS, SHUTDOWN_SECONDS};
use kube_sandbox::objects::pods;
use kube_sandbox::resources::Resource;
use serde_json::{Value, json};

use super::times_file::WorkloadTimes;

/// The times to impose, if any.
#[derive(Debug, Clone, Default)]
pub(crate) struct Assumptions {
    pub(crate) shutdown: Option<Duration>,
    pub(crate) ready: Option<Duration>,
    /// Per workload, over the two above; a later entry naming the same
    /// workload overrides the times it gives.
    pub(crate) workloads: Vec<WorkloadTimes>,
}

/// `(namespace, name)`.
pub(crate) type Name = (String, String);

impl Assumptions {
    /// The times for the pods of workload `kind` `namespace/name`, if any.
    fn for_workload(
        &self,
        namespace: &str,
        kind: &str,
        name: &str,
    ) -> (Option<Duration>, Option<Duration>) {
        let mut times = (self.shutdown, self.ready);
        for w in self
            .workloads
            .iter()
            .filter(|w| w.names(namespace, kind, name))
        {
            times = (w.shutdown.or(times.0), w.ready.or(times.1));
        }
        times
    }

    /// Sets the knobs on pods and on the templates their controllers copy.
    /// A pod's workload is its controller, or the Deployment that owns its
    /// ReplicaSet.
    pub(crate) fn apply(&self, objects: &mut [(Resource, Value)]) {
        self.apply_in_order(objects, &mut HashMap::new());
    }

    /// The same for objects that come in slices (pages), ReplicaSets before
    /// the pods they own: `deployment_of` remembers which Deployment owns
    /// each ReplicaSet seen so far.
    pub(crate) fn apply_in_order(
        &self,
        objects: &mut [(Resource, Value)],
        deployment_of: &mut HashMap<Name, String>,
    ) {
        if self.shutdown.is_none() && self.ready.is_none() && self.workloads.is_empty() {
            return;
        }
        deployment_of.extend(
            objects
                .iter()
                .filter(|(res, _)| *res == Resource::ReplicaSets)
                .filter_map(|(_, rs)| {
                    let owner = pods::controller_of(rs).filter(|o| o.kind == "Deployment")?;
                    Some((name_of(rs), owner.name))
                }),
        );
        let deployment_of = &*deployment_of;
        let workload = |res: Resource, obj: &Value| -> Option<(String, String)> {
            let own = |kind: &str| Some((kind.to_string(), name_of(obj).1));
            let (namespace, _) = name_of(obj);
            let via = |kind: String, name: String| match (
                kind.as_str(),
                deployment_of.get(&(namespace.clone(), name.clone())),
            ) {
                ("ReplicaSet", Some(d)) => ("Deployment".to_string(), d.clone()),
                _ => (kind, name),
            };
            match res {
                Resource::Pods => pods::controller_of(obj).map(|o| via(o.kind, o.name)),
                Resource::ReplicaSets => Some(via("ReplicaSet".into(), name_of(obj).1)),
                Resource::Deployments => own("Deployment"),
                Resource::StatefulSets => own("StatefulSet"),
                Resource::DaemonSets => own("DaemonSet"),
                Resource::Jobs => own("Job"),
                Resource::ReplicationControllers => own("ReplicationController"),
                _ => None,
            }
        };
        for (res, obj) in objects.iter_mut() {
            let (shutdown, ready) = match workload(*res, obj) {
                Some((kind, name)) => self.for_workload(&name_of(obj).0, &kind, &name),
                None => (self.shutdown, self.ready),
            };
            if shutdown.is_none() && ready.is_none() {
                continue;
            }
            let meta = match res {
                Resource::Pods => obj.get_mut("metadata"),
                Resource::Deployments
                | Resource::ReplicaSets
                | Resource::StatefulSets
                | Resource::DaemonSets
                | Resource::Jobs
                | Resource::ReplicationControllers => obj.pointer_mut("/spec/template/metadata"),
                _ => None,
            };
            let Some(meta) = meta.filter(|m| m.is_object()) else {
                continue;
            };
            let annotations = meta
                .as_object_mut()
                .expect("an object")
                .entry("annotations")
                .or_insert_with(|| json!({}));
            for (key, value) in [(SHUTDOWN_SECONDS, shutdown), (READY_SECONDS, ready)] {
                if let Some(d) = value {
                    annotations[key] = json!(d.as_secs_f64().to_string());
                }
            }
        }
    }
}

fn name_of(obj: &Value) -> Name {
    let meta = &obj["metadata"];
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    (text(&meta["namespace"]), text(&meta["name"]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pods_and_templates_get_the_assumed_times() {
        let mut objects = vec![
            (Resource::Pods, json!({"metadata": {"name": "p"}})),
            (
                Resource::Deployments,
                json!({"spec": {"template": {"metadata": {"annotations": {"a": "b"}}}}}),
            ),
            (Resource::Nodes, json!({"metadata": {"name": "n"}})),
        ];
        Assumptions {
            shutdown: Some(Duration::from_secs(20)),
            ready: Some(Duration::from_millis(1500)),
            workloads: Vec::new(),
        }
        .apply(&mut objects);
        assert_eq!(
            objects[0].1["metadata"]["annotations"][SHUTDOWN_SECONDS],
            "20"
        );
        let template = &objects[1].1["spec"]["template"]["metadata"]["annotations"];
        assert_eq!(template[READY_SECONDS], "1.5");
        assert_eq!(template["a"], "b");
        assert!(objects[2].1["metadata"].get("annotations").is_none());
    }
}

#[cfg(test)]
mod per_workload {
    use super::*;

    fn owned(kind: &str, name: &str, owner: Option<(&str, &str)>) -> Value {
        let mut v = json!({"metadata": {"namespace": "shop", "name": name}, "kind": kind,
            "spec": {"template": {"metadata": {}}}});
        if let Some((k, n)) = owner {
            v["metadata"]["ownerReferences"] =
                json!([{"kind": k, "name": n, "controller": true, "uid": "u"}]);
        }
        v
    }

    fn knob(obj: &Value, key: &str) -> Option<String> {
        let meta = obj
            .get("spec")
            .map_or(&obj["metadata"], |s| &s["template"]["metadata"]);
        let meta = if obj["kind"] == "Pod" {
            &obj["metadata"]
        } else {
            meta
        };
        meta["annotations"][key].as_str().map(str::to_string)
    }

    #[test]
    fn a_deployments_times_reach_its_replicasets_and_their_pods() {
        let pod = |name: &str, owner| {
            let mut p = owned("Pod", name, owner);
            p.as_object_mut().unwrap().remove("spec");
            p
        };
        let mut objects = vec![
            (Resource::Deployments, owned("Deployment", "web", None)),
            (
                Resource::ReplicaSets,
                owned("ReplicaSet", "web-1", Some(("Deployment", "web"))),
            ),
            (
                Resource::Pods,
                pod("web-1-a", Some(("ReplicaSet", "web-1"))),
            ),
            (Resource::StatefulSets, owned("StatefulSet", "db", None)),
            (Resource::Pods, pod("db-0", Some(("StatefulSet", "db")))),
            (Resource::Pods, pod("bare", None)),
        ];
        let entry = |workload: (&str, &str, &str), shutdown, ready| WorkloadTimes {
            namespace: Some(workload.0.into()),
            kind: Some(workload.1.into()),
            name: Some(workload.2.into()),
            shutdown,
            ready,
        };
        Assumptions {
            shutdown: Some(Duration::from_secs(5)),
            ready: None,
            workloads: vec![
                entry(
                    ("shop", "Deployment", "web"),
                    Some(Duration::from_secs(40)),
                    None,
                ),
                entry(
                    ("shop", "Deployment", "web"),
                    None,
                    Some(Duration::from_secs(90)),
                ),
            ],
        }
        .apply(&mut objects);
        let (web, others) = objects.split_at(3);
        for (res, obj) in web {
            assert_eq!(
                knob(obj, SHUTDOWN_SECONDS).as_deref(),
                Some("40"),
                "{res:?}"
            );
            assert_eq!(knob(obj, READY_SECONDS).as_deref(), Some("90"), "{res:?}");
        }
        for (res, obj) in others {
            assert_eq!(knob(obj, SHUTDOWN_SECONDS).as_deref(), Some("5"), "{res:?}");
            assert_eq!(knob(obj, READY_SECONDS), None, "{res:?}");
        }
    }
}
