//! One handler per verb, like k8s.io/apiserver's `endpoints/handlers`
//! (get.go, create.go, update.go, patch.go, delete.go, watch.go): each takes
//! the parsed request and answers it from the store. `rest` holds what the
//! writes share.

pub(super) mod create;
pub(super) mod delete;
pub(super) mod get;
pub(super) mod list;
pub(crate) mod log;
pub(super) mod patch;
mod rest;
pub(super) mod scale;
mod select;
pub(super) mod update;
pub(crate) mod watch;
