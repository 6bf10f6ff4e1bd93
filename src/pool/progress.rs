//! The run's count of nodes: done of all, and those in progress, kept by
//! the runner and read for every line a node's job says.

use std::collections::BTreeSet;
use std::sync::Mutex;

/// How many nodes in progress the pool's line names; the rest are counted.
const NAMED_IN_PROGRESS: usize = 4;

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

    /// The pool's line: nodes done of all, and the nodes out now (the
    /// batch in progress), by name.
    pub(crate) fn summary(&self) -> String {
        let c = self.counts();
        let mut out = format!("pool: {}/{} done", c.done, c.total);
        if c.in_progress.is_empty() {
            return out + ", none in progress";
        }
        let names: Vec<&str> = c
            .in_progress
            .iter()
            .take(NAMED_IN_PROGRESS)
            .map(String::as_str)
            .collect();
        out = format!("{out}, in progress: {}", names.join(", "));
        match c.in_progress.len().saturating_sub(NAMED_IN_PROGRESS) {
            0 => out,
            more => format!("{out} and {more} more"),
        }
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
    fn the_pool_line_names_the_nodes_out_now() {
        assert_eq!(pool(0, 3, &[]), "pool: 0/3 done, none in progress");
        assert_eq!(
            pool(3, 20, &["n5", "n4"]),
            "pool: 3/20 done, in progress: n4, n5"
        );
        assert_eq!(
            pool(0, 20, &["a", "b", "c", "d", "e", "f"]),
            "pool: 0/20 done, in progress: a, b, c, d and 2 more"
        );
    }
}
