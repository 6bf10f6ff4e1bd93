//! What every run tells and ends with, shared by the drain, the pool
//! runner, the roll, the listeners and the report: the events
//! (`events`), how nodes and pods ended (`outcome`), the warnings given
//! before or while changing anything (`warning`), a pod's key
//! (`pod_key`), and why a run could not go on (`error`), with the API's
//! failures as errors (`api_error`) in kubectl's words (`api_words`).

pub(crate) mod api_error;
pub(crate) mod api_words;
mod error;
pub(crate) mod events;
pub(crate) mod job_status;
pub(crate) mod outcome;
pub(crate) mod pod_key;
pub(crate) mod warning;

pub(crate) use error::DrainError;
pub(crate) use outcome::DryRun;
