//! Background garbage collection: when an owner is deleted, its dependents
//! (objects whose ownerReferences name its uid) are deleted too
//! (kubernetes pkg/controller/garbagecollector).

use crate::apiserver::deletion::{self, DeleteOptions};
use crate::store::Store;

/// Deletes what the deleted owners with these uids owned.
pub(crate) fn collect(store: &mut Store, deleted_owners: &[String]) {
    for uid in deleted_owners {
        for (res, key) in store.dependents_of(uid) {
            let _ = deletion::delete(store, res, &key, &DeleteOptions::default());
        }
    }
}
