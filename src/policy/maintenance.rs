//! The record a drain leaves on each node it cordons, so that `uncordon`
//! can undo exactly what the drain changed: whether the node was already
//! unschedulable, the maintenance taints it added, why and when. Pure:
//! these functions compute patches; the callers send them.

use k8s_openapi::api::core::v1::{Node, Taint};
use kube_conventions::selector::{validate_key, validate_value};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub const ANNOTATION: &str = "kubectl-maintain.io/maintenance";
/// The field manager our writes carry, so that `managedFields` tells our
/// cordon from a person's.
pub const FIELD_MANAGER: &str = "kubectl-maintain";
/// The node conditions of KEP-5683 ("Node Lifecycle Conditions") a drain
/// and a roll write (crate::publish::conditions).
pub const DRAIN_IN_PROGRESS: &str = "DrainInProgress";
pub const DRAINED: &str = "Drained";
pub const MAINTENANCE_PLANNED: &str = "MaintenancePlanned";
pub const MAINTENANCE_IN_PROGRESS: &str = "MaintenanceInProgress";
/// Takes a node out of cloud load balancers while present (the service
/// controller reads it; Karpenter sets it while draining).
pub const EXCLUDE_FROM_LOAD_BALANCERS: &str =
    "node.kubernetes.io/exclude-from-external-load-balancers";
/// cluster-autoscaler leaves a node alone while it carries this
/// annotation with "true" (its FAQ, "How can I prevent Cluster Autoscaler
/// from scaling down a particular node?").
pub const SCALE_DOWN_DISABLED: &str = "cluster-autoscaler.kubernetes.io/scale-down-disabled";
/// Karpenter does not disrupt (consolidate, expire, drift) a node that
/// carries this annotation with "true".
pub const DO_NOT_DISRUPT: &str = "karpenter.sh/do-not-disrupt";

/// Where on the node's metadata a mark goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum On {
    Label,
    Annotation,
}

impl On {
    fn field(self) -> &'static str {
        match self {
            On::Label => "labels",
            On::Annotation => "annotations",
        }
    }

    fn word(self) -> &'static str {
        match self {
            On::Label => "label",
            On::Annotation => "annotation",
        }
    }
}

/// A label or an annotation the node carries while under maintenance
/// (`--label-during`, `--protect-from-autoscalers`), whatever it carried
/// before: uncordon puts back exactly what was there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkSpec {
    pub on: On,
    pub key: String,
    pub value: String,
}

impl MarkSpec {
    /// `--label-during KEY=VALUE`, checked as a label (apimachinery's
    /// qualified name and label value).
    pub fn label(s: &str) -> Result<MarkSpec, String> {
        let Some((key, value)) = s.split_once('=') else {
            return Err(format!("{s:?}: expected KEY=VALUE"));
        };
        validate_key(key)
            .and_then(|()| validate_value(value))
            .map_err(|e| format!("{s:?}: {e}"))?;
        Ok(MarkSpec {
            on: On::Label,
            key: key.to_string(),
            value: value.to_string(),
        })
    }

    /// The annotations that keep cluster-autoscaler and Karpenter from
    /// removing or disrupting the node while it is under maintenance.
    pub fn autoscalers() -> Vec<MarkSpec> {
        [SCALE_DOWN_DISABLED, DO_NOT_DISRUPT]
            .into_iter()
            .map(|key| MarkSpec {
                on: On::Annotation,
                key: key.to_string(),
                value: "true".to_string(),
            })
            .collect()
    }
}

/// A mark the cordon set, and what the node carried under its key
/// before (`None`: nothing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Mark {
    pub on: On,
    pub key: String,
    pub set: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub was: Option<String>,
}

/// The value the node carries under `key`, as a label or an annotation.
fn mark_of<'a>(node: &'a Node, on: On, key: &str) -> Option<&'a str> {
    let map = match on {
        On::Label => node.metadata.labels.as_ref(),
        On::Annotation => node.metadata.annotations.as_ref(),
    };
    map?.get(key).map(String::as_str)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    pub was_unschedulable: bool,
    #[serde(default)]
    pub taints: Vec<TaintSpec>,
    /// Labels the cordon added (`--exclude-from-load-balancers`), by key;
    /// uncordon removes them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    /// Labels and annotations the cordon set (`--label-during`,
    /// `--protect-from-autoscalers`), each with what was there before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub marks: Vec<Mark>,
    /// `--surge` may have scaled Deployments up for this node: uncordon
    /// scales back what an interrupted drain left (crate::drain::surge).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub surge: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub started_at: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord)]
pub struct TaintSpec {
    pub key: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub value: String,
    pub effect: String,
}

impl TaintSpec {
    /// kubectl taint's syntax: `key[=value]:Effect`, refused in kubectl
    /// taint's words (k8s.io/kubectl pkg/cmd/taint/utils.go, `parseTaint`:
    /// the value is a label value, apimachinery's `IsValidLabelValue`).
    pub fn parse(s: &str) -> Result<Self, String> {
        let (kv, effect) = s
            .rsplit_once(':')
            .ok_or_else(|| format!("taint {s:?}: expected key[=value]:Effect"))?;
        if !matches!(effect, "NoSchedule" | "PreferNoSchedule" | "NoExecute") {
            return Err(format!(
                "invalid taint effect: {effect}, unsupported taint effect (NoSchedule, PreferNoSchedule or NoExecute)"
            ));
        }
        let (key, value) = kv.split_once('=').unwrap_or((kv, ""));
        validate_key(key).map_err(|_| format!("taint {s:?}: {key:?} is not a valid key"))?;
        if let Some(why) = kube_conventions::selector::label_value_refusal(value) {
            return Err(format!("invalid taint spec: {s}, {why}"));
        }
        Ok(TaintSpec {
            key: key.to_string(),
            value: value.to_string(),
            effect: effect.to_string(),
        })
    }

    fn matches(&self, t: &Taint) -> bool {
        t.key == self.key
            && t.effect == self.effect
            && t.value.as_deref().unwrap_or_default() == self.value
    }

    fn to_json(&self) -> Value {
        let mut v = json!({"key": self.key, "effect": self.effect});
        if !self.value.is_empty() {
            v["value"] = json!(self.value);
        }
        v
    }
}

impl std::fmt::Display for TaintSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.value.is_empty() {
            write!(f, "{}:{}", self.key, self.effect)
        } else {
            write!(f, "{}={}:{}", self.key, self.value, self.effect)
        }
    }
}

/// A record made stale by a plain `kubectl uncordon`: the node is
/// schedulable again, but our record of the maintenance is still there.
pub fn is_stale(node: &Node) -> bool {
    record_of(node).is_some() && !unschedulable(node)
}

/// The record of a maintenance still in progress (not a stale one).
pub fn live_record(node: &Node) -> Option<Record> {
    record_of(node).filter(|_| unschedulable(node))
}

pub fn record_of(node: &Node) -> Option<Record> {
    let text = node.metadata.annotations.as_ref()?.get(ANNOTATION)?;
    serde_json::from_str(text).ok()
}

fn taints_json(node: &Node) -> Vec<Value> {
    node.spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .map(|ts| {
            ts.iter()
                .filter_map(|t| serde_json::to_value(t).ok())
                .collect()
        })
        .unwrap_or_default()
}

pub fn unschedulable(node: &Node) -> bool {
    node.spec
        .as_ref()
        .and_then(|s| s.unschedulable)
        .unwrap_or(false)
}

/// The merge patch that cordons `node`, adds `taints` and records what it
/// changed; `None` when the node is already as wanted. The patch carries
/// the node's resourceVersion, so a concurrent change makes it a 409.
/// A node that already has a record (a drain being resumed) keeps its
/// first record; taints added now are appended to it.
pub fn cordon_patch(
    node: &Node,
    taints: &[TaintSpec],
    labels: &[(String, String)],
    marks: &[MarkSpec],
    surge: bool,
    reason: Option<&str>,
    now: &str,
) -> Option<Value> {
    let current: Vec<Taint> = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.clone())
        .unwrap_or_default();
    let missing: Vec<&TaintSpec> = taints
        .iter()
        .filter(|t| !current.iter().any(|c| t.matches(c)))
        .collect();
    // A label already there (whatever its value) is someone else's: left
    // alone, and not removed by uncordon.
    let has_label = |k: &str| {
        node.metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key(k))
    };
    let new_labels: Vec<&(String, String)> = labels.iter().filter(|(k, _)| !has_label(k)).collect();
    let existing = live_record(node);
    let surge_recorded = existing.as_ref().is_some_and(|r| r.surge || !surge);
    // A mark already at its value is left alone, and not ours to undo.
    let new_marks: Vec<&MarkSpec> = marks
        .iter()
        .filter(|m| mark_of(node, m.on, &m.key) != Some(m.value.as_str()))
        .collect();
    if missing.is_empty() && new_labels.is_empty() && new_marks.is_empty() && surge_recorded {
        return None;
    }
    // A stale record (the node was uncordoned by hand) is replaced; the
    // taints it added that are still there stay ours to remove.
    let stale_taints: Vec<TaintSpec> = record_of(node)
        .filter(|_| existing.is_none())
        .map(|r| {
            r.taints
                .into_iter()
                .filter(|t| current.iter().any(|c| t.matches(c)))
                .collect()
        })
        .unwrap_or_default();
    let mut record = existing.unwrap_or_else(|| Record {
        was_unschedulable: unschedulable(node),
        taints: stale_taints,
        labels: Vec::new(),
        marks: Vec::new(),
        surge: false,
        reason: reason.map(str::to_string),
        started_at: now.to_string(),
    });
    for t in &missing {
        if !record.taints.contains(t) {
            record.taints.push((*t).clone());
        }
    }
    record.surge |= surge;
    for (k, _) in &new_labels {
        if !record.labels.contains(k) {
            record.labels.push(k.clone());
        }
    }
    for m in &new_marks {
        // A resumed drain keeps what was there before the first cordon.
        match record
            .marks
            .iter_mut()
            .find(|r| r.on == m.on && r.key == m.key)
        {
            Some(r) => r.set.clone_from(&m.value),
            None => record.marks.push(Mark {
                on: m.on,
                key: m.key.clone(),
                set: m.value.clone(),
                was: mark_of(node, m.on, &m.key).map(str::to_string),
            }),
        }
    }
    let mut spec = json!({"unschedulable": true});
    if !missing.is_empty() {
        let mut all = taints_json(node);
        all.extend(missing.iter().map(|t| t.to_json()));
        spec["taints"] = Value::Array(all);
    }
    let mut patch = json!({
        "metadata": {
            "resourceVersion": node.metadata.resource_version,
            "annotations": {ANNOTATION: serde_json::to_string(&record).expect("record serialises")},
        },
        "spec": spec,
    });
    if !new_labels.is_empty() {
        patch["metadata"]["labels"] = new_labels
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect::<serde_json::Map<_, _>>()
            .into();
    }
    for m in &new_marks {
        patch["metadata"][m.on.field()][&m.key] = json!(m.value);
    }
    Some(patch)
}

/// Who cordoned the node after this maintenance began, if someone else
/// did: `spec.unschedulable` is owned (managedFields) by other managers
/// only, so a person uncordoned and cordoned it again since our cordon.
/// `None` when we cordoned it, when it was cordoned before the maintenance,
/// or when the server keeps no managedFields.
pub fn cordoned_by_another(node: &Node) -> Option<String> {
    let record = live_record(node)?;
    if record.was_unschedulable {
        return None;
    }
    let owners: Vec<String> = node
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter(|e| {
            e.fields_v1
                .as_ref()
                .is_some_and(|f| f.0.pointer("/f:spec/f:unschedulable").is_some())
        })
        .map(|e| {
            let manager = e.manager.clone().unwrap_or_default();
            match &e.time {
                Some(t) => format!("{manager} (at {})", t.0),
                None => manager,
            }
        })
        .collect();
    let ours = owners
        .iter()
        .any(|o| o.split(' ').next() == Some(FIELD_MANAGER));
    (!owners.is_empty() && !ours).then(|| owners.join(", "))
}

/// What uncordon will do: the merge patch, in words, and whether the node
/// stays cordoned because someone else cordoned it after us.
pub struct Uncordon {
    pub patch: Value,
    pub words: String,
    pub kept_for_another: bool,
}

/// What uncordon will do, in words, and the merge patch that does it.
pub fn uncordon_patch(node: &Node) -> Uncordon {
    let rv = json!(node.metadata.resource_version);
    let Some(record) = record_of(node) else {
        // Not ours: a plain uncordon, in kubectl uncordon's words.
        let cordoned = node
            .spec
            .as_ref()
            .and_then(|s| s.unschedulable)
            .unwrap_or(false);
        return Uncordon {
            patch: json!({"metadata": {"resourceVersion": rv}, "spec": {"unschedulable": null}}),
            words: if cordoned {
                "uncordoned"
            } else {
                "already uncordoned"
            }
            .to_string(),
            kept_for_another: false,
        };
    };
    let another = cordoned_by_another(node);
    let current: Vec<Taint> = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.clone())
        .unwrap_or_default();
    // The out-of-service taint (crate::drain::out_of_service) stays while
    // the node is not Ready: its pods would otherwise come back to a node
    // that may still be down, its volumes attach there.
    let ready = crate::policy::node_health::is_ready(node);
    let removed: Vec<&TaintSpec> = record
        .taints
        .iter()
        .filter(|r| ready || r.key != crate::policy::node_health::OUT_OF_SERVICE)
        .collect();
    let kept: Vec<Value> = current
        .iter()
        .filter(|t| !removed.iter().any(|r| r.matches(t)))
        .filter_map(|t| serde_json::to_value(t).ok())
        .collect();
    let mut spec = match &another {
        // Not ours to undo: the patch leaves spec.unschedulable alone.
        Some(_) => json!({}),
        None => {
            json!({"unschedulable": if record.was_unschedulable { json!(true) } else { Value::Null }})
        }
    };
    if kept.len() != current.len() {
        spec["taints"] = if kept.is_empty() {
            Value::Null
        } else {
            Value::Array(kept)
        };
    }
    let name = node.metadata.name.as_deref().unwrap_or_default();
    let mut words = match &another {
        Some(who) => format!(
            "left cordoned: {who} cordoned it after this maintenance began (kubectl uncordon {name} makes it schedulable)"
        ),
        None if record.was_unschedulable => {
            "left cordoned, as it was before the maintenance".to_string()
        }
        None => "uncordoned".to_string(),
    };
    if !removed.is_empty() {
        let names: Vec<String> = removed.iter().map(ToString::to_string).collect();
        words = format!("{words}; removed taints {}", names.join(", "));
    }
    if let Some(oos) = record.taints.iter().find(|r| !removed.contains(r)) {
        let name = node.metadata.name.as_deref().unwrap_or_default();
        words = format!(
            "{words}; kept taint {oos} while the node is not Ready (once it is back: kubectl taint node {name} {}-)",
            oos.key
        );
    }
    let mut metadata = json!({"resourceVersion": rv, "annotations": {ANNOTATION: null}});
    let labels = node.metadata.labels.as_ref();
    let added: Vec<&String> = record
        .labels
        .iter()
        .filter(|k| labels.is_some_and(|l| l.contains_key(*k)))
        .collect();
    if !added.is_empty() {
        metadata["labels"] = added
            .iter()
            .map(|k| ((*k).clone(), Value::Null))
            .collect::<serde_json::Map<_, _>>()
            .into();
        let names: Vec<&str> = added.iter().map(|k| k.as_str()).collect();
        words = format!("{words}; removed labels {}", names.join(", "));
    }
    let (restored, left) = restore_marks(node, &record.marks, &mut metadata);
    if !restored.is_empty() {
        words = format!("{words}; restored {}", restored.join(", "));
    }
    if !left.is_empty() {
        words = format!("{words}; left {}", left.join(", "));
    }
    Uncordon {
        patch: json!({"metadata": metadata, "spec": spec}),
        words,
        kept_for_another: another.is_some(),
    }
}

/// Puts back what each mark replaced, into `metadata`'s patch, unless
/// someone changed the mark since: then it is theirs, and left. Returns
/// the marks restored and those left, in words.
fn restore_marks(node: &Node, marks: &[Mark], metadata: &mut Value) -> (Vec<String>, Vec<String>) {
    let (mut restored, mut left) = (Vec::new(), Vec::new());
    for m in marks {
        let now = mark_of(node, m.on, &m.key);
        if now != Some(m.set.as_str()) {
            match now {
                Some(v) => left.push(format!(
                    "{} {}={v:?}, changed since the cordon",
                    m.on.word(),
                    m.key
                )),
                None if m.was.is_some() => left.push(format!(
                    "{} {} absent, removed since the cordon",
                    m.on.word(),
                    m.key
                )),
                None => {}
            }
            continue;
        }
        metadata[m.on.field()][&m.key] = m.was.as_ref().map_or(Value::Null, |v| json!(v));
        restored.push(match &m.was {
            None => format!("{} {} (removed)", m.on.word(), m.key),
            Some(v) => format!("{} {} to {v:?}", m.on.word(), m.key),
        });
    }
    (restored, left)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(v: &Value) -> Node {
        serde_json::from_value(v.clone()).unwrap()
    }

    fn apply(n: &Node, patch: &Value) -> Node {
        let merged = {
            let mut v = serde_json::to_value(n).unwrap();
            json_patch::merge(&mut v, patch);
            v
        };
        serde_json::from_value(merged).unwrap()
    }

    #[test]
    fn taints_parse_like_kubectl_taint() {
        assert_eq!(
            TaintSpec::parse("piraeus.io/evacuate=true:NoSchedule").unwrap(),
            TaintSpec {
                key: "piraeus.io/evacuate".into(),
                value: "true".into(),
                effect: "NoSchedule".into()
            }
        );
        assert_eq!(TaintSpec::parse("maintenance:NoExecute").unwrap().value, "");
        for bad in [
            "nokey",
            "a=b:Sometimes",
            ":NoSchedule",
            "bad key:NoSchedule",
            "!key:NoSchedule",
        ] {
            assert!(TaintSpec::parse(bad).is_err(), "{bad}");
        }
        // The value is a label value, refused in kubectl taint's words.
        let long = format!("k={}:NoSchedule", "a".repeat(64));
        for (bad, said) in [
            (
                "k=bad value:NoSchedule",
                "invalid taint spec: k=bad value:NoSchedule, a valid label must be an empty string or consist of",
            ),
            (
                "k=-x:NoSchedule",
                "invalid taint spec: k=-x:NoSchedule, a valid label",
            ),
            (
                "k=x.:NoExecute",
                "invalid taint spec: k=x.:NoExecute, a valid label",
            ),
            (long.as_str(), ", must be no more than 63 characters"),
            (
                "k=v:Bogus",
                "invalid taint effect: Bogus, unsupported taint effect",
            ),
        ] {
            let e = TaintSpec::parse(bad).unwrap_err();
            assert!(e.contains(said), "{bad}: {e}");
        }
        assert!(TaintSpec::parse(&format!("k={}:NoSchedule", "a".repeat(63))).is_ok());
        assert!(TaintSpec::parse("k=a_b.c-1:PreferNoSchedule").is_ok());
    }

    #[test]
    fn the_load_balancer_label_is_added_at_cordon_and_removed_only_if_ours() {
        let lb = [(EXCLUDE_FROM_LOAD_BALANCERS.to_string(), "true".to_string())];
        let before = node(&json!({"metadata": {"name": "n", "labels": {"zone": "a"}}}));
        let during = apply(
            &before,
            &cordon_patch(&before, &[], &lb, &[], false, None, "t").unwrap(),
        );
        let labels = during.metadata.labels.clone().unwrap();
        assert_eq!(labels[EXCLUDE_FROM_LOAD_BALANCERS], "true");
        let undo = uncordon_patch(&during);
        assert_eq!(
            apply(&during, &undo.patch).metadata.labels,
            before.metadata.labels
        );
        assert!(undo.words.contains("removed labels"), "{}", undo.words);
        // Someone else's label stays, at cordon and at uncordon.
        let theirs = node(&json!({"metadata": {"name": "n",
            "labels": {EXCLUDE_FROM_LOAD_BALANCERS: "ops"}}}));
        let during = apply(
            &theirs,
            &cordon_patch(&theirs, &[], &lb, &[], false, None, "t").unwrap(),
        );
        assert_eq!(
            during.metadata.labels.as_ref().unwrap()[EXCLUDE_FROM_LOAD_BALANCERS],
            "ops"
        );
        let after = apply(&during, &uncordon_patch(&during).patch);
        assert_eq!(after.metadata.labels, theirs.metadata.labels);
    }

    #[test]
    fn marks_are_set_at_cordon_and_put_back_exactly_at_uncordon() {
        // One label absent, one annotation there with another value, one
        // annotation there with the value asked: each comes back as it was.
        let before = node(&json!({"metadata": {"name": "n", "resourceVersion": "5",
            "labels": {"zone": "a", "bgp": "on"},
            "annotations": {SCALE_DOWN_DISABLED: "false", DO_NOT_DISRUPT: "true"}}}));
        let mut marks = MarkSpec::autoscalers();
        marks.push(MarkSpec::label("bgp=off").unwrap());
        marks.push(MarkSpec::label("maintenance=now").unwrap());
        let during = apply(
            &before,
            &cordon_patch(&before, &[], &[], &marks, false, None, "t").unwrap(),
        );
        for m in &marks {
            assert_eq!(
                mark_of(&during, m.on, &m.key),
                Some(m.value.as_str()),
                "{m:?}"
            );
        }
        // The annotation already "true" is not ours to undo.
        let record = record_of(&during).unwrap();
        assert!(!record.marks.iter().any(|m| m.key == DO_NOT_DISRUPT));
        // A resumed drain changes nothing and keeps the first record.
        assert!(cordon_patch(&during, &[], &[], &marks, false, None, "later").is_none());
        let undo = uncordon_patch(&during);
        let after = apply(&during, &undo.patch);
        assert_eq!(
            after.metadata.labels, before.metadata.labels,
            "{}",
            undo.words
        );
        let mut annotations = after.metadata.annotations.clone().unwrap();
        annotations.remove(ANNOTATION);
        assert_eq!(
            Some(annotations),
            before.metadata.annotations,
            "{}",
            undo.words
        );
        assert!(
            undo.words.contains("label maintenance (removed)"),
            "{}",
            undo.words
        );
        assert!(
            undo.words
                .contains(&format!("annotation {SCALE_DOWN_DISABLED} to \"false\"")),
            "{}",
            undo.words
        );
    }

    #[test]
    fn a_mark_changed_since_the_cordon_is_left_as_it_is() {
        let before = node(&json!({"metadata": {"name": "n", "resourceVersion": "5"}}));
        let marks = [MarkSpec::label("bgp=off").unwrap()];
        let mut during = apply(
            &before,
            &cordon_patch(&before, &[], &[], &marks, false, None, "t").unwrap(),
        );
        during
            .metadata
            .labels
            .as_mut()
            .unwrap()
            .insert("bgp".into(), "ops".into());
        let undo = uncordon_patch(&during);
        let after = apply(&during, &undo.patch);
        assert_eq!(after.metadata.labels.unwrap()["bgp"], "ops");
        assert!(
            undo.words
                .contains("left label bgp=\"ops\", changed since the cordon"),
            "{}",
            undo.words
        );
    }

    #[test]
    fn label_marks_parse_as_labels() {
        assert_eq!(
            MarkSpec::label("example.com/bgp=off").unwrap().key,
            "example.com/bgp"
        );
        assert_eq!(MarkSpec::label("empty=").unwrap().value, "");
        for bad in [
            "novalue", "=v", "a b=c", "k=v,w=x", "k!=v", "-k=v", "k=v-", "Bad_/k=v", "/k=v",
        ] {
            assert!(MarkSpec::label(bad).is_err(), "{bad}");
        }
        assert!(MarkSpec::label(&format!("k={}", "v".repeat(64))).is_err());
    }

    #[test]
    fn cordon_then_uncordon_restores_the_exact_spec() {
        let before = node(&json!({"metadata": {"name": "n", "resourceVersion": "5"},
            "spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]}}));
        let ours = [TaintSpec::parse("piraeus.io/evacuate=true:NoSchedule").unwrap()];
        let patch = cordon_patch(
            &before,
            &ours,
            &[],
            &[],
            false,
            Some("kernel upgrade"),
            "2026-11-22T10:00:00Z",
        )
        .unwrap();
        assert_eq!(patch["metadata"]["resourceVersion"], "5");
        let during = apply(&before, &patch);
        assert!(unschedulable(&during));
        assert_eq!(
            during.spec.as_ref().unwrap().taints.as_ref().unwrap().len(),
            2
        );
        let rec = record_of(&during).unwrap();
        assert!(!rec.was_unschedulable);
        assert_eq!(rec.reason.as_deref(), Some("kernel upgrade"));
        // Resuming changes nothing.
        assert!(cordon_patch(&during, &ours, &[], &[], false, None, "later").is_none());
        let undo = uncordon_patch(&during);
        let after = apply(&during, &undo.patch);
        assert_eq!(after.spec, before.spec, "{}", undo.words);
        assert!(record_of(&after).is_none());
    }

    #[test]
    fn a_node_cordoned_before_stays_cordoned() {
        let before = node(&json!({"metadata": {"name": "n"}, "spec": {"unschedulable": true}}));
        let during = apply(
            &before,
            &cordon_patch(&before, &[], &[], &[], false, None, "t").unwrap(),
        );
        assert!(record_of(&during).unwrap().was_unschedulable);
        let undo = uncordon_patch(&during);
        let after = apply(&during, &undo.patch);
        assert!(unschedulable(&after));
        assert!(undo.words.contains("left cordoned"));
    }

    #[test]
    fn a_record_left_by_a_plain_uncordon_is_stale_and_replaced() {
        let before = node(&json!({"metadata": {"name": "n", "resourceVersion": "5"}, "spec": {}}));
        let ours = [TaintSpec::parse("maintenance:NoSchedule").unwrap()];
        let during = apply(
            &before,
            &cordon_patch(&before, &ours, &[], &[], false, Some("old"), "t1").unwrap(),
        );
        assert!(!is_stale(&during));
        // kubectl uncordon: schedulable again, our record and taint left.
        let uncordoned = apply(&during, &json!({"spec": {"unschedulable": null}}));
        assert!(is_stale(&uncordoned));
        assert!(live_record(&uncordoned).is_none());
        let again = apply(
            &uncordoned,
            &cordon_patch(&uncordoned, &ours, &[], &[], false, Some("new"), "t2").unwrap(),
        );
        let record = record_of(&again).unwrap();
        assert_eq!(
            (record.reason.as_deref(), record.started_at.as_str()),
            (Some("new"), "t2")
        );
        assert!(!record.was_unschedulable);
        assert_eq!(
            record.taints, ours,
            "the taint still there stays ours to remove"
        );
        let undo = uncordon_patch(&again);
        assert_eq!(apply(&again, &undo.patch).spec, before.spec);
    }

    #[test]
    fn a_cordon_someone_made_after_ours_is_not_undone() {
        let owned_by = |manager: &str| {
            json!([{"manager": manager, "operation": "Update", "time": "2026-11-22T11:00:00Z",
                "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:unschedulable": {}}}}])
        };
        let before = node(&json!({"metadata": {"name": "n"}, "spec": {}}));
        let mut during = apply(
            &before,
            &cordon_patch(&before, &[], &[], &[], false, None, "t").unwrap(),
        );
        during.metadata.managed_fields = serde_json::from_value(owned_by(FIELD_MANAGER)).unwrap();
        assert_eq!(cordoned_by_another(&during), None, "our own cordon");
        assert!(!uncordon_patch(&during).kept_for_another);

        // kubectl uncordon, then kubectl cordon: kubectl owns the field now.
        let mut recordoned = during.clone();
        recordoned.metadata.managed_fields = serde_json::from_value(owned_by("kubectl")).unwrap();
        let who = cordoned_by_another(&recordoned).expect("someone else");
        assert!(who.starts_with("kubectl (at 2026-11-22T11:00:00"), "{who}");
        let undo = uncordon_patch(&recordoned);
        assert!(undo.kept_for_another);
        let after = apply(&recordoned, &undo.patch);
        assert!(unschedulable(&after), "{}", undo.words);
        assert!(record_of(&after).is_none(), "our record goes");
        assert!(undo.words.contains("kubectl uncordon n"), "{}", undo.words);

        // No managedFields at all (an old server): our record decides.
        during.metadata.managed_fields = None;
        assert_eq!(cordoned_by_another(&during), None);
    }
}
