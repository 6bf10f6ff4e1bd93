//! What a list, a watch and a collection's deletion select: the stored
//! objects in key order, pods by node from the store's index; and whether
//! the client asked for a Table.

use crate::apiserver::query::ListOptions;
use crate::resources::Resource;
use crate::store::{Key, Store};
use crate::stored::Stored;

/// `Accept: ...;as=Table` (`kubectl get`).
pub(in crate::apiserver) fn wants_table(accept: &str) -> bool {
    accept.contains("as=Table")
}

/// The stored objects a list (or a watch's initial events) selects, in key
/// order after `after`: a pod list by `spec.nodeName` is answered from the
/// node index; a pod is matched by the facts the store keeps of it where
/// they say enough (labels and `spec.nodeName`), and only another selector
/// makes an object be parsed, under the store's lock.
pub(in crate::apiserver) fn selected<'a>(
    store: &'a Store,
    res: Resource,
    ns: Option<&'a str>,
    opts: &'a ListOptions,
    after: Option<&Key>,
) -> Box<dyn Iterator<Item = (Key, &'a Stored)> + 'a> {
    let everything = opts.selects_everything();
    let wanted = move |k: &Key, d: &Stored| {
        everything
            || (res == Resource::Pods)
                .then(|| store.pod_facts_of(k).and_then(|f| opts.matches_facts(f)))
                .flatten()
                .unwrap_or_else(|| opts.matches(res, &d.value()))
    };
    let by_node = (res == Resource::Pods).then(|| opts.node_name()).flatten();
    if let Some(node) = by_node {
        let after = after.cloned();
        let keys = store
            .pods_on_node(node)
            .into_iter()
            .filter(move |k| ns.is_none_or(|n| n == k.0) && after.as_ref().is_none_or(|a| k > a));
        return Box::new(keys.filter_map(move |k| {
            let d = store.doc(Resource::Pods, &k)?;
            wanted(&k, d).then_some((k, d))
        }));
    }
    Box::new(
        store
            .docs(res, ns, after)
            .filter(move |(k, d)| wanted(k, d))
            .map(|(k, d)| (k.clone(), d)),
    )
}
