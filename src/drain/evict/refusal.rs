//! How kube-apiserver words a budget's refusal of an eviction, read by
//! both ways of evicting (the subresource's 429, and the imperative
//! responder's message on an EvictionRequest's Eviction).

/// The message of kube-apiserver's 429 for an eviction a budget refuses
/// (pkg/registry/core/pod/storage/eviction.go), which kubectl prints.
pub(crate) const PDB_REFUSAL: &str =
    "Cannot evict pod as it would violate the pod's disruption budget.";

/// The budget a refusal's cause names (`The disruption budget web needs
/// ...`).
pub(crate) fn pdb_name_from_cause(message: &str) -> Option<String> {
    let rest = message.strip_prefix("The disruption budget ")?;
    rest.split_whitespace().next().map(str::to_string)
}
