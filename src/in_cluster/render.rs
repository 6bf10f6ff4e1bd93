//! The objects a run in the cluster is made of, as plain Kubernetes YAML:
//! its ServiceAccount, a ClusterRole of exactly the rules its flags need
//! (crate::in_cluster::rbac) and a Role for each namespace it alone works
//! in, with their bindings, a ConfigMap with its arguments
//! and plan, a Secret with the values of its credential-bearing flags
//! (crate::in_cluster::argv), and the `batch/v1` Job that runs this
//! binary's image with them. Pure: `--render` prints them (the Secret's
//! values not shown: `for_review`), `--in-cluster` applies them.
//!
//! The pod passes Pod Security's `restricted` profile
//! (k8s.io/pod-security-admission policy/check_*.go): non-root, no
//! privilege escalation, every capability dropped, `seccompProfile:
//! RuntimeDefault`.
//!
//! The Job restarts its pod on failure (`restartPolicy: OnFailure`) and the
//! Job controller makes a new pod when its pod is evicted (its node's turn
//! came): the roll resumes from its leases. It runs `system-cluster-critical`,
//! tolerates the run's own `--taint`s, and prefers nodes the run does not
//! take, where there are any.

use kube_conventions::selector::{Op, Selector};
use serde_json::{Value, json};

use super::argv::SecretValue;
use super::rbac::Rule;

/// Label on every object of a run, with its name.
pub(crate) const RUN_LABEL: &str = "kubectl-maintain.io/run";
pub(crate) use crate::pool::abort_watch::{ABORT, JOB_ENV, NAMESPACE_ENV};
/// Who submitted the run (SelfSubjectReview's username), on the Job.
pub(crate) const SUBMITTED_BY: &str = "kubectl-maintain.io/submitted-by";
/// A day to read its logs and status after it ends.
const TTL_AFTER_FINISHED: i64 = 86_400;
/// Restarts and evictions of its own pod a run outlives: a roll of a big
/// pool may see its pod evicted a few times, each a new pod.
const BACKOFF_LIMIT: i64 = 20;

/// The nodes the run takes, to keep its own pod away from them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Targets {
    Named(Vec<String>),
    Selector(String),
}

/// Everything the objects are made from.
#[derive(Debug, Clone)]
pub(crate) struct Submission {
    /// `kubectl-maintain-roll-3f2a9c1e`: every object's name.
    pub(crate) name: String,
    pub(crate) namespace: String,
    pub(crate) image: String,
    /// The Job's arguments (crate::in_cluster::argv).
    pub(crate) args: Vec<String>,
    /// The plan file's text, when `--plan` was given.
    pub(crate) plan: Option<String>,
    pub(crate) rules: Vec<Rule>,
    /// `--timeout`, when given: the Job's `activeDeadlineSeconds`.
    pub(crate) deadline_seconds: Option<u64>,
    /// `(key, effect)` of each `--taint` the run puts on.
    pub(crate) taints: Vec<(String, String)>,
    pub(crate) targets: Targets,
    /// SelfSubjectReview's username, when known.
    pub(crate) submitter: Option<String>,
    /// What the Job reads from the run's Secret.
    pub(crate) secrets: Vec<SecretValue>,
}

impl Submission {
    fn labels(&self) -> Value {
        json!({
            "app.kubernetes.io/name": "kubectl-maintain",
            "app.kubernetes.io/version": env!("CARGO_PKG_VERSION"),
            RUN_LABEL: self.name,
        })
    }

    fn meta(&self, namespaced: bool) -> Value {
        let mut m = json!({"name": self.name, "labels": self.labels()});
        if namespaced {
            m["namespace"] = json!(self.namespace);
        }
        m
    }
}

/// The objects in the order they are applied.
pub(crate) fn objects(s: &Submission) -> Vec<Value> {
    let mut all =
        vec![json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": s.meta(true)})];
    let mut namespaces: Vec<Option<&str>> = vec![None];
    for r in &s.rules {
        if !namespaces.contains(&r.namespace.as_deref()) {
            namespaces.push(r.namespace.as_deref());
        }
    }
    for ns in namespaces {
        all.extend(role(s, ns));
    }
    all.push(config_map(s));
    if !s.secrets.is_empty() {
        let data: serde_json::Map<String, Value> = s
            .secrets
            .iter()
            .map(|v| (v.key(), json!(v.value)))
            .collect();
        all.push(
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": s.meta(true),
            "type": "Opaque", "stringData": data}),
        );
    }
    all.push(job(s));
    all
}

impl Submission {
    /// What `--render` shows: the Secret's values replaced by where they
    /// come from. Applying it needs the Secret made by hand.
    pub(crate) fn for_review(&self) -> Submission {
        let mut shown = self.clone();
        for v in &mut shown.secrets {
            v.value = format!("(not shown: the value given to {})", v.flag);
        }
        shown
    }
}

/// The rules of one namespace as a Role and its RoleBinding, or those of
/// none as the ClusterRole and its ClusterRoleBinding.
fn role(s: &Submission, namespace: Option<&str>) -> [Value; 2] {
    let mine: Vec<&Rule> = s
        .rules
        .iter()
        .filter(|r| r.namespace.as_deref() == namespace)
        .collect();
    let rules: Vec<Value> = mine
        .iter()
        .map(|r| {
            let mut v =
                json!({"apiGroups": [r.api_group], "resources": r.resources, "verbs": r.verbs});
            if !r.resource_names.is_empty() {
                v["resourceNames"] = json!(r.resource_names);
            }
            v
        })
        .collect();
    let (kind, binding) = match namespace {
        Some(_) => ("Role", "RoleBinding"),
        None => ("ClusterRole", "ClusterRoleBinding"),
    };
    let mut meta = s.meta(false);
    if let Some(ns) = namespace {
        meta["namespace"] = json!(ns);
    }
    let mut role_meta = meta.clone();
    // Why each rule is there, in order, for whoever reviews the role.
    let why: Vec<String> = mine
        .iter()
        .enumerate()
        .map(|(i, r)| format!("{}: {}", i + 1, r.why))
        .collect();
    role_meta["annotations"] = json!({"kubectl-maintain.io/rules": why.join("\n")});
    [
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
            "metadata": role_meta, "rules": rules}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": binding,
            "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": s.name},
            "subjects": [{"kind": "ServiceAccount", "name": s.name, "namespace": s.namespace}]}),
    ]
}

fn config_map(s: &Submission) -> Value {
    let mut data = json!({"args": serde_json::to_string(&s.args).unwrap_or_default()});
    if let Some(plan) = &s.plan {
        data["plan.yaml"] = json!(plan);
    }
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": s.meta(true), "data": data})
}

fn job(s: &Submission) -> Value {
    let mut meta = s.meta(true);
    if let Some(who) = &s.submitter {
        meta["annotations"] = json!({SUBMITTED_BY: who});
    }
    let tolerations: Vec<Value> = s
        .taints
        .iter()
        .map(|(key, effect)| json!({"key": key, "operator": "Exists", "effect": effect}))
        .collect();
    let mut pod = json!({
        "serviceAccountName": s.name,
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
        "restartPolicy": "OnFailure",
        "priorityClassName": "system-cluster-critical",
        "containers": [{
            "name": "kubectl-maintain",
            "image": s.image,
            "args": s.args,
            // Which run it is: a roll reads its Job for `abort`.
            "env": env(s),
            "securityContext": {
                "runAsNonRoot": true,
                "runAsUser": 65_532,
                "readOnlyRootFilesystem": true,
                "allowPrivilegeEscalation": false,
                "capabilities": {"drop": ["ALL"]},
            },
            "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}},
            "volumeMounts": [{"name": "run", "mountPath": "/etc/kubectl-maintain", "readOnly": true}],
        }],
        "volumes": [{"name": "run", "configMap": {"name": s.name,
            "items": if s.plan.is_some() {
                json!([{"key": "args", "path": "args"}, {"key": "plan.yaml", "path": "plan.yaml"}])
            } else {
                json!([{"key": "args", "path": "args"}])
            }}}],
    });
    if !tolerations.is_empty() {
        pod["tolerations"] = json!(tolerations);
    }
    if let Some(terms) = away_from(&s.targets) {
        pod["affinity"] =
            json!({"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": terms}});
    }
    let mut spec = json!({
        "backoffLimit": BACKOFF_LIMIT,
        "ttlSecondsAfterFinished": TTL_AFTER_FINISHED,
        "template": {"metadata": {"labels": s.labels()}, "spec": pod},
    });
    if let Some(d) = s.deadline_seconds {
        spec["activeDeadlineSeconds"] = json!(d);
    }
    json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec})
}

/// Which run it is (a roll reads its Job for `abort`), and the values of
/// its credential-bearing flags from its Secret.
fn env(s: &Submission) -> Value {
    let mut env = vec![
        json!({"name": JOB_ENV, "value": s.name}),
        json!({"name": NAMESPACE_ENV,
            "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}),
    ];
    env.extend(s.secrets.iter().map(|v| {
        json!({"name": v.env(),
            "valueFrom": {"secretKeyRef": {"name": s.name, "key": v.key()}}})
    }));
    json!(env)
}

/// Preferred node affinity for the nodes the run does not take: a node
/// matching any negated requirement of the selection (the terms are ORed),
/// or not named. None when nothing can be said (an empty selector).
fn away_from(targets: &Targets) -> Option<Vec<Value>> {
    let term = |expr: Value| json!({"weight": 100, "preference": {"matchExpressions": [expr]}});
    match targets {
        Targets::Named(names) => Some(vec![term(json!({
            "key": "kubernetes.io/hostname", "operator": "NotIn", "values": names}))]),
        Targets::Selector(s) => {
            let Ok(Selector::All(reqs)) = Selector::parse(s) else {
                return None;
            };
            let terms: Vec<Value> = reqs
                .iter()
                .filter_map(|r| {
                    let k = &r.key;
                    Some(match &r.op {
                        Op::Equals(v) => json!({"key": k, "operator": "NotIn", "values": [v]}),
                        Op::NotEquals(v) => json!({"key": k, "operator": "In", "values": [v]}),
                        Op::In(vs) => json!({"key": k, "operator": "NotIn", "values": vs}),
                        Op::NotIn(vs) => json!({"key": k, "operator": "In", "values": vs}),
                        Op::Exists => json!({"key": k, "operator": "DoesNotExist"}),
                        Op::DoesNotExist => json!({"key": k, "operator": "Exists"}),
                        Op::Gt(_) | Op::Lt(_) => return None,
                    })
                })
                .map(term)
                .collect();
            (!terms.is_empty()).then_some(terms)
        }
    }
}

/// The objects as one YAML stream (`---` between documents).
pub(crate) fn yaml(objects: &[Value]) -> anyhow::Result<String> {
    let mut out = String::new();
    for o in objects {
        out.push_str("---\n");
        out.push_str(&serde_saphyr::to_string(o)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::in_cluster::rbac::{Needs, rules};

    fn submission(targets: Targets) -> Submission {
        Submission {
            name: "kubectl-maintain-roll-abc".into(),
            namespace: "kube-system".into(),
            image: "reg/km@sha256:00".into(),
            args: vec![
                "roll".into(),
                "-l".into(),
                "pool=blue".into(),
                "--yes".into(),
            ],
            plan: Some("kind: DrainPlan\n".into()),
            rules: rules(&Needs::default()),
            deadline_seconds: Some(600),
            taints: vec![("maintenance".into(), "NoExecute".into())],
            targets,
            submitter: Some("alice".into()),
            secrets: Vec::new(),
        }
    }

    #[test]
    fn the_job_restarts_outlives_evictions_and_keeps_away_from_its_pool() {
        let objects = objects(&submission(Targets::Selector("pool=blue".into())));
        let kinds: Vec<_> = objects
            .iter()
            .map(|o| o["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "ServiceAccount",
                "ClusterRole",
                "ClusterRoleBinding",
                "Role",
                "RoleBinding",
                "Role",
                "RoleBinding",
                "ConfigMap",
                "Job"
            ]
        );
        // The heartbeat leases are read in kube-node-lease alone.
        assert_eq!(objects[3]["metadata"]["namespace"], "kube-node-lease");
        assert_eq!(objects[3]["rules"][0]["resources"], json!(["leases"]));
        assert_eq!(objects[4]["roleRef"]["kind"], "Role");
        assert_eq!(objects[4]["subjects"][0]["namespace"], "kube-system");
        assert!(!objects[1]["rules"].to_string().contains("leases"));
        // The nodes' Events in `default` alone.
        assert_eq!(objects[5]["metadata"]["namespace"], "default");
        assert_eq!(objects[5]["rules"][0]["resources"], json!(["events"]));
        assert!(!objects[1]["rules"].to_string().contains("events"));
        let job = &objects[8];
        let pod = &job["spec"]["template"]["spec"];
        assert_eq!(pod["restartPolicy"], "OnFailure");
        assert_eq!(pod["priorityClassName"], "system-cluster-critical");
        assert_eq!(pod["serviceAccountName"], "kubectl-maintain-roll-abc");
        assert_eq!(job["spec"]["activeDeadlineSeconds"], 600);
        assert_eq!(job["metadata"]["annotations"][SUBMITTED_BY], "alice");
        assert_eq!(pod["tolerations"][0]["key"], "maintenance");
        let away =
            &pod["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"];
        assert_eq!(
            away[0]["preference"]["matchExpressions"][0],
            json!({"key": "pool", "operator": "NotIn", "values": ["blue"]})
        );
        assert_eq!(objects[7]["data"]["plan.yaml"], "kind: DrainPlan\n");
        let c = &pod["containers"][0];
        assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
        assert_eq!(c["args"][0], "roll");
    }

    #[test]
    fn credentials_are_in_the_secret_read_by_reference_and_not_shown_in_review() {
        let mut s = submission(Targets::Named(vec!["n1".into()]));
        s.secrets = vec![SecretValue {
            flag: "--notify".into(),
            n: 0,
            value: "https://hooks.slack.com/services/T/B/SECRET".into(),
        }];
        let all = objects(&s);
        let secret = all.iter().find(|o| o["kind"] == "Secret").unwrap();
        assert_eq!(
            secret["stringData"]["notify-0"],
            "https://hooks.slack.com/services/T/B/SECRET"
        );
        let job = all.last().unwrap();
        let env = &job["spec"]["template"]["spec"]["containers"][0]["env"];
        assert!(
            env.as_array()
                .unwrap()
                .contains(&json!({"name": "KUBECTL_MAINTAIN_SECRET_0",
                "valueFrom": {"secretKeyRef": {"name": s.name, "key": "notify-0"}}})),
            "{env}"
        );
        let shown = yaml(&objects(&s.for_review())).unwrap();
        assert!(
            !shown.contains("SECRET\n") && !shown.contains("services/T/B"),
            "{shown}"
        );
        assert!(
            shown.contains("not shown: the value given to --notify"),
            "{shown}"
        );
        // Pod Security restricted: RuntimeDefault seccomp.
        assert_eq!(
            job["spec"]["template"]["spec"]["securityContext"]["seccompProfile"]["type"],
            "RuntimeDefault"
        );
    }

    #[test]
    fn named_nodes_are_kept_away_from_by_hostname() {
        let terms = away_from(&Targets::Named(vec!["n1".into(), "n2".into()])).unwrap();
        assert_eq!(
            terms[0]["preference"]["matchExpressions"][0]["values"],
            json!(["n1", "n2"])
        );
        assert!(away_from(&Targets::Selector(String::new())).is_none());
    }
}
