//! A pod's identity in the drain: namespace and name, kept apart instead
//! of a `"ns/name"` string split again wherever it is used.

use std::fmt;

use k8s_openapi::api::core::v1::Pod;
use serde::{Serialize, Serializer};

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct PodKey {
    pub(crate) namespace: String,
    pub(crate) name: String,
}

impl PodKey {
    pub(crate) fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        PodKey {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    pub(crate) fn of(pod: &Pod) -> Self {
        PodKey::new(
            pod.metadata.namespace.as_deref().unwrap_or_default(),
            pod.metadata.name.as_deref().unwrap_or_default(),
        )
    }
}

/// `namespace/name`, as kubectl prints pods.
impl fmt::Display for PodKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// Reports carry `namespace/name` (docs/report.md).
impl Serialize for PodKey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The pod's uid, "" when it has none.
pub(crate) fn uid(p: &Pod) -> &str {
    p.metadata.uid.as_deref().unwrap_or_default()
}
