//! `--assume-times FILE`: what the operator knows of each workload's real
//! shutdown and readiness, for the prediction's timing model. Read and
//! checked before anything talks to the cluster; every mistake names the
//! file, line and column.
//!
//! ```yaml
//! apiVersion: kubectl-maintain.io/v1alpha1
//! kind: WorkloadTimes
//! times:
//! - workload: shop/Deployment/web      # NAMESPACE/KIND/NAME, `*` for any part
//!   shutdown: 45s
//!   ready: 2m
//! - workload: "*/StatefulSet/*"
//!   ready: 5m
//! ```

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::policy::plan::file::{API_VERSION, PlanError, read_small};

pub(crate) const KIND: &str = "WorkloadTimes";
/// The kinds whose pods a workload entry can name.
const KINDS: &[&str] = &[
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "ReplicationController",
    "Job",
];

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Doc {
    api_version: String,
    kind: String,
    times: Vec<Spanned<EntryDoc>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryDoc {
    workload: String,
    shutdown: Option<String>,
    ready: Option<String>,
}

/// One entry: the workloads it names and the times it gives their pods.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WorkloadTimes {
    /// `None` for `*`.
    pub(crate) namespace: Option<String>,
    pub(crate) kind: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) shutdown: Option<Duration>,
    pub(crate) ready: Option<Duration>,
}

impl WorkloadTimes {
    /// Does this entry name the workload `kind` `namespace/name`?
    pub(crate) fn names(&self, namespace: &str, kind: &str, name: &str) -> bool {
        let fits = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        fits(&self.namespace, namespace) && fits(&self.kind, kind) && fits(&self.name, name)
    }
}

pub(crate) fn load(path: &Path) -> Result<Vec<WorkloadTimes>, PlanError> {
    let (file, text) = read_small(path, "the workload times")?;
    parse(&file, &text)
}

pub(crate) fn parse(file: &str, text: &str) -> Result<Vec<WorkloadTimes>, PlanError> {
    let at = |loc: serde_saphyr::Location, message: String, hint: Option<&str>| PlanError {
        file: file.to_string(),
        line: loc.line(),
        column: loc.column(),
        message,
        hint: hint.map(str::to_string),
    };
    let doc: Spanned<Doc> = serde_saphyr::from_str(text).map_err(|e| {
        let (line, column, message) = kube_conventions::yaml::position(&e);
        PlanError {
            file: file.to_string(),
            line,
            column,
            hint: message.contains("unknown field").then(|| {
                "a WorkloadTimes file has apiVersion, kind and times; each time has workload, shutdown and ready".to_string()
            }),
            message,
        }
    })?;
    if doc.value.api_version != API_VERSION || doc.value.kind != KIND {
        return Err(at(
            doc.referenced,
            format!(
                "expected apiVersion {API_VERSION} and kind {KIND}, found {} {}",
                doc.value.api_version, doc.value.kind
            ),
            Some(
                "start the file with `apiVersion: kubectl-maintain.io/v1alpha1` and `kind: WorkloadTimes`",
            ),
        ));
    }
    doc.value
        .times
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let loc = e.referenced;
            let d = &e.value;
            let parts: Vec<&str> = d.workload.split('/').collect();
            let [namespace, kind, name] = parts[..] else {
                return Err(at(
                    loc,
                    format!(
                        "times[{i}].workload: {:?} is not NAMESPACE/KIND/NAME",
                        d.workload
                    ),
                    Some(
                        "for example shop/Deployment/web, or */StatefulSet/* for every StatefulSet",
                    ),
                ));
            };
            if kind != "*" && !KINDS.contains(&kind) {
                return Err(at(
                    loc,
                    format!("times[{i}].workload: {kind:?} is not a kind whose pods this can time"),
                    Some(&format!("one of {}", KINDS.join(", "))),
                ));
            }
            let duration = |field: &str, v: &Option<String>| {
                v.as_deref()
                    .map(crate::duration::parse)
                    .transpose()
                    .map_err(|e| at(loc, format!("times[{i}].{field}: {e}"), None))
            };
            let entry = WorkloadTimes {
                namespace: (namespace != "*").then(|| namespace.to_string()),
                kind: (kind != "*").then(|| kind.to_string()),
                name: (name != "*").then(|| name.to_string()),
                shutdown: duration("shutdown", &d.shutdown)?,
                ready: duration("ready", &d.ready)?,
            };
            if entry.shutdown.is_none() && entry.ready.is_none() {
                return Err(at(
                    loc,
                    format!("times[{i}]: give shutdown, ready or both"),
                    None,
                ));
            }
            Ok(entry)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "apiVersion: kubectl-maintain.io/v1alpha1\nkind: WorkloadTimes\ntimes:\n";

    #[test]
    fn entries_name_workloads_with_wildcards() {
        let text = format!(
            "{HEAD}- workload: shop/Deployment/web\n  shutdown: 45s\n  ready: 2m\n- workload: \"*/StatefulSet/*\"\n  ready: 5m\n"
        );
        let times = parse("t.yaml", &text).unwrap();
        assert_eq!(times[0].shutdown, Some(Duration::from_secs(45)));
        assert_eq!(times[0].ready, Some(Duration::from_secs(120)));
        assert!(times[0].names("shop", "Deployment", "web"));
        assert!(!times[0].names("shop", "Deployment", "api"));
        assert!(times[1].names("db", "StatefulSet", "pg"));
        assert!(!times[1].names("db", "Deployment", "pg"));
        assert_eq!(times[1].shutdown, None);
    }

    #[test]
    fn mistakes_name_their_line() {
        let bad_kind = format!(
            "{HEAD}- workload: shop/Deployment/web\n  ready: 1m\n- workload: shop/Service/web\n  ready: 1m\n"
        );
        let e = parse("t.yaml", &bad_kind).unwrap_err();
        assert_eq!(e.line, 6, "{e}");
        assert!(e.message.contains("\"Service\" is not a kind"), "{e}");
        let bad_shape = format!("{HEAD}- workload: web\n  ready: 1m\n");
        assert!(
            parse("t.yaml", &bad_shape)
                .unwrap_err()
                .message
                .contains("NAMESPACE/KIND/NAME")
        );
        let typo = format!("{HEAD}- workload: a/Job/b\n  redy: 1m\n");
        let e = parse("t.yaml", &typo).unwrap_err();
        assert_eq!(e.line, 5, "{e}");
        assert!(e.to_string().contains("hint:"), "{e}");
        let bad_time = format!("{HEAD}- workload: a/Job/b\n  ready: soon\n");
        assert!(
            parse("t.yaml", &bad_time)
                .unwrap_err()
                .message
                .starts_with("times[0].ready:")
        );
        let nothing = format!("{HEAD}- workload: a/Job/b\n");
        assert!(
            parse("t.yaml", &nothing)
                .unwrap_err()
                .message
                .contains("give shutdown")
        );
        let wrong_kind = "apiVersion: kubectl-maintain.io/v1alpha1\nkind: DrainPlan\ntimes: []\n";
        assert!(
            parse("t.yaml", wrong_kind)
                .unwrap_err()
                .message
                .contains("kind WorkloadTimes")
        );
    }
}
