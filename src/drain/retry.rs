//! Bounded retries with backoff for the drain's one-off requests (reading
//! nodes, listing pods, cordoning). Evictions and watches have their own
//! loops; this covers the rest, so a flaky API server slows a drain down
//! instead of failing it.

use std::future::Future;
use std::time::Duration;

use super::events::{Event, Sink, emit};
use super::warning::Warning;

/// Attempts before a request's error is final.
pub(crate) const ATTEMPTS: u32 = 8;

/// Is this error worth another try: a server error, throttling, or no
/// connection at all?
pub(crate) fn transient(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(s) => s.code == 429 || s.code >= 500,
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

/// Runs `f` until it succeeds, fails for good, or runs out of attempts;
/// `on_retry` hears of each transient failure (for progress displays).
pub(crate) async fn with_retries<T, F, Fut>(
    mut f: F,
    mut on_retry: impl FnMut(&kube::Error),
) -> Result<T, kube::Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, kube::Error>>,
{
    let mut delay = Duration::from_millis(200);
    let mut attempt = 1;
    loop {
        match f().await {
            Err(e) if transient(&e) && attempt < ATTEMPTS => {
                on_retry(&e);
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(5));
                attempt += 1;
            }
            other => return other,
        }
    }
}

/// Tells the listeners that a request is being retried.
pub(crate) fn tell(events: &Sink, what: &'static str) -> impl FnMut(&kube::Error) {
    move |e| {
        emit(
            events,
            Event::Warning(Warning::Retrying {
                what,
                error: e.to_string(),
            }),
        );
    }
}
