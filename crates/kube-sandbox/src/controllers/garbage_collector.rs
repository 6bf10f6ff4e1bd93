//! Background garbage collection: when an owner is deleted, its dependents
//! (objects whose ownerReferences name its uid) are deleted too
//! (kubernetes pkg/controller/garbagecollector).

use super::work::{Changed, Work};
use crate::apiserver::deletion::{self, DeleteOptions};
use crate::resources::Resource;
use crate::store::Store;

/// An owner deleted. Collection scans every object for owner references,
/// so only owners' deletions ask for it: pods and events own nothing.
pub(crate) fn triggers(c: &Changed<'_>, work: &mut Work) {
    if c.new.is_none()
        && !matches!(c.resource, Resource::Pods | Resource::Events)
        && let Some(uid) = c.object()["metadata"]["uid"].as_str()
    {
        work.gc.push(uid.to_string());
    }
}

/// Deletes what the deleted owners with these uids owned.
pub(crate) fn collect(store: &mut Store, deleted_owners: &[String]) {
    for uid in deleted_owners {
        for (res, key) in store.dependents_of(uid) {
            let _ = deletion::delete(store, res, &key, &DeleteOptions::default());
        }
    }
}
