//! What the disruption controller reads of each scalable workload (its
//! controller and `spec.replicas`) to count a budget's expected pods, as
//! kube-controller-manager's `getExpectedScale` reads them through the
//! scale subresource (pkg/controller/disruption/disruption.go): kept
//! beside the workload, which the store keeps as JSON (crate::stored), so
//! that a budget counted again after each change of its pods parses none.

use crate::objects::path::At;
use foldhash::HashMap;

use serde_json::Value;

use crate::objects::pods;
use crate::resources::Resource;
use crate::store::Key;

/// One workload's scale and controller.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scale {
    /// The controller's kind and name (a ReplicaSet's Deployment).
    pub(crate) controller: Option<(Box<str>, Box<str>)>,
    /// `spec.replicas`, 1 when unset (the apiserver's default).
    pub(crate) replicas: i32,
}

/// By kind, then key: a lookup borrows the caller's key.
#[derive(Default)]
pub(crate) struct Scales(HashMap<Resource, HashMap<Key, Scale>>);

impl Scales {
    pub(super) fn apply(&mut self, res: Resource, key: &Key, obj: &Value, add: bool) {
        let table = self.0.entry(res).or_default();
        if !add {
            table.remove(key);
            return;
        }
        let replicas = obj
            .at("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(1);
        let scale = Scale {
            controller: pods::controller_of(obj).map(|o| (o.kind.into(), o.name.into())),
            replicas: i32::try_from(replicas).unwrap_or(i32::MAX),
        };
        table.insert(key.clone(), scale);
    }

    /// One workload's scale, if it is stored.
    pub(crate) fn of(&self, res: Resource, key: &Key) -> Option<&Scale> {
        self.0.get(&res)?.get(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_workload_is_read_for_its_replicas_and_controller_and_forgotten() {
        let mut s = Scales::default();
        let key = ("ns".to_string(), "rs".to_string());
        let rs = json!({"metadata": {"ownerReferences": [
            {"kind": "Deployment", "name": "d", "uid": "u", "controller": true}]},
            "spec": {"replicas": 3}});
        s.apply(Resource::ReplicaSets, &key, &rs, true);
        let got = s.of(Resource::ReplicaSets, &key).cloned();
        assert_eq!(
            got,
            Some(Scale {
                controller: Some(("Deployment".into(), "d".into())),
                replicas: 3
            })
        );
        assert_eq!(s.of(Resource::Deployments, &key), None);
        s.apply(Resource::ReplicaSets, &key, &json!({"spec": {}}), true);
        assert_eq!(
            s.of(Resource::ReplicaSets, &key).map(|s| s.replicas),
            Some(1)
        );
        s.apply(Resource::ReplicaSets, &key, &rs, false);
        assert_eq!(s.of(Resource::ReplicaSets, &key), None);
    }
}
