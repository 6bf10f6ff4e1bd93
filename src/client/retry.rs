//! One retry policy for every request the tool sends, as a tower layer on
//! its Kubernetes client, so no call site retries (or forgets to) by hand.
//!
//! Each answer is classified once ([`classify`]): a server error (5xx),
//! throttling (429 from API Priority and Fairness) or no answer at all is
//! retried with exponential backoff and jitter, honouring `Retry-After`,
//! for up to [`WINDOW`]; anything else is final and goes to the caller.
//! No answer is read for its cause (crate::client::failure): a certificate
//! or a credential plugin is final at once, a refused or unresolvable
//! server is final within [`FIRST_CONTACT`] until the run has changed
//! something (a write has succeeded), and after Ctrl-C or SIGTERM nothing
//! is retried and no backoff is waited out ([`stop`]). A
//! pod's eviction is never retried here: its 429 is a budget's refusal,
//! and the drain's own loop (crate::drain::machine) owns evictions and
//! their budget tickets. client-go retries a 5xx or 429 only when the
//! server sends `Retry-After` (k8s.io/client-go rest/request.go, `checkWait`),
//! and not at all without it; kubectl drain then fails the node.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use http::{Method, Request, Response};
use kube::client::Body;
use tokio::sync::broadcast;
use tokio::time::Instant;
use tower::BoxError;
use tower::retry::Policy;
use tower::util::rng::{HasherRng, Rng};

/// How long one request is retried before its error is final: long enough
/// for an API server to restart or a control plane to roll.
pub(crate) const WINDOW: Duration = Duration::from_secs(300);
/// The first backoff; each retry doubles it, up to `MAX_DELAY`.
const FIRST_DELAY: Duration = Duration::from_millis(200);
const MAX_DELAY: Duration = Duration::from_secs(10);
/// How long a refused or unresolvable server is tried before anything has
/// changed: a blip is ridden out, a wrong address fails within seconds.
pub(crate) const FIRST_CONTACT: Duration = Duration::from_secs(1);
/// How many times a first contact is tried when the server takes the
/// connection but never answers (crate::client::silence): kubectl's
/// discovery tries `/api` five times (k8s.io/client-go
/// discovery/cached/memory/memcache.go) before it gives up.
pub(crate) const SILENT_TRIES: u32 = 5;
/// The longest `Retry-After` honoured as it is.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// What an answer means for a retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// Worth sending again: 5xx, a throttling 429, no answer.
    Retryable,
    /// An eviction's 429: a budget (or throttling) the drain's loop weighs.
    Eviction,
    /// Success, or an error another try would not change.
    Final,
}

/// How a request ended at the transport: an HTTP status, or no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    /// The server answered with this status.
    Status(u16),
    /// No answer: the connection was refused, reset or timed out.
    Unanswered,
    /// No answer yet, after this long (crate::client::silence): not a
    /// retry, a wait said.
    Silent(Duration),
}

/// Classifies an answer to `method path`.
pub(crate) fn classify(method: &Method, path: &str, answer: Answer) -> Class {
    if method == Method::POST && path.ends_with("/eviction") {
        return Class::Eviction;
    }
    match answer {
        Answer::Unanswered | Answer::Status(429 | 500..=599) => Class::Retryable,
        // Told while waiting (crate::client::silence), never an answer.
        Answer::Status(_) | Answer::Silent(_) => Class::Final,
    }
}

/// The wait before retry number `attempt` (from 1): exponential from
/// `FIRST_DELAY` to `MAX_DELAY`, with equal jitter (half fixed, half random,
/// `random` in 0..1) so that many clients do not retry in step; the
/// server's `Retry-After` instead when it asks for longer.
pub(crate) fn delay(attempt: u32, retry_after: Option<Duration>, random: f64) -> Duration {
    let base = FIRST_DELAY
        .checked_mul(2_u32.saturating_pow(attempt.saturating_sub(1)))
        .unwrap_or(MAX_DELAY)
        .min(MAX_DELAY);
    let jittered = base.mul_f64(0.5 + 0.5 * random.clamp(0.0, 1.0));
    match retry_after {
        Some(asked) if asked > jittered => asked.min(MAX_RETRY_AFTER),
        _ => jittered,
    }
}

/// A retry, as the run tells it on screen.
#[derive(Debug, Clone)]
pub(crate) struct Retried {
    /// `GET`, `PATCH`...
    pub(crate) method: Method,
    /// The request's path, which names the resource and the object.
    pub(crate) path: String,
    /// What went wrong: `503`, or "no answer".
    pub(crate) answer: Answer,
    /// The try this retry is, of how many, when they are counted (a first
    /// contact with a server that never answers, `SILENT_TRIES`).
    pub(crate) try_of: Option<(u32, u32)>,
}

/// The tower retry policy: one per request (tower clones it for each).
#[derive(Clone)]
pub(crate) struct RetryPolicy {
    /// How long a request is retried for: `WINDOW`, or `--request-timeout`.
    window: Duration,
    /// Whether the window is --request-timeout's.
    flagged: bool,
    attempt: u32,
    first_failure: Option<Instant>,
    rng: HasherRng,
    told: broadcast::Sender<Retried>,
    /// Whether any write of this client's has succeeded.
    changed: Arc<AtomicBool>,
    /// The client's credential is fetched again after a 401
    /// (crate::client::credential): such a request is sent once more.
    refresh_401: bool,
    refreshed: bool,
    /// Nothing but that resend (the eviction client, whose loop owns the
    /// rest).
    only_401: bool,
}

impl RetryPolicy {
    /// Retries are told to `told`'s receivers (none: told to nobody); a
    /// request is given up after `window` (`WINDOW` when `None`).
    pub(crate) fn new(told: broadcast::Sender<Retried>, window: Option<Duration>) -> Self {
        RetryPolicy {
            window: window.unwrap_or(WINDOW),
            flagged: window.is_some(),
            attempt: 0,
            first_failure: None,
            rng: HasherRng::new(),
            told,
            changed: Arc::default(),
            refresh_401: false,
            refreshed: false,
            only_401: false,
        }
    }

    /// A request refused 401 is sent once more, with the credential
    /// fetched again (client-go runs the plugin again once after a 401).
    pub(crate) fn refreshing_credentials(mut self) -> Self {
        self.refresh_401 = true;
        self
    }

    /// That resend alone, nothing else retried.
    pub(crate) fn refresh_only() -> Self {
        let (told, _) = broadcast::channel(1);
        let mut p = RetryPolicy::new(told, None).refreshing_credentials();
        p.only_401 = true;
        p
    }
}

/// Set at the first Ctrl-C or SIGTERM: retries end.
static STOPPED: AtomicBool = AtomicBool::new(false);
static STOP: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Ends every retry and every backoff under way (Ctrl-C, SIGTERM): each
/// request then fails with the error it last had.
pub(crate) fn stop() {
    STOPPED.store(true, Ordering::SeqCst);
    STOP.notify_waiters();
}

/// Whether a request that got no answer for `cause` is final, given that
/// the client has (or has not) changed anything yet, that it has failed
/// `tries` times and that another try would be sent `next` after the first
/// failure.
pub(crate) fn give_up(
    cause: &super::failure::NoAnswer,
    changed: bool,
    tries: u32,
    next: Duration,
) -> bool {
    let silent = matches!(cause, super::failure::NoAnswer::Silent(_));
    cause.is_final()
        || (!changed && cause.is_first_contact_final() && next > FIRST_CONTACT)
        || (!changed && silent && tries >= SILENT_TRIES)
}

fn retry_after<B>(response: &Response<B>) -> Option<Duration> {
    let secs = response
        .headers()
        .get(http::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()?;
    Some(Duration::from_secs(secs))
}

impl<Res> Policy<Request<Body>, Response<Res>, BoxError> for RetryPolicy {
    type Future = Pin<Box<dyn Future<Output = ()> + Send>>;

    fn retry(
        &mut self,
        req: &mut Request<Body>,
        result: &mut Result<Response<Res>, BoxError>,
    ) -> Option<Self::Future> {
        let now = Instant::now();
        let changed = self.changed.load(Ordering::Relaxed);
        let mut cause = None;
        let (answer, asked) = match result {
            Ok(response) => {
                if response.status().is_success()
                    && !matches!(*req.method(), Method::GET | Method::HEAD)
                {
                    self.changed.store(true, Ordering::Relaxed);
                }
                (
                    Answer::Status(response.status().as_u16()),
                    retry_after(response),
                )
            }
            Err(e) => {
                cause = Some(super::failure::of(e.as_ref()));
                (Answer::Unanswered, None)
            }
        };
        if self.refresh_401 && !self.refreshed && answer == Answer::Status(401) {
            self.refreshed = true;
            return Some(Box::pin(async {}));
        }
        if self.only_401
            || STOPPED.load(Ordering::SeqCst)
            || classify(req.method(), req.uri().path(), answer) != Class::Retryable
        {
            return None;
        }
        let first = *self.first_failure.get_or_insert(now);
        self.attempt += 1;
        let wait = delay(self.attempt, asked, self.rng.next_f64());
        if now + wait > first + self.window
            || cause
                .as_ref()
                .is_some_and(|c| give_up(c, changed, self.attempt, now + wait - first))
        {
            return None;
        }
        // A first contact's short tries are not told: they end in kubectl's
        // error or in an answer within FIRST_CONTACT.
        let quiet = !changed
            && cause
                .as_ref()
                .is_some_and(super::failure::NoAnswer::is_first_contact_final);
        // Counted as kubectl's first requests are only when the tries fit:
        // --request-timeout's window ends a first contact sooner, and the
        // warning then says the flag's bound, never a count it breaks.
        let counted =
            !changed && !self.flagged && matches!(cause, Some(super::failure::NoAnswer::Silent(_)));
        if !quiet {
            let _ = self.told.send(Retried {
                method: req.method().clone(),
                path: req.uri().path().to_string(),
                answer,
                try_of: counted.then_some((self.attempt + 1, SILENT_TRIES)),
            });
        }
        Some(Box::pin(async move {
            let stopped = STOP.notified();
            if !STOPPED.load(Ordering::SeqCst) {
                tokio::select! {
                    () = tokio::time::sleep(wait) => {}
                    () = stopped => {}
                }
            }
        }))
    }

    fn clone_request(&mut self, req: &Request<Body>) -> Option<Request<Body>> {
        // A streamed body cannot be sent twice; the tool sends none.
        let body = req.body().try_clone()?;
        let mut copy = Request::builder()
            .method(req.method().clone())
            .uri(req.uri().clone())
            .version(req.version())
            .body(body)
            .ok()?;
        *copy.headers_mut() = req.headers().clone();
        *copy.extensions_mut() = req.extensions().clone();
        Some(copy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_errors_throttling_and_silence_are_retried_but_not_evictions() {
        let get = |a| classify(&Method::GET, "/api/v1/nodes/n1", a);
        assert_eq!(get(Answer::Status(500)), Class::Retryable);
        assert_eq!(get(Answer::Status(503)), Class::Retryable);
        assert_eq!(get(Answer::Status(429)), Class::Retryable);
        assert_eq!(get(Answer::Unanswered), Class::Retryable);
        assert_eq!(get(Answer::Status(404)), Class::Final);
        assert_eq!(get(Answer::Status(403)), Class::Final);
        assert_eq!(get(Answer::Status(409)), Class::Final);
        assert_eq!(get(Answer::Status(200)), Class::Final);
        let evict = "/api/v1/namespaces/apps/pods/web-1/eviction";
        for a in [Answer::Status(429), Answer::Status(500), Answer::Unanswered] {
            assert_eq!(classify(&Method::POST, evict, a), Class::Eviction);
        }
        // Patching a node is retried like any other write.
        assert_eq!(
            classify(&Method::PATCH, "/api/v1/nodes/n1", Answer::Status(500)),
            Class::Retryable
        );
    }

    #[test]
    fn a_first_contact_gives_up_within_a_second_and_a_changed_run_keeps_trying() {
        use crate::client::failure::NoAnswer;
        let ms = Duration::from_millis;
        // A certificate: final at once, changed or not.
        let tls = NoAnswer::Tls("x509".into());
        assert!(give_up(&tls, false, 1, ms(200)) && give_up(&tls, true, 1, ms(200)));
        // Refused: tried for FIRST_CONTACT, then final; after a write, kept.
        assert!(!give_up(&NoAnswer::Refused, false, 3, ms(900)));
        assert!(give_up(&NoAnswer::Refused, false, 4, ms(1100)));
        assert!(!give_up(
            &NoAnswer::Refused,
            true,
            9,
            Duration::from_secs(60)
        ));
        assert!(give_up(&NoAnswer::ConnectTimeout, false, 4, ms(1100)));
        // A reset connection is retried whether or not anything changed.
        assert!(!give_up(
            &NoAnswer::Other("reset".into()),
            false,
            9,
            Duration::from_secs(60)
        ));
        // A server that takes the connection and never answers: tried as
        // kubectl tries its first request, five times; after a write,
        // for the whole window.
        let silent = NoAnswer::Silent(Duration::from_secs(32));
        assert!(!give_up(&silent, false, 4, Duration::from_secs(100)));
        assert!(give_up(&silent, false, 5, Duration::from_secs(130)));
        assert!(!give_up(&silent, true, 8, Duration::from_secs(260)));
    }

    #[test]
    fn backoff_doubles_with_jitter_up_to_a_cap_and_honours_retry_after() {
        assert_eq!(delay(1, None, 1.0), Duration::from_millis(200));
        assert_eq!(delay(1, None, 0.0), Duration::from_millis(100));
        assert_eq!(delay(3, None, 1.0), Duration::from_millis(800));
        assert_eq!(delay(30, None, 1.0), MAX_DELAY);
        assert_eq!(delay(30, None, 0.0), MAX_DELAY / 2);
        // The server asks for longer: its wait, within reason.
        assert_eq!(
            delay(1, Some(Duration::from_secs(2)), 0.3),
            Duration::from_secs(2)
        );
        assert_eq!(
            delay(1, Some(Duration::from_secs(3600)), 0.3),
            MAX_RETRY_AFTER
        );
        // Shorter than the backoff: the backoff.
        assert_eq!(
            delay(5, Some(Duration::from_secs(1)), 1.0),
            Duration::from_secs(3) + Duration::from_millis(200)
        );
    }
}
