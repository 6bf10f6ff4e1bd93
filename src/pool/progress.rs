//! The run's count of nodes: done of all, and those in progress, kept by
//! the runner and read for every line a node's job says.

use std::collections::BTreeSet;
use std::sync::Mutex;

#[derive(Default)]
pub(crate) struct Progress(Mutex<Counts>);

#[derive(Default)]
struct Counts {
    total: usize,
    done: usize,
    in_progress: BTreeSet<String>,
}

impl Progress {
    pub(crate) fn new(total: usize) -> Self {
        Progress(Mutex::new(Counts {
            total,
            ..Counts::default()
        }))
    }

    fn counts(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.0.lock().expect("progress")
    }

    pub(crate) fn started(&self, node: &str) {
        self.counts().in_progress.insert(node.to_string());
    }

    /// The node's job ended, done or not.
    pub(crate) fn ended(&self, node: &str, done: bool) {
        let mut c = self.counts();
        c.in_progress.remove(node);
        c.done += usize::from(done);
    }

    /// Done by an earlier run.
    pub(crate) fn done_before(&self) {
        self.counts().done += 1;
    }

    /// The pool's count, said with every line of a run: nodes done of
    /// all, and how many are in progress (each line names its own node,
    /// and the bars name the others: the names made each line wrap).
    pub(crate) fn summary(&self) -> String {
        let c = self.counts();
        format!(
            "pool: {}/{} done, {} in progress",
            c.done,
            c.total,
            c.in_progress.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(done: usize, total: usize, in_progress: &[&str]) -> String {
        let p = Progress::new(total);
        for _ in 0..done {
            p.done_before();
        }
        for n in in_progress {
            p.started(n);
        }
        p.summary()
    }

    #[test]
    fn the_pool_line_counts_the_nodes_done_and_out_now() {
        assert_eq!(pool(0, 3, &[]), "pool: 0/3 done, 0 in progress");
        assert_eq!(pool(3, 20, &["n5", "n4"]), "pool: 3/20 done, 2 in progress");
    }
}
