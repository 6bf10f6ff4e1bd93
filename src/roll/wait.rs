//! A roll's waits (the reboot, Ready, budgets healthy again) in one helper:
//! kube-runtime's `await_condition` idea, a condition checked at each
//! change a watch reports, with what kubectl-maintain adds to it: a
//! deadline, progress on screen when the reason changes (and every
//! `SAY_EVERY` while it does not), and Ctrl-C.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use tokio::sync::{broadcast, watch};
use tokio::time::Instant;

use crate::drain::budgets::Signal;
use crate::pool::node_watch::Nodes;

/// How often a wait whose reason did not change says so again.
pub(crate) const SAY_EVERY: Duration = Duration::from_secs(15);

/// Where a wait stands after a check.
pub(crate) enum Check<T> {
    Done(T),
    /// Not yet, and why (shown as progress).
    Waiting(String),
}

/// A wait that ended without its condition.
#[derive(Debug)]
pub(crate) enum Waited<E> {
    /// The deadline passed; the last reason.
    TimedOut(String),
    Interrupted,
    /// The check itself failed.
    Failed(E),
}

/// What wakes a wait to check again.
pub(crate) enum Wake<'a> {
    /// A change of any node.
    Nodes(&'a Nodes),
    /// A change of any budget the shared watch follows.
    Budgets(broadcast::Receiver<Signal>),
    /// Every so often, where nothing can be watched.
    Every(Duration),
}

impl Wake<'_> {
    /// The next wake-up, armed now: a change after this call is not missed.
    fn arm(&mut self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        match self {
            Wake::Nodes(nodes) => Box::pin(nodes.changed()),
            Wake::Budgets(rx) => Box::pin(async move {
                // A lagged receiver still means something changed.
                let _ = rx.recv().await;
            }),
            Wake::Every(every) => Box::pin(tokio::time::sleep(*every)),
        }
    }
}

/// Checks until done, the deadline, or an interrupt; `say` is told the
/// reason when it changes, and again every `SAY_EVERY`.
pub(crate) async fn until<T, E>(
    mut wake: Wake<'_>,
    deadline: Instant,
    mut interrupt: watch::Receiver<bool>,
    mut check: impl AsyncFnMut() -> Result<Check<T>, E>,
    mut say: impl FnMut(&str),
) -> Result<T, Waited<E>> {
    let mut last: Option<(String, Instant)> = None;
    loop {
        if *interrupt.borrow() {
            return Err(Waited::Interrupted);
        }
        let woken = wake.arm();
        let why = match check().await.map_err(Waited::Failed)? {
            Check::Done(t) => return Ok(t),
            Check::Waiting(why) => why,
        };
        let now = Instant::now();
        let stale = last
            .as_ref()
            .is_none_or(|(said, at)| *said != why || now >= *at + SAY_EVERY);
        if stale {
            say(&why);
            last = Some((why.clone(), now));
        }
        if now >= deadline {
            return Err(Waited::TimedOut(why));
        }
        let next_say = last.as_ref().map_or(deadline, |(_, at)| *at + SAY_EVERY);
        tokio::select! {
            () = woken => {}
            () = tokio::time::sleep_until(deadline.min(next_say)) => {}
            _ = interrupt.changed() => return Err(Waited::Interrupted),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn checks_again_at_each_wake_and_says_each_new_reason() {
        let (_tx, rx) = watch::channel(false);
        let mut n = 0;
        let mut said = Vec::new();
        let got = until(
            Wake::Every(Duration::from_secs(1)),
            Instant::now() + Duration::from_secs(60),
            rx,
            async || {
                n += 1;
                Ok::<_, ()>(match n {
                    1 | 2 => Check::Waiting("rebooting".into()),
                    3 => Check::Waiting("NotReady".into()),
                    _ => Check::Done(n),
                })
            },
            |why| said.push(why.to_string()),
        )
        .await;
        assert_eq!(got.expect("done"), 4);
        assert_eq!(said, ["rebooting", "NotReady"]);
    }

    #[tokio::test(start_paused = true)]
    async fn ends_at_the_deadline_with_the_last_reason() {
        let (_tx, rx) = watch::channel(false);
        let started = Instant::now();
        let got: Result<(), Waited<()>> = until(
            Wake::Every(Duration::from_secs(3600)),
            started + Duration::from_secs(90),
            rx,
            async || Ok(Check::Waiting("NotReady".into())),
            |_| {},
        )
        .await;
        assert!(matches!(got, Err(Waited::TimedOut(why)) if why == "NotReady"));
        assert_eq!(started.elapsed(), Duration::from_secs(90));
    }

    #[tokio::test(start_paused = true)]
    async fn says_a_standing_reason_again_every_say_every() {
        let (_tx, rx) = watch::channel(false);
        let mut said = 0;
        let _ = until(
            Wake::Every(Duration::from_secs(3600)),
            Instant::now() + SAY_EVERY * 3,
            rx,
            async || Ok::<_, ()>(Check::<()>::Waiting("NotReady".into())),
            |_| said += 1,
        )
        .await;
        // At 0, 15, 30 and at the deadline (45).
        assert_eq!(said, 4);
    }

    #[tokio::test(start_paused = true)]
    async fn an_interrupt_ends_the_wait() {
        let (tx, rx) = watch::channel(false);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(5)).await;
            let _ = tx.send(true);
        });
        let got: Result<(), Waited<()>> = until(
            Wake::Every(Duration::from_secs(3600)),
            Instant::now() + Duration::from_secs(600),
            rx,
            async || Ok(Check::Waiting("rebooting".into())),
            |_| {},
        )
        .await;
        assert!(matches!(got, Err(Waited::Interrupted)));
    }
}
