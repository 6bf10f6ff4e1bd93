//! Pod Security admission, as kube-apiserver's PodSecurity plugin enforces
//! it (kubernetes staging/src/k8s.io/pod-security-admission: admission.go
//! refuses a pod its namespace's `pod-security.kubernetes.io/enforce`
//! level forbids; policy/registry.go runs the baseline checks, then, for
//! `restricted`, the restricted ones in place of the baseline checks they
//! supersede; policy/check_*.go, one check each).
//!
//! Checked: host namespaces, hostPath volumes, host ports, privileged
//! containers, added capabilities, seccomp (baseline); privilege
//! escalation, dropped capabilities, volume types, runAsNonRoot,
//! runAsUser=0, seccomp (restricted). Not checked: AppArmor, SELinux,
//! procMount, sysctls, Windows host processes, probes' hosts; the
//! `enforce-version` label (every level is `latest`); `warn` and `audit`.

use serde_json::Value;

use crate::api_error::ApiError;
use crate::objects::path::At;
use crate::resources::Resource;
use crate::store::Store;

/// The namespace label that names the level enforced.
pub(crate) const ENFORCE: &str = "pod-security.kubernetes.io/enforce";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Baseline,
    Restricted,
}

/// A forbidden reason and its detail (policy/checks.go `CheckResult`).
type Violation = (&'static str, String);

/// Refuses a pod the level of its namespace forbids, in the apiserver's words.
pub(crate) fn admit(store: &Store, pod: &Value) -> Result<(), ApiError> {
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or("default");
    let ns = store.get(Resource::Namespaces, &(String::new(), namespace.into()));
    let level = match ns
        .as_ref()
        .and_then(|n| n.at(&format!("/metadata/labels/{}", ENFORCE.replace('/', "~1"))))
        .and_then(Value::as_str)
    {
        Some("restricted") => Level::Restricted,
        Some("baseline") => Level::Baseline,
        _ => return Ok(()),
    };
    let violations = check(level, &pod["spec"]);
    if violations.is_empty() {
        return Ok(());
    }
    let name = pod["metadata"]["name"]
        .as_str()
        .or_else(|| pod["metadata"]["generateName"].as_str())
        .unwrap_or_default();
    let level = match level {
        Level::Baseline => "baseline",
        Level::Restricted => "restricted",
    };
    let reasons: Vec<String> = violations
        .iter()
        .map(|(reason, detail)| format!("{reason} ({detail})"))
        .collect();
    Err(ApiError::new(
        403,
        "Forbidden",
        format!(
            "pods {name:?} is forbidden: violates PodSecurity \"{level}:latest\": {}",
            reasons.join(", ")
        ),
    )
    .with_details(serde_json::json!({"name": name, "kind": "pods"})))
}

/// Every container of the pod: init, regular and ephemeral.
fn containers(spec: &Value) -> impl Iterator<Item = &Value> {
    ["initContainers", "containers", "ephemeralContainers"]
        .into_iter()
        .flat_map(move |k| spec[k].as_array().into_iter().flatten())
}

fn name(c: &Value) -> String {
    c["name"].as_str().unwrap_or_default().to_string()
}

/// `container "a"` or `containers "a", "b"` (policy/helpers.go).
fn quoted(noun: &str, names: &[String]) -> String {
    let list: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
    let plural = if names.len() == 1 { "" } else { "s" };
    format!("{noun}{plural} {}", list.join(", "))
}

/// The violations of `spec` at `level`, in the registry's order.
fn check(level: Level, spec: &Value) -> Vec<Violation> {
    let restricted = level == Level::Restricted;
    let mut out = Vec::new();
    // Baseline (the superseded ones only below `restricted`).
    if !restricted {
        out.extend(capabilities_baseline(spec));
    }
    out.extend(host_namespaces(spec));
    if !restricted {
        out.extend(host_path_volumes(spec));
    }
    out.extend(host_ports(spec));
    out.extend(privileged(spec));
    if !restricted {
        out.extend(seccomp_baseline(spec));
    }
    if restricted {
        out.extend(allow_privilege_escalation(spec));
        out.extend(capabilities_restricted(spec));
        out.extend(restricted_volumes(spec));
        out.extend(run_as_non_root(spec));
        out.extend(run_as_user(spec));
        out.extend(seccomp_restricted(spec));
    }
    out
}

/// check_capabilities_baseline.go: only the runtime's default set may be added.
fn capabilities_baseline(spec: &Value) -> Option<Violation> {
    const ALLOWED: [&str; 13] = [
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    ];
    added_beyond(spec, &ALLOWED, "non-default capabilities")
}

/// Containers adding a capability outside `allowed`.
fn added_beyond(spec: &Value, allowed: &[&str], reason: &'static str) -> Option<Violation> {
    let mut bad = Vec::new();
    let mut caps = std::collections::BTreeSet::new();
    for c in containers(spec) {
        let added: Vec<&str> = c
            .at("/securityContext/capabilities/add")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|cap| !allowed.contains(cap))
            .collect();
        if !added.is_empty() {
            bad.push(name(c));
            caps.extend(added.into_iter().map(|c| format!("{c:?}")));
        }
    }
    (!bad.is_empty()).then(|| {
        let caps: Vec<String> = caps.into_iter().collect();
        (
            reason,
            format!(
                "{} must not include {} in securityContext.capabilities.add",
                quoted("container", &bad),
                caps.join(", ")
            ),
        )
    })
}

/// check_hostNamespaces.go.
fn host_namespaces(spec: &Value) -> Option<Violation> {
    let set: Vec<String> = ["hostNetwork", "hostPID", "hostIPC"]
        .into_iter()
        .filter(|k| spec[*k] == true)
        .map(|k| format!("{k}=true"))
        .collect();
    (!set.is_empty()).then(|| ("host namespaces", set.join(", ")))
}

fn volumes(spec: &Value) -> impl Iterator<Item = &Value> {
    spec["volumes"].as_array().into_iter().flatten()
}

/// check_hostPathVolumes.go.
fn host_path_volumes(spec: &Value) -> Option<Violation> {
    let bad: Vec<String> = volumes(spec)
        .filter(|v| v.get("hostPath").is_some())
        .map(name)
        .collect();
    (!bad.is_empty()).then(|| ("hostPath volumes", quoted("volume", &bad)))
}

/// check_hostPorts.go.
fn host_ports(spec: &Value) -> Option<Violation> {
    let mut bad = Vec::new();
    let mut ports = Vec::new();
    for c in containers(spec) {
        let used: Vec<String> = c["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["hostPort"].as_i64().filter(|n| *n != 0))
            .map(|n| n.to_string())
            .collect();
        if !used.is_empty() {
            bad.push(name(c));
            ports.extend(used);
        }
    }
    (!bad.is_empty()).then(|| {
        let noun = if ports.len() == 1 {
            "hostPort"
        } else {
            "hostPorts"
        };
        (
            "hostPort",
            format!(
                "{} uses {noun} {}",
                quoted("container", &bad),
                ports.join(", ")
            ),
        )
    })
}

/// check_privileged.go.
fn privileged(spec: &Value) -> Option<Violation> {
    let bad: Vec<String> = containers(spec)
        .filter(|c| c.at("/securityContext/privileged") == Some(&Value::Bool(true)))
        .map(name)
        .collect();
    (!bad.is_empty()).then(|| {
        (
            "privileged",
            format!(
                "{} must not set securityContext.privileged=true",
                quoted("container", &bad)
            ),
        )
    })
}

fn seccomp_type(context: &Value) -> Option<&str> {
    context.at("/securityContext/seccompProfile/type")?.as_str()
}

/// check_seccompProfile_baseline.go: `Unconfined` is refused.
fn seccomp_baseline(spec: &Value) -> Option<Violation> {
    let mut setters = Vec::new();
    if seccomp_type(spec) == Some("Unconfined") {
        setters.push("pod".to_string());
    }
    let bad: Vec<String> = containers(spec)
        .filter(|c| seccomp_type(c) == Some("Unconfined"))
        .map(name)
        .collect();
    if !bad.is_empty() {
        setters.push(quoted("container", &bad));
    }
    (!setters.is_empty()).then(|| {
        (
            "seccompProfile",
            format!(
                "{} must not set securityContext.seccompProfile.type to \"Unconfined\"",
                setters.join(" and ")
            ),
        )
    })
}

/// check_allowPrivilegeEscalation.go.
fn allow_privilege_escalation(spec: &Value) -> Option<Violation> {
    let bad: Vec<String> = containers(spec)
        .filter(|c| c.at("/securityContext/allowPrivilegeEscalation") != Some(&Value::Bool(false)))
        .map(name)
        .collect();
    (!bad.is_empty()).then(|| {
        (
            "allowPrivilegeEscalation != false",
            format!(
                "{} must set securityContext.allowPrivilegeEscalation=false",
                quoted("container", &bad)
            ),
        )
    })
}

/// check_capabilities_restricted.go: drop ALL, add at most NET_BIND_SERVICE.
fn capabilities_restricted(spec: &Value) -> Option<Violation> {
    let missing: Vec<String> = containers(spec)
        .filter(|c| {
            !c.at("/securityContext/capabilities/drop")
                .and_then(Value::as_array)
                .is_some_and(|d| d.iter().any(|x| x == "ALL"))
        })
        .map(name)
        .collect();
    let mut details = Vec::new();
    if !missing.is_empty() {
        details.push(format!(
            "{} must set securityContext.capabilities.drop=[\"ALL\"]",
            quoted("container", &missing)
        ));
    }
    if let Some((_, added)) = added_beyond(spec, &["NET_BIND_SERVICE"], "") {
        details.push(added);
    }
    (!details.is_empty()).then(|| ("unrestricted capabilities", details.join("; ")))
}

/// check_restrictedVolumes.go: the volume types a restricted pod may use.
fn restricted_volumes(spec: &Value) -> Option<Violation> {
    const ALLOWED: [&str; 8] = [
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    ];
    let bad: std::collections::BTreeSet<String> = volumes(spec)
        .filter(|v| {
            v.as_object().is_some_and(|o| {
                o.keys()
                    .any(|k| k != "name" && !ALLOWED.contains(&k.as_str()))
            })
        })
        .map(|v| format!("{:?}", name(v)))
        .collect();
    (!bad.is_empty()).then(|| {
        let list: Vec<String> = bad.into_iter().collect();
        (
            "restricted volume types",
            format!("volumes [{}] have restricted types", list.join(" ")),
        )
    })
}

/// A pod-level setting that containers inherit unless they set their own:
/// who sets a bad value explicitly, and who is left without a good one.
fn inherited(
    spec: &Value,
    field: &str,
    good: impl Fn(&Value) -> bool,
) -> (Vec<String>, Vec<String>) {
    let pointer = format!("/securityContext/{field}");
    let mut explicit = Vec::new();
    let pod = spec.at(&pointer);
    let pod_good = pod.is_some_and(&good);
    if pod.is_some() && !pod_good {
        explicit.push("pod".to_string());
    }
    let mut bad = Vec::new();
    let mut implicit = Vec::new();
    for c in containers(spec) {
        match c.at(&pointer) {
            Some(v) if !good(v) => bad.push(name(c)),
            None if !pod_good => implicit.push(name(c)),
            _ => {}
        }
    }
    if !bad.is_empty() {
        explicit.push(quoted("container", &bad));
    }
    (explicit, implicit)
}

/// check_runAsNonRoot.go.
fn run_as_non_root(spec: &Value) -> Option<Violation> {
    let (explicit, implicit) = inherited(spec, "runAsNonRoot", |v| v == true);
    let reason = "runAsNonRoot != true";
    if !explicit.is_empty() {
        return Some((
            reason,
            format!(
                "{} must not set securityContext.runAsNonRoot=false",
                explicit.join(" and ")
            ),
        ));
    }
    (!implicit.is_empty()).then(|| {
        (
            reason,
            format!(
                "pod or {} must set securityContext.runAsNonRoot=true",
                quoted("container", &implicit)
            ),
        )
    })
}

/// check_runAsUser.go.
fn run_as_user(spec: &Value) -> Option<Violation> {
    let root = |c: &Value| c.at("/securityContext/runAsUser").and_then(Value::as_i64) == Some(0);
    let mut setters = Vec::new();
    if root(spec) {
        setters.push("pod".to_string());
    }
    let bad: Vec<String> = containers(spec).filter(|c| root(c)).map(name).collect();
    if !bad.is_empty() {
        setters.push(quoted("container", &bad));
    }
    (!setters.is_empty()).then(|| {
        (
            "runAsUser=0",
            format!("{} must not set runAsUser=0", setters.join(" and ")),
        )
    })
}

/// check_seccompProfile_restricted.go.
fn seccomp_restricted(spec: &Value) -> Option<Violation> {
    let valid = |v: &Value| v["type"] == "RuntimeDefault" || v["type"] == "Localhost";
    let (explicit, implicit) = inherited(spec, "seccompProfile", valid);
    if !explicit.is_empty() {
        let mut values: Vec<String> = std::iter::once(spec)
            .chain(containers(spec))
            .filter_map(seccomp_type)
            .filter(|t| *t != "RuntimeDefault" && *t != "Localhost")
            .map(|t| format!("{t:?}"))
            .collect();
        values.sort();
        values.dedup();
        return Some((
            "seccompProfile",
            format!(
                "{} must not set securityContext.seccompProfile.type to {}",
                explicit.join(" and "),
                values.join(", ")
            ),
        ));
    }
    (!implicit.is_empty()).then(|| {
        (
            "seccompProfile",
            format!(
                "pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\"",
                quoted("container", &implicit)
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reasons(level: Level, spec: &Value) -> Vec<String> {
        check(level, spec)
            .into_iter()
            .map(|(r, d)| format!("{r} ({d})"))
            .collect()
    }

    #[test]
    fn a_bare_pod_violates_restricted_four_ways_and_baseline_none() {
        let spec = json!({"containers": [{"name": "c", "image": "x"}]});
        assert_eq!(
            reasons(Level::Restricted, &spec),
            [
                r#"allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false)"#,
                r#"unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"])"#,
                r#"runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true)"#,
                r#"seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")"#,
            ]
        );
        assert!(reasons(Level::Baseline, &spec).is_empty());
    }

    #[test]
    fn a_hardened_pod_passes_restricted() {
        let spec = json!({
            "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}, "runAsNonRoot": true},
            "volumes": [{"name": "run", "secret": {"secretName": "s"}}],
            "containers": [{"name": "c", "securityContext": {
                "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}, "runAsUser": 65532}}],
        });
        assert!(reasons(Level::Restricted, &spec).is_empty());
    }

    #[test]
    fn baseline_refuses_host_access_and_privilege() {
        let spec = json!({
            "hostNetwork": true, "hostPID": true,
            "volumes": [{"name": "root", "hostPath": {"path": "/"}}],
            "containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 80}],
                "securityContext": {"privileged": true, "capabilities": {"add": ["SYS_ADMIN", "CHOWN"]}}}],
        });
        assert_eq!(
            reasons(Level::Baseline, &spec),
            [
                r#"non-default capabilities (container "c" must not include "SYS_ADMIN" in securityContext.capabilities.add)"#,
                "host namespaces (hostNetwork=true, hostPID=true)",
                r#"hostPath volumes (volume "root")"#,
                r#"hostPort (container "c" uses hostPort 80)"#,
                r#"privileged (container "c" must not set securityContext.privileged=true)"#,
            ]
        );
        let restricted = reasons(Level::Restricted, &spec);
        assert!(
            restricted.contains(
                &r#"restricted volume types (volumes ["root"] have restricted types)"#.to_string()
            ),
            "{restricted:?}"
        );
    }

    #[test]
    fn explicit_bad_values_are_named_with_their_setters() {
        let spec = json!({
            "securityContext": {"runAsNonRoot": false, "runAsUser": 0, "seccompProfile": {"type": "Unconfined"}},
            "containers": [{"name": "c", "securityContext": {"allowPrivilegeEscalation": false,
                "capabilities": {"drop": ["ALL"]}}}],
        });
        assert_eq!(
            reasons(Level::Restricted, &spec),
            [
                "runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false)",
                "runAsUser=0 (pod must not set runAsUser=0)",
                r#"seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")"#,
            ]
        );
    }
}
