//! A server that does not answer is said, not waited on in silence: a
//! request with no answer after [`TELL_AFTER`] is told to the run's
//! listeners (as a retry is, crate::client::retry's channel) with what it
//! waits on, and again every [`TELL_AFTER`] while it waits. kubectl says
//! nothing until client-go gives up (`net/http: TLS handshake timeout`
//! after 10 s, or `--request-timeout`); the operator of a long drain should
//! not have to guess why nothing moves.
//!
//! A watch is a request whose answer streams: its headers come at once,
//! so only a watch that never starts is told.
//!
//! Without `--request-timeout` a request whose headers have not come after
//! [`ANSWER_WITHIN`] ends as client-go ends kubectl's first requests
//! (k8s.io/client-go discovery/discovery_client.go, `defaultTimeout`: the
//! `/api?timeout=32s` kubectl sends): `net/http: request canceled
//! (Client.Timeout exceeded while awaiting headers)`. The retry layer above
//! tries it again as kubectl's discovery does (crate::client::retry,
//! `SILENT_TRIES`), so a server that takes connections and TLS but never
//! answers fails a first contact after about 160 s, as kubectl fails at
//! 165 s, and a run under way after `retry::WINDOW`, never silently and
//! never forever. With the flag, the flag bounds the request instead (as
//! the connection's read timeout), and a request whose headers it cut is
//! said in the same net/http words, not as the socket's "timed out".

use std::task::{Context, Poll};
use std::time::Duration;

use futures::future::BoxFuture;
use http::{Request, Response};
use tokio::sync::broadcast;
use tower::{BoxError, Layer, Service};

use super::failure::NoHeaders;
use super::retry::{Answer, Retried};

/// How long a request waits before its wait is said.
pub(crate) const TELL_AFTER: Duration = Duration::from_secs(10);
/// How long a request waits for its answer's headers without
/// `--request-timeout`: client-go's bound on kubectl's first requests.
pub(crate) const ANSWER_WITHIN: Duration = Duration::from_secs(32);

#[derive(Clone)]
pub(crate) struct SilenceLayer {
    pub(crate) told: broadcast::Sender<Retried>,
    /// How long an answer's headers are waited for: `None` when
    /// `--request-timeout` bounds the request instead.
    pub(crate) within: Option<Duration>,
    /// `--request-timeout`, when given: a read that timed out before the
    /// headers came is a request that waited this long for them.
    pub(crate) flag: Option<Duration>,
}

impl<S> Layer<S> for SilenceLayer {
    type Service = Silence<S>;

    fn layer(&self, inner: S) -> Silence<S> {
        Silence {
            told: self.told.clone(),
            within: self.within,
            flag: self.flag,
            inner,
        }
    }
}

#[derive(Clone)]
pub(crate) struct Silence<S> {
    told: broadcast::Sender<Retried>,
    within: Option<Duration>,
    flag: Option<Duration>,
    inner: S,
}

impl<S, B, RB> Service<Request<B>> for Silence<S>
where
    S: Service<Request<B>, Response = Response<RB>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: Send + 'static,
    RB: Send + 'static,
{
    type Response = Response<RB>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Response<RB>, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let method = request.method().clone();
        let path = request.uri().path().to_string();
        let told = self.told.clone();
        let within = self.within;
        let flag = self.flag;
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(async move {
            let told_while_waiting = async move {
                let answer = inner.call(request);
                tokio::pin!(answer);
                let mut waited = Duration::ZERO;
                loop {
                    tokio::select! {
                        r = &mut answer => return r.map_err(|e| {
                            let e: BoxError = e.into();
                            match flag {
                                Some(waited) if read_timed_out(e.as_ref()) => NoHeaders { waited }.into(),
                                _ => e,
                            }
                        }),
                        () = tokio::time::sleep(TELL_AFTER) => {
                            waited += TELL_AFTER;
                            let _ = told.send(Retried {
                                method: method.clone(),
                                path: path.clone(),
                                answer: Answer::Silent(waited),
                                try_of: None,
                            });
                        }
                    }
                }
            };
            match within {
                Some(waited) => tokio::time::timeout(waited, told_while_waiting)
                    .await
                    .unwrap_or_else(|_| Err(NoHeaders { waited }.into())),
                None => told_while_waiting.await,
            }
        })
    }
}

/// Whether the connection was made and a read on it then timed out (the
/// read timeout `--request-timeout` sets), rather than the dial or the
/// handshake (hyper's connect errors, which crate::client::failure words).
fn read_timed_out(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(e);
    let mut timed_out = false;
    while let Some(c) = cause {
        if c.downcast_ref::<hyper_util::client::legacy::Error>()
            .is_some_and(hyper_util::client::legacy::Error::is_connect)
        {
            return false;
        }
        timed_out |= c
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut);
        cause = c.source();
    }
    timed_out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::failure::{self, NoAnswer};
    use crate::client::retry::{RetryPolicy, SILENT_TRIES};
    use kube::client::Body;
    use tower::ServiceExt as _;
    use tower::retry::RetryLayer;

    /// A server that takes the request and never answers: each try is told
    /// every 10 s, ends at 32 s, and a first contact is tried five times,
    /// then given up in net/http's words, as kubectl gives up its `/api`.
    #[tokio::test(start_paused = true)]
    async fn a_silent_first_contact_is_told_tried_as_kubectl_tries_it_and_given_up() {
        let (told, mut heard) = broadcast::channel(64);
        let silent = tower::service_fn(|_: Request<Body>| {
            std::future::pending::<Result<Response<Body>, BoxError>>()
        });
        let stack = tower::ServiceBuilder::new()
            .layer(RetryLayer::new(RetryPolicy::new(told.clone(), None)))
            .layer(SilenceLayer {
                told,
                within: Some(ANSWER_WITHIN),
                flag: None,
            })
            .service(silent);
        let started = tokio::time::Instant::now();
        let request = Request::get("/api").body(Body::empty()).expect("a request");
        let error = stack.oneshot(request).await.expect_err("no answer");
        let took = started.elapsed();
        let tries = ANSWER_WITHIN * SILENT_TRIES;
        assert!(
            took >= tries && took < tries + Duration::from_secs(5),
            "{took:?}"
        );
        assert_eq!(failure::of(error.as_ref()), NoAnswer::Silent(ANSWER_WITHIN));
        let said = failure::words(
            &failure::of(error.as_ref()),
            "https://10.0.0.1:6443",
            None,
            None,
        );
        assert!(
            said.starts_with(
                "Unable to connect to the server: net/http: request canceled (Client.Timeout exceeded while awaiting headers) (the server at 10.0.0.1:6443 "
            ),
            "{said}"
        );
        let (mut waits, mut retries) = (Vec::new(), Vec::new());
        while let Ok(r) = heard.try_recv() {
            match r.answer {
                Answer::Silent(w) => waits.push(w.as_secs()),
                _ => retries.push(r.try_of),
            }
        }
        // 10, 20 and 30 s of each try said; each new try said, counted.
        assert_eq!(waits, [10, 20, 30].repeat(SILENT_TRIES as usize));
        let counted: Vec<_> = (2..=SILENT_TRIES)
            .map(|n| Some((n, SILENT_TRIES)))
            .collect();
        assert_eq!(retries, counted);
    }

    /// The flag's read timeout, met before the headers, is said as
    /// net/http says a request the timeout cut, with the flag's bound; a
    /// dial that timed out is not (crate::client::failure words it).
    #[tokio::test]
    async fn a_read_the_flag_timed_out_is_a_request_canceled_awaiting_headers() {
        let (told, _heard) = broadcast::channel(4);
        let cut = tower::service_fn(|_: Request<Body>| async {
            Err::<Response<Body>, BoxError>(
                std::io::Error::from(std::io::ErrorKind::TimedOut).into(),
            )
        });
        let flag = Duration::from_secs(3);
        let stack = SilenceLayer {
            told,
            within: None,
            flag: Some(flag),
        }
        .layer(cut);
        let request = Request::get("/api").body(Body::empty()).expect("a request");
        let error = stack.oneshot(request).await.expect_err("cut");
        assert_eq!(failure::of(error.as_ref()), NoAnswer::Silent(flag));
        assert!(
            error.to_string().starts_with("net/http: request canceled"),
            "{error}"
        );
    }

    /// With `--request-timeout` the flag bounds the request: the layer
    /// only says the wait.
    #[tokio::test(start_paused = true)]
    async fn with_the_flag_the_wait_is_said_and_not_cut() {
        let (told, mut heard) = broadcast::channel(64);
        let slow = tower::service_fn(|_: Request<Body>| async {
            tokio::time::sleep(Duration::from_secs(45)).await;
            Ok::<_, BoxError>(Response::new(Body::empty()))
        });
        let stack = SilenceLayer {
            told,
            within: None,
            flag: Some(Duration::from_secs(60)),
        }
        .layer(slow);
        let request = Request::get("/api").body(Body::empty()).expect("a request");
        stack.oneshot(request).await.expect("answered at 45 s");
        let mut waits = Vec::new();
        while let Ok(r) = heard.try_recv() {
            waits.push(r.answer);
        }
        assert_eq!(
            waits,
            [10, 20, 30, 40].map(|s| Answer::Silent(Duration::from_secs(s)))
        );
    }
}
