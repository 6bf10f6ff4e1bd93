//! InterPodAffinity, required terms (kubernetes pkg/scheduler/framework/
//! plugins/interpodaffinity/filtering.go): in the node's domain for each
//! term's `topologyKey`, the pod's affinity terms must each find a matching
//! pod (unless no pod matches them anywhere and the pod matches them
//! itself: the first of a group), its anti-affinity terms must find none,
//! and no pod already there may have an anti-affinity term that matches
//! this pod. A term selects pods by `labelSelector` in `namespaces` and the
//! namespaces `namespaceSelector` matches (the pod's own namespace when
//! neither is given).

use crate::objects::path::At;
use std::collections::{BTreeMap, HashMap, HashSet};

use kube_conventions::selector::{Selector, labels_of};
use serde_json::Value;

use super::label;
use crate::objects::pods;
use crate::resources::Resource;
use crate::store::Store;

pub(super) const AFFINITY: &str = "node(s) didn't match pod affinity rules";
pub(super) const ANTI_AFFINITY: &str = "node(s) didn't match pod anti-affinity rules";
pub(super) const EXISTING: &str = "node(s) didn't satisfy existing pods anti-affinity rules";

struct Term {
    selector: Selector,
    namespaces: HashSet<String>,
    namespace_selector: Option<Selector>,
    key: String,
}

impl Term {
    fn parse(t: &Value, own_namespace: &str) -> Term {
        let mut namespaces: HashSet<String> = t["namespaces"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|n| n.as_str().map(str::to_string))
            .collect();
        let namespace_selector = t
            .get("namespaceSelector")
            .filter(|v| !v.is_null())
            .map(|v| Selector::from_label_selector(Some(v)).unwrap_or(Selector::Nothing));
        if namespaces.is_empty() && namespace_selector.is_none() {
            namespaces.insert(own_namespace.to_string());
        }
        Term {
            selector: Selector::from_label_selector(t.get("labelSelector"))
                .unwrap_or(Selector::Nothing),
            namespaces,
            namespace_selector,
            key: t["topologyKey"].as_str().unwrap_or_default().to_string(),
        }
    }

    fn matches(
        &self,
        pod: &pods::Facts,
        namespace_labels: &impl Fn(&str) -> BTreeMap<String, String>,
    ) -> bool {
        let ns = &*pod.namespace;
        let in_namespace = self.namespaces.contains(ns)
            || self
                .namespace_selector
                .as_ref()
                .is_some_and(|s| s.matches(&namespace_labels(ns)));
        in_namespace && pod.matches(&self.selector)
    }
}

fn terms(pod: &Value, kind: &str) -> Vec<Term> {
    let ns = pod["metadata"]["namespace"].as_str().unwrap_or_default();
    pod.at(&format!(
        "/spec/affinity/{kind}/requiredDuringSchedulingIgnoredDuringExecution"
    ))
    .and_then(Value::as_array)
    .into_iter()
    .flatten()
    .map(|t| Term::parse(t, ns))
    .collect()
}

#[derive(Default)]
pub(super) struct State {
    affinity: Vec<Term>,
    anti: Vec<Term>,
    /// (term, domain) with at least one matching pod, per kind.
    affinity_found: HashSet<(usize, String)>,
    anti_found: HashSet<(usize, String)>,
    /// The first pod of a group: no pod matches its affinity terms, and it
    /// matches them itself.
    first_of_group: bool,
    /// (topologyKey, value) domains where an existing pod's anti-affinity
    /// refuses this pod.
    refused: HashSet<(String, String)>,
}

/// Finds the matching pods' domains once (the plugin's PreFilter).
pub(super) fn prefilter(store: &Store, pod: &Value) -> State {
    let namespace_labels = |ns: &str| {
        store
            .get(Resource::Namespaces, &(String::new(), ns.to_string()))
            .map(|n| labels_of(&n))
            .unwrap_or_default()
    };
    let mut node_labels: HashMap<String, Option<std::sync::Arc<Value>>> = HashMap::new();
    let mut node_of = |name: &str| {
        node_labels
            .entry(name.to_string())
            .or_insert_with(|| store.get(Resource::Nodes, &(String::new(), name.to_string())))
            .clone()
    };
    let own = pods::Facts::of(pod);
    let mut state = State {
        affinity: terms(pod, "podAffinity"),
        anti: terms(pod, "podAntiAffinity"),
        ..State::default()
    };
    for key in store.anti_affine_pods() {
        let Some(existing) = store.get(Resource::Pods, key) else {
            continue;
        };
        let Some(node) = pods::node_name(&existing).and_then(&mut node_of) else {
            continue;
        };
        for t in terms(&existing, "podAntiAffinity") {
            if t.matches(&own, &namespace_labels)
                && let Some(v) = label(&node, &t.key)
            {
                state.refused.insert((t.key.clone(), v.to_string()));
            }
        }
    }
    if state.affinity.is_empty() && state.anti.is_empty() {
        return state;
    }
    for (_, other) in store.pod_facts(None) {
        if other.terminal {
            continue;
        }
        let Some(node) = other.node.as_deref().and_then(&mut node_of) else {
            continue;
        };
        for (found, list) in [
            (&mut state.affinity_found, &state.affinity),
            (&mut state.anti_found, &state.anti),
        ] {
            for (i, t) in list.iter().enumerate() {
                if t.matches(other, &namespace_labels)
                    && let Some(v) = label(&node, &t.key)
                {
                    found.insert((i, v.to_string()));
                }
            }
        }
    }
    state.first_of_group = state.affinity_found.is_empty()
        && state
            .affinity
            .iter()
            .all(|t| t.matches(&own, &namespace_labels));
    state
}

pub(super) fn filter(state: &State, node: &Value) -> Result<(), String> {
    let domain = |t: &Term| label(node, &t.key).map(str::to_string);
    let affinity_met = state.first_of_group
        || state
            .affinity
            .iter()
            .enumerate()
            .all(|(i, t)| domain(t).is_some_and(|v| state.affinity_found.contains(&(i, v))));
    if !affinity_met {
        return Err(AFFINITY.into());
    }
    let anti_hit = state
        .anti
        .iter()
        .enumerate()
        .any(|(i, t)| domain(t).is_some_and(|v| state.anti_found.contains(&(i, v))));
    if anti_hit {
        return Err(ANTI_AFFINITY.into());
    }
    let refused = state
        .refused
        .iter()
        .any(|(k, v)| label(node, k) == Some(v.as_str()));
    if refused {
        return Err(EXISTING.into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use serde_json::json;

    fn node(name: &str, zone: &str) -> Value {
        json!({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "zone": zone}}})
    }

    fn pod(name: &str, node: Option<&str>, app: &str, anti_key: Option<&str>) -> Value {
        let mut p = json!({"metadata": {"name": name, "namespace": "apps", "labels": {"app": app}}, "spec": {"containers": [{"name": "c"}]}});
        if let Some(n) = node {
            p["spec"]["nodeName"] = json!(n);
        }
        if let Some(key) = anti_key {
            p["spec"]["affinity"] = json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}]}});
        }
        p
    }

    fn store(objects: &[(Resource, Value)]) -> Store {
        let mut s = Store::new(100);
        for (r, o) in objects {
            s.load(*r, o.clone()).unwrap();
        }
        s
    }

    #[test]
    fn anti_affine_replicas_keep_apart_both_ways() {
        let s = store(&[
            (Resource::Nodes, node("n1", "a")),
            (Resource::Nodes, node("n2", "a")),
            (Resource::Nodes, node("n3", "b")),
            (
                Resource::Pods,
                pod("web-1", Some("n1"), "web", Some("kubernetes.io/hostname")),
            ),
            (Resource::Pods, pod("db-1", Some("n2"), "db", Some("zone"))),
        ]);
        // The new web replica's own term keeps it off n1.
        let web = pod("web-2", None, "web", Some("kubernetes.io/hostname"));
        let state = prefilter(&s, &web);
        assert_eq!(filter(&state, &node("n1", "a")), Err(ANTI_AFFINITY.into()));
        assert_eq!(filter(&state, &node("n2", "a")), Ok(()));
        // db-1's term (zone) refuses another db pod anywhere in zone a,
        // even one without terms of its own.
        let db = pod("db-2", None, "db", None);
        let state = prefilter(&s, &db);
        assert_eq!(filter(&state, &node("n1", "a")), Err(EXISTING.into()));
        assert_eq!(filter(&state, &node("n3", "b")), Ok(()));
    }

    #[test]
    fn affinity_needs_a_matching_pod_in_the_domain_unless_first_of_its_group() {
        let s = store(&[
            (Resource::Nodes, node("n1", "a")),
            (Resource::Nodes, node("n3", "b")),
            (Resource::Pods, pod("cache-1", Some("n1"), "cache", None)),
        ]);
        let mut web = pod("web-1", None, "web", None);
        web["spec"]["affinity"] = json!({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": "zone"}]}});
        let state = prefilter(&s, &web);
        assert_eq!(filter(&state, &node("n1", "a")), Ok(()));
        assert_eq!(filter(&state, &node("n3", "b")), Err(AFFINITY.into()));
        // Affinity to its own group with no member yet: anywhere.
        let mut first = pod("batch-1", None, "batch", None);
        first["spec"]["affinity"] = json!({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "batch"}}, "topologyKey": "zone"}]}});
        let state = prefilter(&s, &first);
        assert_eq!(filter(&state, &node("n3", "b")), Ok(()));
    }
}
