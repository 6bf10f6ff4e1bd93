//! What kube-apiserver's eviction subresource decides before it looks at
//! a pod's budgets (pkg/registry/core/pod/storage/eviction.go): a pod
//! that has ended, has not started, or is already being deleted goes
//! whatever its PodDisruptionBudgets say (`canIgnorePDB`), and a pod two
//! budgets select is refused outright.

/// The refusal of a pod more than one budget selects, as the API words it
/// (a 500, or the imperative eviction responder's message since 1.37).
pub const MULTIPLE_BUDGETS: &str = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.";

/// Does the API let this pod go without asking its budgets? `phase` is
/// its `status.phase` (empty when unknown), `terminating` whether it has a
/// deletionTimestamp.
pub fn ignores_budget(phase: &str, terminating: bool) -> bool {
    terminating || matches!(phase, "Succeeded" | "Failed" | "Pending")
}

/// Is this refusal the one of a pod two budgets select?
pub fn is_multiple_budgets(message: &str) -> bool {
    message.contains("more than one PodDisruptionBudget")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ended_unstarted_and_terminating_pods_go_without_their_budget() {
        for phase in ["Succeeded", "Failed", "Pending"] {
            assert!(ignores_budget(phase, false), "{phase}");
        }
        assert!(ignores_budget("Running", true));
        assert!(!ignores_budget("Running", false));
        assert!(!ignores_budget("", false), "unknown: the budget decides");
        assert!(is_multiple_budgets(MULTIPLE_BUDGETS));
    }
}
