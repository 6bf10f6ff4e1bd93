//! What the operator knows better than the pod specs: `--assume-shutdown`
//! and `--assume-ready` set every pod's and every pod template's simulated
//! times (the sandbox's knobs, docs/sandbox.md), overriding what the specs'
//! preStop hooks and readiness probes would give.

use std::time::Duration;

use kube_sandbox::config::{READY_SECONDS, SHUTDOWN_SECONDS};
use kube_sandbox::resources::Resource;
use serde_json::{Value, json};

/// The times to impose, if any.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Assumptions {
    pub(crate) shutdown: Option<Duration>,
    pub(crate) ready: Option<Duration>,
}

impl Assumptions {
    /// Sets the knobs on pods and on the templates their controllers copy.
    pub(crate) fn apply(self, objects: &mut [(Resource, Value)]) {
        if self.shutdown.is_none() && self.ready.is_none() {
            return;
        }
        for (res, obj) in objects.iter_mut() {
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
            for (key, value) in [
                (SHUTDOWN_SECONDS, self.shutdown),
                (READY_SECONDS, self.ready),
            ] {
                if let Some(d) = value {
                    annotations[key] = json!(d.as_secs_f64().to_string());
                }
            }
        }
    }
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
