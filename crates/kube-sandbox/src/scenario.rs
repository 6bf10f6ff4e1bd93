//! Loading a scenario: ordinary Kubernetes objects as YAML, in several
//! documents or one `v1` `List` (what `kubectl get ... -o yaml` prints), plus
//! an optional `kind: Sandbox` document with the sandbox's settings.

use crate::objects::path::At;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use serde_saphyr::Spanned;

use crate::apiserver::defaults::prepare_new;
use crate::config::SandboxConfig;
use crate::resources::Resource;
use crate::store::Store;

/// The apiVersion of a scenario's `Sandbox` document.
pub const SANDBOX_API_VERSION: &str = "sandbox.kubectl-maintain.io/v1alpha1";

/// Why a scenario could not be read (with file, line and column).
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("{path}: {source}")]
    /// The file could not be read.
    Read {
        /// The scenario file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: {message}")]
    /// The file is not a valid scenario at this place.
    At {
        /// The scenario file.
        path: PathBuf,
        /// Line, from 1.
        line: u64,
        /// Column, from 1.
        column: u64,
        /// What is wrong there.
        message: String,
    },
}

/// A scenario ready to be served.
#[derive(Debug)]
pub struct Scenario {
    /// The objects to store, in load order.
    pub objects: Vec<(Resource, Value)>,
    /// The scenario's own settings, if it has a `sandbox:` section.
    pub config: Option<SandboxConfig>,
}

fn yaml_options() -> serde_saphyr::Options {
    // Scenarios are dumps of whole clusters: far larger than the parser's
    // defaults, which are sized for configuration files.
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_documents: 10_000_000,
            max_nodes: 500_000_000,
            max_events: 2_000_000_000,
            max_total_scalar_bytes: 4 << 30,
            max_reader_input_bytes: Some(4 << 30),
        },
    }
}

/// Reads and parses a scenario file.
pub fn load_file(path: &Path) -> Result<Scenario, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse(path, &text)
}

/// Parses a scenario; `path` names it in errors.
pub fn parse(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
    let at = |line: u64, column: u64, message: String| ScenarioError::At {
        path: path.to_path_buf(),
        line,
        column,
        message,
    };
    let docs: Vec<Spanned<Value>> = serde_saphyr::from_multiple_with_options(text, yaml_options())
        .map_err(|e| {
            let (l, c, m) = kube_conventions::yaml::position(&e);
            at(l, c, m)
        })?;
    let mut scenario = Scenario {
        objects: Vec::new(),
        config: None,
    };
    for doc in docs {
        let (line, col) = (doc.referenced.line(), doc.referenced.column());
        let value = doc.value;
        if value.is_null() {
            continue;
        }
        let kind = value["kind"].as_str().unwrap_or_default();
        match kind {
            "List" => {
                let items = value["items"].as_array().cloned().unwrap_or_default();
                for (i, item) in items.into_iter().enumerate() {
                    let res =
                        classify(&item).map_err(|m| at(line, col, format!("items[{i}]: {m}")))?;
                    scenario.objects.push((res, item));
                }
            }
            "Sandbox" if value["apiVersion"] == SANDBOX_API_VERSION => {
                let spec = value.get("spec").cloned().unwrap_or_else(|| json!({}));
                let config: SandboxConfig = serde_json::from_value(spec)
                    .map_err(|e| at(line, col, format!("Sandbox spec: {e}")))?;
                scenario.config = Some(config);
            }
            _ => {
                let res = classify(&value).map_err(|m| at(line, col, m))?;
                scenario.objects.push((res, value));
            }
        }
    }
    Ok(scenario)
}

fn classify(obj: &Value) -> Result<Resource, String> {
    if !obj.is_object() {
        return Err("a scenario document must be a Kubernetes object".into());
    }
    let api_version = obj["apiVersion"].as_str().unwrap_or_default();
    let kind = obj["kind"].as_str().unwrap_or_default();
    let res = Resource::from_kind(api_version, kind).ok_or_else(|| {
        format!("{api_version}/{kind} is not served by the sandbox (nodes, pods, namespaces, events, poddisruptionbudgets, deployments, replicasets, statefulsets, daemonsets, jobs, persistentvolumes, persistentvolumeclaims, storageclasses)")
    })?;
    let name = obj
        .at("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if name.is_empty() {
        return Err(format!("{kind} without metadata.name"));
    }
    Ok(res)
}

/// Fills in what a hand-written node leaves out so that it is a healthy
/// node, as a registering kubelet would make it.
fn default_node(mut node: Value, minor: &str) -> Value {
    let name = node["metadata"]["name"].clone();
    // The well-known labels a kubelet registers its node with.
    let labels = node["metadata"]
        .as_object_mut()
        .expect("an object")
        .entry("labels")
        .or_insert_with(|| json!({}));
    if let Some(labels) = labels.as_object_mut() {
        for (k, v) in [
            ("kubernetes.io/hostname", name.clone()),
            ("kubernetes.io/os", json!("linux")),
            ("kubernetes.io/arch", json!("amd64")),
        ] {
            labels.entry(k).or_insert(v);
        }
    }
    let st = &mut node["status"];
    if st.get("conditions").is_none() {
        st["conditions"] = json!([{
            "type": "Ready", "status": "True", "reason": "KubeletReady",
            "message": "kubelet is posting ready status",
            "lastHeartbeatTime": crate::clock::now_rfc3339(),
            "lastTransitionTime": crate::clock::now_rfc3339(),
        }]);
    }
    // Every nodeInfo field is a required string of the API (clients such as
    // the Python one refuse a node without them); the kubelet fills them.
    let ids = crate::clock::IdGen::new(crate::clock::fnv1a(
        name.as_str().unwrap_or_default().as_bytes(),
    ));
    let info = [
        ("machineID", json!(ids.uid().replace('-', ""))),
        ("systemUUID", json!(ids.uid())),
        ("bootID", json!(ids.uid())),
        ("kernelVersion", json!("6.1.0-sandbox")),
        ("osImage", json!("Sandbox Linux")),
        ("containerRuntimeVersion", json!("containerd://1.7.0")),
        ("kubeletVersion", json!(format!("v1.{minor}.0"))),
        ("kubeProxyVersion", json!("")),
        ("operatingSystem", json!("linux")),
        ("architecture", json!("amd64")),
    ];
    if !st["nodeInfo"].is_object() {
        st["nodeInfo"] = json!({});
    }
    if let Some(dumped) = st["nodeInfo"].as_object_mut() {
        for (k, v) in info {
            dumped.entry(k).or_insert(v);
        }
    }
    if st.get("allocatable").is_none() {
        st["allocatable"] = json!({"cpu": "8", "memory": "32Gi", "pods": "110"});
        st["capacity"] = json!({"cpu": "8", "memory": "32Gi", "pods": "110"});
    }
    if st.get("addresses").is_none() {
        st["addresses"] = json!([{"type": "Hostname", "address": name}]);
    }
    node
}

/// Loads objects into a store: namespaces that objects live in are made
/// when the scenario does not have them, as a real cluster has them; each
/// object defaulted as the API server would on create, unless `defaulted`
/// (read from one).
pub(crate) fn populate(
    store: &mut Store,
    objects: impl IntoIterator<Item = (Resource, Value)>,
    minor: &str,
    defaulted: bool,
) -> Result<(), String> {
    // One pass, so that a stream of objects is never held whole: a
    // namespace is made when first needed, and replaced by the file's own
    // if the file has it.
    let mut made: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    // Namespaces known to be there, so 150,000 pods do not look theirs up.
    let mut known: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut ensure =
        |store: &mut Store, made: &mut std::collections::BTreeSet<String>, ns: &str| {
            if known.contains(ns) {
                return Ok(());
            }
            known.insert(ns.to_string());
            let key = (String::new(), ns.to_string());
            if store.get(Resource::Namespaces, &key).is_none() {
                let obj = json!({"metadata": {"name": ns},
                    "spec": {"finalizers": [crate::objects::KUBERNETES_FINALIZER]},
                    "status": {"phase": "Active"}});
                store
                    .load(Resource::Namespaces, obj)
                    .map_err(|e| e.message)?;
                made.insert(ns.to_string());
            }
            Ok::<(), String>(())
        };
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        ensure(store, &mut made, ns)?;
    }
    for (res, mut obj) in objects {
        if res.info().namespaced {
            if obj.at("/metadata/namespace").is_none() {
                obj["metadata"]["namespace"] = json!("default");
            }
            let ns = obj["metadata"]["namespace"].as_str().unwrap_or("default");
            ensure(store, &mut made, ns)?;
        }
        // What the apiserver keeps to itself is not loaded back.
        if let Some(m) = obj["metadata"].as_object_mut() {
            m.remove("resourceVersion");
            m.remove("managedFields");
        }
        if res == Resource::Namespaces {
            let name = obj["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            if made.remove(&name) {
                store.unload(res, &(String::new(), name));
            }
        }
        let obj = match res {
            Resource::Nodes => default_node(obj, minor),
            _ if defaulted => obj,
            _ => prepare_new(res, obj),
        };
        store.load(res, obj).map_err(|e| e.message)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_read_from_an_api_server_are_not_defaulted_again() {
        let pod = || {
            json!({"metadata": {"name": "p", "namespace": "a"},
                "spec": {"containers": [{"name": "c", "image": "i"}]}, "status": {"phase": "Running"}})
        };
        let key = ("a".to_string(), "p".to_string());
        for (defaulted, policy) in [(false, Some("Always")), (true, None)] {
            let mut store = Store::new(10);
            populate(&mut store, [(Resource::Pods, pod())], "33", defaulted).unwrap();
            let loaded = store.get(Resource::Pods, &key).unwrap();
            assert_eq!(loaded["spec"]["restartPolicy"].as_str(), policy);
            // Namespaces are made either way.
            assert!(
                store
                    .get(Resource::Namespaces, &(String::new(), "a".into()))
                    .is_some()
            );
        }
    }

    #[test]
    fn multi_document_and_list_scenarios() {
        let text = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n---\napiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p, namespace: a}\n";
        let s = parse(Path::new("s.yaml"), text).unwrap();
        assert_eq!(s.objects.len(), 2);
        assert_eq!(s.objects[1].0, Resource::Pods);
    }

    #[test]
    fn errors_name_file_line_and_column() {
        let bad = "apiVersion: v1\nkind: Node\nmetadata:\n  name: [unclosed\n";
        let err = parse(Path::new("bad.yaml"), bad).unwrap_err().to_string();
        assert!(err.starts_with("bad.yaml:"), "{err}");
        let unknown = "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Widget\nmetadata: {name: b}\n";
        let err = parse(Path::new("s.yaml"), unknown).unwrap_err().to_string();
        assert!(
            err.starts_with("s.yaml:5:1:") || err.starts_with("s.yaml:6:1:"),
            "{err}"
        );
        assert!(err.contains("v1/Widget is not served"), "{err}");
    }

    #[test]
    fn sandbox_document_sets_config() {
        let text = "apiVersion: sandbox.kubectl-maintain.io/v1alpha1\nkind: Sandbox\nspec:\n  kubeVersion: \"1.27\"\n  faults: {error500: 0.5}\n";
        let s = parse(Path::new("s.yaml"), text).unwrap();
        let c = s.config.unwrap();
        assert_eq!(c.minor(), "27");
        assert!((c.faults.error500 - 0.5).abs() < f64::EPSILON);
        let typo = "apiVersion: sandbox.kubectl-maintain.io/v1alpha1\nkind: Sandbox\nspec:\n  kubeVersoin: \"1.27\"\n";
        assert!(
            parse(Path::new("s.yaml"), typo)
                .unwrap_err()
                .to_string()
                .contains("unknown field")
        );
    }
}
