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

use std::task::{Context, Poll};
use std::time::Duration;

use futures::future::BoxFuture;
use http::{Request, Response};
use tokio::sync::broadcast;
use tower::{BoxError, Layer, Service};

use super::retry::{Answer, Retried};

/// How long a request waits before its wait is said.
pub(crate) const TELL_AFTER: Duration = Duration::from_secs(10);

#[derive(Clone)]
pub(crate) struct SilenceLayer {
    pub(crate) told: broadcast::Sender<Retried>,
}

impl<S> Layer<S> for SilenceLayer {
    type Service = Silence<S>;

    fn layer(&self, inner: S) -> Silence<S> {
        Silence {
            told: self.told.clone(),
            inner,
        }
    }
}

#[derive(Clone)]
pub(crate) struct Silence<S> {
    told: broadcast::Sender<Retried>,
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
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(async move {
            let answer = inner.call(request);
            tokio::pin!(answer);
            let mut waited = Duration::ZERO;
            loop {
                tokio::select! {
                    r = &mut answer => return r.map_err(Into::into),
                    () = tokio::time::sleep(TELL_AFTER) => {
                        waited += TELL_AFTER;
                        let _ = told.send(Retried {
                            method: method.clone(),
                            path: path.clone(),
                            answer: Answer::Silent(waited),
                        });
                    }
                }
            }
        })
    }
}
