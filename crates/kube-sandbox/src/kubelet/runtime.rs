//! The container runtime for local images: a container whose image is one
//! given as `--local-image IMAGE=PATH` runs for real, as the local program
//! PATH, where the rest of the sandbox's containers are simulated.
//!
//! What the kubelet gives a container, it gets (kubernetes
//! pkg/kubelet/kuberuntime/kuberuntime_container.go, and the projected
//! `kube-api-access` volume of plugin/pkg/admission/serviceaccount):
//! - its `command` and `args` (PATH stands for the image's entrypoint, and
//!   for `command[0]`), and its `env` (values and the pod's own fields),
//!   with `KUBERNETES_SERVICE_HOST`/`PORT` naming the sandbox's apiserver
//!   and `HOSTNAME` the pod, and nothing of the sandbox's own environment;
//! - its ServiceAccount's token (bound to the pod, crate::auth::tokens),
//!   the CA and the namespace at /var/run/secrets/kubernetes.io/serviceaccount,
//!   and its `configMap` and `emptyDir` volumes at their mount paths, in a
//!   private mount namespace (`unshare --mount`: we are root here); the
//!   mount points are made on the host as a runtime makes them in a root
//!   filesystem, and stay there empty; its host name is the pod's (a UTS
//!   namespace), as in a real pod;
//! - its `runAsUser`/`runAsGroup` (`setpriv`); a pod that names no user
//!   runs as `nobody` (65534), never as root by default: the program is
//!   the host's, not an image's with its own `USER`.
//!
//! The files it mounts are written in a directory private to root (0700,
//! crate::private_dir), removed when the sandbox stops.
//!
//! Its standard output and error are its log (`pods/log`, followed to its
//! end). Its exit code becomes the container's: `restartPolicy` restarts
//! it (after the kubelet's back-off, doubling up to five minutes) or ends
//! the pod Succeeded or Failed. A deleted pod's containers get SIGTERM, and
//! SIGKILL when the grace period ends.
//!
//! Not done: image pulls (the program is local), probes, resource limits,
//! other volume kinds (a container that needs one fails to start, saying
//! so), and stopping the processes when their node reboots.

use crate::objects::path::At;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};

use crate::clock::now_rfc3339;
use crate::objects::pods;
use crate::resources::Resource;
use crate::shared::Shared;
use crate::store::{Key, Store};

use super::containers::ContainerId;
use crate::container_log::ContainerLog;

/// Where the ServiceAccount's files are in every container.
pub(crate) const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// Who a container runs as when its pod names no `runAsUser`: `nobody`.
const NOBODY: &str = "65534";

/// The kubelet's crash-loop back-off: doubling from this, up to five minutes.
const MAX_BACKOFF: Duration = Duration::from_secs(300);

fn containers(pod: &Value) -> Vec<Value> {
    pod.at("/spec/containers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// The kubelet started a pod: its containers of local images run.
pub(crate) fn start_pod(shared: &Arc<Shared>, store: &mut Store, key: &Key, uid: &str) {
    let Some(pod) = store.get(Resource::Pods, key) else {
        return;
    };
    if pod["metadata"]["uid"] != uid || pods::phase(&pod) != "Running" {
        return;
    }
    for c in containers(&pod) {
        let name = c["name"].as_str().unwrap_or_default().to_string();
        if shared
            .runtime
            .program(c["image"].as_str().unwrap_or_default())
            .is_none()
        {
            continue;
        }
        let id = ContainerId {
            key: key.clone(),
            uid: uid.to_string(),
            container: name,
        };
        match launch(shared, store, &pod, &c, &id) {
            Ok((child, log)) => {
                tokio::spawn(supervise(shared.clone(), id, child, log, 0));
            }
            Err(why) => cannot_start(store, &id, &why),
        }
    }
}

/// The container could not start: it waits, saying why (the kubelet's
/// `RunContainerError`), and the pod is not Ready.
fn cannot_start(store: &mut Store, id: &ContainerId, why: &str) {
    set_container(store, id, |s| {
        s["state"] = json!({"waiting": {"reason": "RunContainerError", "message": why}});
        s["ready"] = json!(false);
        s["started"] = json!(false);
    });
    if let Some(pod) = store.get(Resource::Pods, &id.key) {
        let message = format!("Error: {why}");
        crate::events::record(store, &pod, "Warning", "Failed", &message, "kubelet");
    }
}

/// Changes one container's status, and the pod's readiness with it.
fn set_container(store: &mut Store, id: &ContainerId, f: impl FnOnce(&mut Value)) {
    let now = now_rfc3339();
    let _ = store.modify(Resource::Pods, &id.key, |p| {
        if p["metadata"]["uid"] != id.uid.as_str() {
            return;
        }
        let Some(statuses) = p
            .pointer_mut("/status/containerStatuses")
            .and_then(Value::as_array_mut)
        else {
            return;
        };
        if let Some(s) = statuses
            .iter_mut()
            .find(|s| s["name"] == id.container.as_str())
        {
            f(s);
        }
        let ready = statuses.iter().all(|s| s["ready"] == true);
        let ready = if ready { "True" } else { "False" };
        pods::set_condition(p, "ContainersReady", ready, "", "", &now);
        pods::set_condition(p, "Ready", ready, "", "", &now);
    });
}

/// The files a container mounts, written under the runtime's directory:
/// (host directory, mount path, read-only) for each.
fn mounts(
    shared: &Shared,
    store: &Store,
    pod: &Value,
    container: &Value,
    id: &ContainerId,
) -> Result<Vec<(PathBuf, String, bool)>, String> {
    let ns = id.key.0.as_str();
    let base = shared
        .runtime
        .dir
        .as_ref()
        .ok_or("the runtime has no local images")?
        .path()
        .join(&id.uid)
        .join(&id.container);
    let write = |dir: &Path, files: &[(String, String)]| -> Result<(), String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for (name, content) in files {
            let path = dir.join(name);
            std::fs::write(&path, content).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(())
    };
    let mut out = Vec::new();
    if pod["spec"]["automountServiceAccountToken"] != false {
        let account = pod["spec"]["serviceAccountName"]
            .as_str()
            .unwrap_or("default");
        let token = shared.tokens.mint(ns, account, &id.key.1, &id.uid);
        let dir = base.join("serviceaccount");
        let ca = shared
            .tls
            .as_ref()
            .map(|t| t.ca_pem.clone())
            .unwrap_or_default();
        write(
            &dir,
            &[
                ("token".into(), token),
                ("ca.crt".into(), ca),
                ("namespace".into(), ns.to_string()),
            ],
        )?;
        out.push((dir, SERVICE_ACCOUNT_DIR.to_string(), true));
    }
    let volumes = pod["spec"]["volumes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for m in container["volumeMounts"].as_array().into_iter().flatten() {
        let name = m["name"].as_str().unwrap_or_default();
        let path = m["mountPath"].as_str().unwrap_or_default().to_string();
        let read_only = m["readOnly"] == true;
        let volume = volumes
            .iter()
            .find(|v| v["name"] == name)
            .ok_or_else(|| format!("volume {name:?} is not in the pod"))?;
        let dir = base.join("volumes").join(name);
        if let Some(cm) = volume.get("configMap") {
            let cm_name = cm["name"].as_str().unwrap_or_default();
            let data = store
                .get(Resource::ConfigMaps, &(ns.to_string(), cm_name.to_string()))
                .ok_or_else(|| format!("configmap {cm_name:?} not found"))?;
            let value = |key: &str| data["data"][key].as_str().map(str::to_string);
            let files: Vec<(String, String)> = match cm["items"].as_array() {
                Some(items) => items
                    .iter()
                    .map(|i| {
                        let key = i["key"].as_str().unwrap_or_default();
                        let path = i["path"].as_str().unwrap_or(key).to_string();
                        value(key)
                            .map(|v| (path, v))
                            .ok_or_else(|| format!("configmap {cm_name:?} has no key {key:?}"))
                    })
                    .collect::<Result<_, _>>()?,
                None => data["data"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect(),
            };
            write(&dir, &files)?;
        } else if volume.get("emptyDir").is_some() {
            // Writable by whoever the container runs as, as the kubelet
            // makes it (pkg/volume/emptydir: 0777).
            write(&dir, &[])?;
            let all = <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o777);
            std::fs::set_permissions(&dir, all).map_err(|e| format!("{}: {e}", dir.display()))?;
        } else {
            return Err(format!(
                "volume {name:?}: the sandbox's runtime mounts configMap and emptyDir volumes only"
            ));
        }
        out.push((dir, path, read_only));
    }
    Ok(out)
}

/// The container's environment: its own, and the service's address.
fn environment(
    shared: &Shared,
    store: &Store,
    pod: &Value,
    container: &Value,
) -> Vec<(String, String)> {
    let mut env = vec![
        (
            "PATH".to_string(),
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string(),
        ),
        (
            "HOSTNAME".to_string(),
            pod["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        ),
    ];
    if let Some(addr) = shared.runtime.apiserver.get() {
        let host = addr.ip().to_string();
        let port = addr.port().to_string();
        env.push(("KUBERNETES_SERVICE_HOST".into(), host.clone()));
        env.push(("KUBERNETES_SERVICE_PORT".into(), port.clone()));
        env.push(("KUBERNETES_SERVICE_PORT_HTTPS".into(), port.clone()));
        env.push(("KUBERNETES_PORT".into(), format!("tcp://{host}:{port}")));
    }
    for e in container["env"].as_array().into_iter().flatten() {
        let name = e["name"].as_str().unwrap_or_default().to_string();
        let value = match (e.get("value"), e.at("/valueFrom/fieldRef/fieldPath")) {
            (Some(v), _) => v.as_str().unwrap_or_default().to_string(),
            (None, Some(path)) => {
                let pointer = format!("/{}", path.as_str().unwrap_or_default().replace('.', "/"));
                pod.at(&pointer)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            }
            (None, None) => secret_key(store, pod, e).unwrap_or_default(),
        };
        env.push((name, value));
    }
    env
}

/// An environment variable's `valueFrom.secretKeyRef`: the key of a Secret
/// in the pod's namespace, decoded, as the kubelet reads it
/// (pkg/kubelet/kubelet_pods.go `makeEnvironmentVariables`).
fn secret_key(store: &Store, pod: &Value, env: &Value) -> Option<String> {
    use base64::Engine as _;
    let name = env.at("/valueFrom/secretKeyRef/name")?.as_str()?;
    let key = env.at("/valueFrom/secretKeyRef/key")?.as_str()?;
    let ns = pod.at("/metadata/namespace")?.as_str()?;
    let secret = store.get(Resource::Secrets, &(ns.to_string(), name.to_string()))?;
    let data = secret.at(&format!("/data/{key}"))?.as_str()?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .ok()?;
    String::from_utf8(bytes).ok()
}

/// The script the private mount and UTS namespaces run: the pod's name as
/// host name, each mount bound (read-only where asked), then the
/// container's user, and the program.
const SCRIPT: &str = r#"set -e
echo "$HOSTNAME" > /proc/sys/kernel/hostname
while [ "$1" != "--" ]; do
  mount --bind "$1" "$2"
  if [ "$3" = ro ]; then mount -o remount,bind,ro "$2"; fi
  shift 3
done
shift
user=$1; group=$2; shift 2
if [ "$user" = 0 ] && [ "$group" = 0 ]; then exec "$@"; fi
exec setpriv --reuid="$user" --regid="$group" --clear-groups -- "$@"
"#;

fn launch(
    shared: &Arc<Shared>,
    store: &Store,
    pod: &Value,
    container: &Value,
    id: &ContainerId,
) -> Result<(Child, Arc<ContainerLog>), String> {
    let image = container["image"].as_str().unwrap_or_default();
    let program = shared
        .runtime
        .program(image)
        .ok_or_else(|| format!("image {image:?} is not a local image"))?
        .to_path_buf();
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    let mut argv = strings(&container["command"]);
    if !argv.is_empty() {
        argv.remove(0);
    }
    argv.extend(strings(&container["args"]));
    let security = |field: &str| {
        container
            .at(&format!("/securityContext/{field}"))
            .or_else(|| pod.at(&format!("/spec/securityContext/{field}")))
            .and_then(Value::as_i64)
            .map(|n| n.to_string())
    };
    // A local program has no image to say its user: it runs as nobody
    // unless the pod names one (root included).
    let user = security("runAsUser").unwrap_or_else(|| NOBODY.to_string());
    let group = security("runAsGroup").unwrap_or_else(|| user.clone());
    let mut cmd = Command::new("unshare");
    let unshare = ["--mount", "--uts", "--propagation", "private", "--"];
    cmd.args(unshare).args(["/bin/sh", "-c", SCRIPT, "sh"]);
    for (dir, path, read_only) in mounts(shared, store, pod, container, id)? {
        std::fs::create_dir_all(&path).map_err(|e| format!("mount point {path}: {e}"))?;
        cmd.arg(dir)
            .arg(path)
            .arg(if read_only { "ro" } else { "rw" });
    }
    cmd.arg("--")
        .arg(user)
        .arg(group)
        .arg(&program)
        .args(&argv)
        .env_clear()
        .envs(environment(shared, store, pod, container))
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd
        .spawn()
        .map_err(|e| format!("starting {}: {e}", program.display()))?;
    if let Some(pid) = child.id() {
        shared.runtime.lock_running().insert(id.clone(), pid);
    }
    let log = shared.runtime.new_log(&id.key, &id.container);
    Ok((child, log))
}

async fn read_lines(stream: impl AsyncRead + Unpin, log: Arc<ContainerLog>) {
    let mut reader = BufReader::new(stream);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let line = String::from_utf8_lossy(&buf);
                log.push(line.trim_end_matches('\n').to_string());
            }
        }
    }
}

/// Runs a container to its end, then does what its exit and the pod's
/// `restartPolicy` call for; a restart runs again here.
async fn supervise(
    shared: Arc<Shared>,
    id: ContainerId,
    mut child: Child,
    mut log: Arc<ContainerLog>,
    mut restarts: u32,
) {
    loop {
        let out = child
            .stdout
            .take()
            .map(|s| tokio::spawn(read_lines(s, log.clone())));
        let err = child
            .stderr
            .take()
            .map(|s| tokio::spawn(read_lines(s, log.clone())));
        let status = child.wait().await;
        for reader in [out, err].into_iter().flatten() {
            let _ = reader.await;
        }
        log.finish();
        shared.runtime.lock_running().remove(&id);
        let code = status.ok().map_or(128, |s| {
            use std::os::unix::process::ExitStatusExt as _;
            s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0))
        });
        let backoff = {
            let mut store = shared.store();
            match exited(&mut store, &id, code, restarts) {
                Some(backoff) => backoff,
                None => return,
            }
        };
        tokio::time::sleep(backoff).await;
        let mut store = shared.store();
        let Some(pod) = store.get(Resource::Pods, &id.key) else {
            return;
        };
        if pod["metadata"]["uid"] != id.uid.as_str() || pods::is_terminating(&pod) {
            return;
        }
        let Some(container) = containers(&pod)
            .into_iter()
            .find(|c| c["name"] == id.container.as_str())
        else {
            return;
        };
        restarts += 1;
        match launch(&shared, &store, &pod, &container, &id) {
            Ok((next, next_log)) => {
                (child, log) = (next, next_log);
                let now = now_rfc3339();
                set_container(&mut store, &id, |s| {
                    s["state"] = json!({"running": {"startedAt": now}});
                    s["ready"] = json!(true);
                    s["started"] = json!(true);
                    s["restartCount"] = json!(restarts);
                });
                crate::events::record(
                    &mut store,
                    &pod,
                    "Normal",
                    "Started",
                    &format!("Started container {}", id.container),
                    "kubelet",
                );
            }
            Err(why) => {
                cannot_start(&mut store, &id, &why);
                return;
            }
        }
    }
}

/// A container exited with `code`: the back-off before its restart, or
/// `None` when it stays terminated (and the pod may be done).
fn exited(store: &mut Store, id: &ContainerId, code: i32, restarts: u32) -> Option<Duration> {
    let pod = store.get(Resource::Pods, &id.key)?;
    if pod["metadata"]["uid"] != id.uid.as_str() {
        return None;
    }
    let now = now_rfc3339();
    let reason = if code == 0 { "Completed" } else { "Error" };
    let terminated = json!({"exitCode": code, "reason": reason, "finishedAt": now});
    if pods::is_terminating(&pod) {
        set_container(store, id, |s| {
            s["state"] = json!({"terminated": terminated});
            s["ready"] = json!(false);
        });
        if !store.get(Resource::Pods, &id.key).is_some_and(|p| {
            p["status"]["containerStatuses"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|s| s["state"].get("running").is_some())
        }) {
            super::finish_termination(store, &id.key, &id.uid);
        }
        return None;
    }
    let restart = match pod["spec"]["restartPolicy"].as_str().unwrap_or("Always") {
        "Always" => true,
        "OnFailure" => code != 0,
        _ => false,
    };
    if restart {
        let backoff = crash_loop_backoff(restarts);
        set_container(store, id, |s| {
            s["state"] = json!({"waiting": {"reason": "CrashLoopBackOff",
                "message": format!("back-off {}s restarting failed container={} pod={}",
                    backoff.as_secs(), id.container, id.key.1)}});
            s["lastState"] = json!({"terminated": terminated});
            s["ready"] = json!(false);
            s["started"] = json!(false);
        });
        let message = format!("Back-off restarting failed container {}", id.container);
        crate::events::record(store, &pod, "Warning", "BackOff", &message, "kubelet");
        return Some(backoff);
    }
    set_container(store, id, |s| {
        s["state"] = json!({"terminated": terminated});
        s["ready"] = json!(false);
        s["started"] = json!(false);
    });
    // Every container ended: the pod did, Succeeded if all exited 0.
    let _ = store.modify(Resource::Pods, &id.key, |p| {
        let codes: Option<Vec<i64>> = p["status"]["containerStatuses"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| s.at("/state/terminated/exitCode").and_then(Value::as_i64))
            .collect();
        if let Some(codes) = codes {
            let phase = if codes.iter().all(|c| *c == 0) {
                "Succeeded"
            } else {
                "Failed"
            };
            super::ended(p, phase, &now);
        }
    });
    None
}

/// The kubelet's back-off before the `restarts + 1`th restart: 10 s,
/// doubling, at most five minutes (pkg/kubelet/kubelet.go
/// `backOffPeriod`, `MaxContainerBackOff`).
fn crash_loop_backoff(restarts: u32) -> Duration {
    let initial = Duration::from_secs(10);
    initial
        .saturating_mul(1 << restarts.min(5))
        .min(MAX_BACKOFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_back_off_doubles_up_to_five_minutes() {
        assert_eq!(crash_loop_backoff(0), Duration::from_secs(10));
        assert_eq!(crash_loop_backoff(1), Duration::from_secs(20));
        assert_eq!(crash_loop_backoff(9), MAX_BACKOFF);
    }
}
