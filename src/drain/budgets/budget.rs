//! A PodDisruptionBudget as the drain reads it: plain data, which the
//! pure node machine and the I/O around it share.

use std::time::Duration;

use k8s_openapi::api::policy::v1::PodDisruptionBudget;

/// Retry a pod held by a budget the drain may not watch this often:
/// kubectl drain's interval between evictions a budget refused.
pub(crate) const UNWATCHED_RETRY: Duration = Duration::from_secs(5);

/// (namespace, name).
pub(crate) type Key = (String, String);

/// A budget's key.
pub(crate) fn key_of(p: &PodDisruptionBudget) -> Key {
    (
        p.metadata.namespace.clone().unwrap_or_default(),
        p.metadata.name.clone().unwrap_or_default(),
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Budget {
    pub(crate) disruptions_allowed: i32,
    pub(crate) current_healthy: i32,
    pub(crate) desired_healthy: i32,
    pub(crate) expected_pods: i32,
    /// The controller has seen the latest spec.
    pub(crate) observed: bool,
}

impl Budget {
    /// Allows no disruption even with every pod healthy (a single replica
    /// behind `minAvailable: 1`, a budget set to the replica count): no
    /// wait ends by itself.
    pub(crate) fn never_allows(&self) -> bool {
        self.disruptions_allowed == 0 && self.desired_healthy >= self.expected_pods
    }

    /// The disruptions it allows now, as a count.
    pub(crate) fn allowed(&self) -> usize {
        usize::try_from(self.disruptions_allowed).unwrap_or(0)
    }

    /// The disruptions it allows with every pod healthy: how many of its
    /// pods may be away at once (the disruption controller's expected
    /// less desired healthy pods), at least one.
    pub(crate) fn at_once(&self) -> usize {
        usize::try_from(self.expected_pods - self.desired_healthy)
            .unwrap_or(0)
            .max(1)
    }

    pub(crate) fn from_pdb(p: &PodDisruptionBudget) -> Self {
        let status = p.status.as_ref();
        let observed = status.and_then(|s| s.observed_generation).unwrap_or(0)
            >= p.metadata.generation.unwrap_or(0);
        status.map_or(
            Budget {
                observed,
                ..Budget::default()
            },
            |s| Budget {
                disruptions_allowed: s.disruptions_allowed.unwrap_or(0),
                current_healthy: s.current_healthy.unwrap_or(0),
                desired_healthy: s.desired_healthy.unwrap_or(0),
                expected_pods: s.expected_pods.unwrap_or(0),
                observed,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_once_is_what_it_allows_with_every_pod_healthy() {
        let b = |allowed, desired, expected| Budget {
            disruptions_allowed: allowed,
            desired_healthy: desired,
            expected_pods: expected,
            ..Budget::default()
        };
        // A quorum of 8 of 10 with one replica away: 1 now, 2 at once.
        assert_eq!((b(1, 8, 10).allowed(), b(1, 8, 10).at_once()), (1, 2));
        // minAvailable equal to the replicas: none ever, counted as one.
        assert_eq!(b(0, 3, 3).at_once(), 1);
    }
}
