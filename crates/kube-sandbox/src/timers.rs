//! One queue for every delayed action of the simulation (a pod starting,
//! completing, stopping; a VM migrating), instead of a task per timer: a
//! 150,000-pod scenario keeps one heap, not 150,000 sleeping tasks. `Timer`
//! says what each is; the simulation loop fires it.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use tokio::time::Instant;

use crate::store::Key;

/// What the kubelets and controllers do later.
#[derive(Debug)]
pub(crate) enum Timer {
    Start {
        key: Key,
        uid: String,
        ready: bool,
    },
    Complete {
        key: Key,
        uid: String,
    },
    Stop {
        key: Key,
        uid: String,
    },
    Evacuate {
        key: Key,
        uid: String,
    },
    /// The Strimzi Cluster Operator rolls a pod its Drain Cleaner annotated.
    StrimziRoll {
        key: Key,
        uid: String,
    },
    /// A NoExecute taint's eviction, once the pod's toleration ran out.
    TaintEvict {
        key: Key,
        uid: String,
    },
    /// The kubelet begins stopping a deleted pod (its Killing Events).
    Kill {
        key: Key,
        uid: String,
    },
    /// A volume's last pod on a node left: it detaches.
    Detach {
        name: String,
    },
    /// A pod's active eviction responder acts again (retries, heart-beats,
    /// finishes).
    EvictionStep {
        key: Key,
    },
    /// A node shutting down gracefully is off.
    PowerOff {
        node: String,
    },
    /// A rebooting node's kubelet is back.
    Boot {
        node: String,
    },
    /// A stopped kubelet's grace period ran out: its node goes Unknown.
    Silent {
        node: String,
    },
    /// The pod garbage collector's pass over an out-of-service node.
    PodGc {
        node: String,
    },
    /// cluster-autoscaler looks at the nodes.
    AutoscalerScan,
    /// The pod garbage collector's pass over a deleted node's pods.
    Orphans {
        node: String,
    },
    /// After a reboot, the kubelet restarts a running pod's containers.
    Restart {
        key: Key,
        uid: String,
        ready: bool,
    },
}

/// Items due at an instant, taken in time order (first in, first out at
/// the same instant).
pub(crate) struct TimerQueue<T> {
    heap: BinaryHeap<Reverse<(Instant, u64, Slot<T>)>>,
    seq: u64,
}

/// Keeps `T` out of the heap's ordering.
struct Slot<T>(T);

impl<T> PartialEq for Slot<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl<T> Eq for Slot<T> {}
impl<T> PartialOrd for Slot<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Slot<T> {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

impl<T> TimerQueue<T> {
    pub(crate) fn new() -> Self {
        TimerQueue {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }

    pub(crate) fn push(&mut self, at: Instant, item: T) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, Slot(item))));
    }

    /// When the next item is due, if any.
    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse((at, _, _))| *at)
    }

    /// Every item due at or before `now`, in order, with when it was due.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Vec<(Instant, T)> {
        let mut due = Vec::new();
        while self.next_due().is_some_and(|at| at <= now) {
            let Reverse((at, _, Slot(item))) = self.heap.pop().expect("peeked");
            due.push((at, item));
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn items_come_out_in_time_order_then_insertion_order() {
        let t0 = Instant::now();
        let mut q = TimerQueue::new();
        q.push(t0 + Duration::from_secs(2), "late");
        q.push(t0 + Duration::from_secs(1), "first");
        q.push(t0 + Duration::from_secs(1), "second");
        assert_eq!(q.next_due(), Some(t0 + Duration::from_secs(1)));
        let items =
            |due: Vec<(Instant, &'static str)>| due.into_iter().map(|(_, i)| i).collect::<Vec<_>>();
        assert!(q.pop_due(t0).is_empty());
        assert_eq!(
            items(q.pop_due(t0 + Duration::from_secs(1))),
            ["first", "second"]
        );
        assert_eq!(
            q.pop_due(t0 + Duration::from_secs(5)),
            [(t0 + Duration::from_secs(2), "late")]
        );
        assert_eq!(q.next_due(), None);
    }
}
