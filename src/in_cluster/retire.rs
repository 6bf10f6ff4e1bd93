//! The end of a run in a Job: a run that succeeded deletes its own
//! ClusterRole, and the garbage collector removes what that role owns
//! (its ClusterRoleBinding, its Roles and bindings in other namespaces;
//! crate::in_cluster::submit hands them to it). What is in the Job's
//! namespace goes with the Job. A failed run leaves its role for the
//! Job's next try, and for `--cleanup`.

use kube::api::{Api, DeleteParams};

use super::run::JOB_ENV;
use crate::cli::ClusterArgs;
use crate::cli::exit;

/// After the run's exit `code`: its ClusterRole deleted when it ran in a
/// Job and succeeded. A failure to delete is said; the exit code stands.
pub(crate) async fn retire(cluster: &ClusterArgs, code: u8) {
    let Some(name) = std::env::var(JOB_ENV).ok().filter(|j| !j.is_empty()) else {
        return;
    };
    if code != exit::OK {
        return;
    }
    let deleted = async {
        let clients = crate::client::connect(cluster).await?;
        let api: Api<k8s_openapi::api::rbac::v1::ClusterRole> = Api::all(clients.main.clone());
        api.delete(&name, &DeleteParams::background())
            .await
            .map_err(|e| {
                crate::vocabulary::api_error::api_error(
                    "delete",
                    "clusterroles.rbac.authorization.k8s.io",
                    None,
                    e,
                )
            })?;
        anyhow::Ok(())
    };
    match deleted.await {
        Ok(()) => crate::errln!(
            "clusterrole.rbac.authorization.k8s.io/{name} deleted: the run's cluster-wide rights end with it"
        ),
        Err(e) => {
            crate::errln!(
                "warning: the run's ClusterRole {name} stays: {e:#} (`--cleanup` removes it)"
            );
        }
    }
}
