//! One credential per process (src/client/credential.rs): an exec plugin
//! runs once per process until its token expires, and once more after a
//! 401; a token file is trimmed. Counted against the real kubectl on the
//! same kubeconfig.

use std::path::{Path, PathBuf};

use crate::harness::Cluster;
use crate::scenario::Scenario;

const OWNER: &str = "owner-token-for-the-plugin-5c2e";

/// A plugin that counts its runs in `count` and mints 15-second tokens:
/// the owner's, or with `revoke_first` a refused one on its first run.
fn plugin(dir: &Path, revoke_first: bool) -> (PathBuf, PathBuf) {
    let count = dir.join("runs");
    let path = dir.join(if revoke_first {
        "revoking.sh"
    } else {
        "minting.sh"
    });
    let first = if revoke_first { "revoked-token" } else { OWNER };
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nn=$(cat {c} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {c}\n\
             token={OWNER}; [ $n -eq 1 ] && token={first}\n\
             exp=$(date -u -d '+15 seconds' +%Y-%m-%dT%H:%M:%SZ)\n\
             echo \"{{\\\"apiVersion\\\":\\\"client.authentication.k8s.io/v1\\\",\\\"kind\\\":\\\"ExecCredential\\\",\\\"status\\\":{{\\\"token\\\":\\\"$token\\\",\\\"expirationTimestamp\\\":\\\"$exp\\\"}}}}\"\n",
            c = count.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    (path, count)
}

/// A kubeconfig for the sandbox whose user's credential is `plugin`.
pub(crate) fn exec_kubeconfig(c: &Cluster, name: &str, plugin: &Path) -> PathBuf {
    c.kubeconfig_with_user(
        name,
        &format!(
            "{{exec: {{apiVersion: client.authentication.k8s.io/v1, command: \"{}\", interactiveMode: Never}}}}",
            plugin.display()
        ),
    )
}

fn runs(count: &Path) -> u32 {
    let n = std::fs::read_to_string(count).map_or(0, |s| s.trim().parse().unwrap_or(0));
    let _ = std::fs::remove_file(count);
    n
}

fn cluster() -> Cluster {
    let scenario = Scenario::new()
        .node("n1")
        .node("n2")
        .deployment("web", 2)
        .yaml();
    let c = Cluster::start_with(&scenario, 33, |cfg| cfg.owner_token = Some(OWNER.into()));
    c.wait_settled();
    c
}

#[test]
fn a_plugin_runs_once_a_process_while_its_token_holds() {
    let c = cluster();
    let (path, count) = plugin(c.dir.path(), false);
    let kc = exec_kubeconfig(&c, "exec", &path);
    let kc = kc.to_str().unwrap();
    for args in [
        vec!["status", "--kubeconfig", kc],
        vec![
            "drain",
            "n1",
            "--dry-run=server",
            "--ignore-daemonsets",
            "--kubeconfig",
            kc,
        ],
        vec![
            "drain",
            "n1",
            "--ignore-daemonsets",
            "--yes",
            "--kubeconfig",
            kc,
        ],
        vec!["uncordon", "n1", "--kubeconfig", kc],
    ] {
        let out = c.maintain(&args);
        assert!(out.code == 0, "{args:?}: {out:?}");
        assert!(!out.stderr.contains(OWNER) && !out.stdout.contains(OWNER));
        assert_eq!(runs(&count), 1, "{args:?}: the plugin ran once");
    }
    // kubectl, for the record: at least as many.
    let theirs = c.kubectl(&["get", "nodes", "--kubeconfig", kc]);
    theirs.success();
    assert!(runs(&count) >= 1);
}

#[test]
fn a_refused_token_is_fetched_again_once_and_the_request_sent_again() {
    let c = cluster();
    let (path, count) = plugin(c.dir.path(), true);
    let kc = exec_kubeconfig(&c, "revoking", &path);
    let out = c.maintain(&["status", "--kubeconfig", kc.to_str().unwrap()]);
    out.success();
    assert_eq!(runs(&count), 2, "once refused, once fresh: {out:?}");
    let refused: Vec<_> = c
        .requests()
        .into_iter()
        .filter(|r| r.status == 401)
        .collect();
    assert_eq!(refused.len(), 1, "{refused:?}");
}

#[test]
fn a_token_file_ending_in_a_newline_is_trimmed_as_client_go_trims_it() {
    let c = cluster();
    let file = c.dir.path().join("token");
    std::fs::write(&file, format!("{OWNER}\n")).unwrap();
    let kc = c.kubeconfig_with_user(
        "token-file",
        &format!("{{tokenFile: \"{}\"}}", file.display()),
    );
    let kc = kc.to_str().unwrap();
    c.maintain(&["status", "--kubeconfig", kc]).success();
    c.kubectl(&["get", "nodes", "--kubeconfig", kc]).success();
    // A file that cannot be read is named, with why.
    std::fs::remove_file(&file).unwrap();
    let out = c.maintain(&["status", "--kubeconfig", kc]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains(&format!(
            "failed to read token file {:?}",
            file.display().to_string()
        )),
        "{out:?}"
    );
}

/// A roll that outlives its tokens: 15-second tokens the sandbox refuses
/// once they expire, as an identity provider's are; the plugin runs about
/// once a token, and the roll ends as if they lasted for ever.
#[test]
fn a_roll_outlives_its_15_second_tokens() {
    let c = cluster();
    let count = c.dir.path().join("minted");
    let plugin = c.dir.path().join("short-lived.sh");
    std::fs::write(
        &plugin,
        format!(
            "#!/bin/sh\nn=$(cat {c} 2>/dev/null || echo 0); echo $((n+1)) > {c}\n\
             until=$(( $(date +%s) + 15 ))\n\
             exp=$(date -u -d @$until +%Y-%m-%dT%H:%M:%SZ)\n\
             echo \"{{\\\"apiVersion\\\":\\\"client.authentication.k8s.io/v1\\\",\\\"kind\\\":\\\"ExecCredential\\\",\\\"status\\\":{{\\\"token\\\":\\\"{OWNER}.until.$until\\\",\\\"expirationTimestamp\\\":\\\"$exp\\\"}}}}\"\n",
            c = count.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&plugin, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let kc = exec_kubeconfig(&c, "short-lived", &plugin);
    let started = std::time::Instant::now();
    let out = c.maintain(&[
        "roll",
        "n1",
        "n2",
        "--ignore-daemonsets",
        "--yes",
        "--exec",
        "sleep 12",
        "--kubeconfig",
        kc.to_str().unwrap(),
    ]);
    let took = started.elapsed().as_secs();
    out.success();
    let minted = runs(&count);
    assert!(took >= 24, "the roll outlived a token: {took} s");
    assert!(
        (2..=took / 15 + 2).contains(&u64::from(minted)),
        "{minted} tokens for {took} s: {out:?}"
    );
    assert!(!out.stderr.contains(OWNER) && !out.stdout.contains(OWNER));
    // The door the tokens go through: an expired one is refused.
    let past = kube_conventions::time::now().as_second() - 1;
    let expired = c.kubectl(&["get", "nodes", "--token", &format!("{OWNER}.until.{past}")]);
    assert!(
        expired.stderr.contains("You must be logged in"),
        "{expired:?}"
    );
}
