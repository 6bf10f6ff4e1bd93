//! The namespace controller (kube-controller-manager's
//! pkg/controller/namespace/namespace_controller.go and
//! deletion/namespaced_resources_deleter.go, read): a namespace being
//! deleted (its deletionTimestamp set, phase `Terminating`, kept by the
//! `kubernetes` entry of its `spec.finalizers`) has every namespaced object
//! in it deleted, pods with their own grace period as the deleter's
//! DeleteCollection asks, and the controller looks again as they go. Once
//! nothing is left it removes its `kubernetes` finalizer (the `finalize`
//! subresource), and the namespace is gone unless `metadata.finalizers`
//! still hold it. Objects that their own finalizers hold keep the namespace
//! Terminating, as they do in a cluster.

use crate::objects::path::At;
use serde_json::{Value, json};

use super::work::{Changed, Work};
use crate::apiserver::deletion::{self, DeleteOptions};
use crate::objects::pods;
use crate::resources::Resource;
use crate::store::Store;

use crate::objects::KUBERNETES_FINALIZER as KUBERNETES;

pub(crate) fn triggers(c: &Changed<'_>, work: &mut Work) {
    if c.resource == Resource::Namespaces {
        if c.new.is_some_and(pods::is_terminating) {
            work.namespaces.insert(c.key.1.clone());
        }
    } else if c.new.is_none() && c.resource.info().namespaced {
        // Something left a namespace: the one being deleted may be empty now.
        work.namespaces.insert(c.key.0.clone());
    }
}

/// Deletes what is left in a namespace being deleted, then finalizes it.
pub(crate) fn reconcile(store: &mut Store, namespace: &str) {
    let key = (String::new(), namespace.to_string());
    let Some(ns) = store.get(Resource::Namespaces, &key) else {
        return;
    };
    if !pods::is_terminating(&ns) {
        return;
    }
    if ns.at("/status/phase").and_then(Value::as_str) != Some("Terminating") {
        let _ = store.modify(Resource::Namespaces, &key, |n| {
            n["status"]["phase"] = json!("Terminating");
        });
    }
    let mut left = 0;
    for res in Resource::ALL
        .into_iter()
        .filter(|r| r.info().namespaced && *r != Resource::Events)
    {
        let keys: Vec<_> = store
            .iter(res, Some(namespace), None)
            .map(|(k, _)| k.clone())
            .collect();
        for k in keys {
            let still = match store.get(res, &k) {
                Some(o) if pods::is_terminating(&o) => true,
                Some(_) => matches!(
                    deletion::delete(store, res, &k, &DeleteOptions::default()),
                    Ok(deletion::Deleted::Terminating(_))
                ),
                None => false,
            };
            left += usize::from(still);
        }
    }
    if left > 0 {
        return;
    }
    // Events go with the namespace.
    let events: Vec<_> = store
        .iter(Resource::Events, Some(namespace), None)
        .map(|(k, _)| k.clone())
        .collect();
    for k in events {
        store.remove(Resource::Events, &k);
    }
    let _ = store.modify(Resource::Namespaces, &key, |n| {
        if let Some(f) = n
            .pointer_mut("/spec/finalizers")
            .and_then(Value::as_array_mut)
        {
            f.retain(|v| v != KUBERNETES);
        }
    });
    deletion::finish_if_released(store, Resource::Namespaces, &key);
}
