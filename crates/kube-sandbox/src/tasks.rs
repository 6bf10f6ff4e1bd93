//! Every task the sandbox spawns that may outlive a request (the
//! simulation, the API server, each watch and followed log), counted, so
//! that stopping the sandbox waits until they have ended: a task still
//! running while its runtime shuts down panics at its next timer ("A Tokio
//! 1.x context was found, but it is being shutdown").

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

#[derive(Default)]
pub(crate) struct Tasks {
    live: AtomicUsize,
    ended: tokio::sync::Notify,
}

/// Counts a task as live until dropped.
struct Live<'a>(&'a Tasks);

impl Drop for Live<'_> {
    fn drop(&mut self) {
        if self.0.live.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.ended.notify_waiters();
        }
    }
}

impl Tasks {
    /// Spawns `task`, counted until it ends.
    pub(crate) fn spawn(
        self: &std::sync::Arc<Self>,
        task: impl Future<Output = ()> + Send + 'static,
    ) -> tokio::task::JoinHandle<()> {
        self.live.fetch_add(1, Ordering::SeqCst);
        let me = self.clone();
        tokio::spawn(async move {
            let _live = Live(&me);
            task.await;
        })
    }

    /// How many run now.
    pub(crate) fn live(&self) -> usize {
        self.live.load(Ordering::SeqCst)
    }

    /// Waits until every counted task has ended, at most `limit`; false if
    /// some still run.
    pub(crate) async fn ended(&self, limit: Duration) -> bool {
        let wait = async {
            loop {
                let ended = self.ended.notified();
                if self.live.load(Ordering::SeqCst) == 0 {
                    return;
                }
                ended.await;
            }
        };
        tokio::time::timeout(limit, wait).await.is_ok()
    }
}
