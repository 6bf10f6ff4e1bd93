//! Shell completion. Static scripts for bash, zsh, fish and PowerShell come
//! from clap_complete; node names come from the cluster through kubectl's
//! plugin completion: kubectl 1.26+ runs `kubectl_complete-maintain ARGS...
//! PARTIAL` and reads one candidate per line, then `:<directive>` (Cobra's
//! protocol; kubectl pkg/cmd/plugin/plugin_completion.go).

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;

/// Cobra's ShellCompDirective values.
pub const DIRECTIVE_DEFAULT: u8 = 0;
pub const DIRECTIVE_NO_FILE: u8 = 4;

/// The completion script for a shell, for the `kubectl-maintain` executable.
pub fn script(shell: Shell) -> String {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "kubectl-maintain", &mut out);
    String::from_utf8(out).expect("completion scripts are UTF-8")
}

/// What the user is completing, worked out from the words typed so far.
#[derive(Debug, PartialEq, Eq)]
pub enum Want {
    Subcommands,
    Flags(String),
    Values(Vec<&'static str>),
    Files,
    Nodes(String),
    Nothing,
}

/// Decides what to complete; pure. `args` are the words after
/// `kubectl maintain`, the last one being the partial word.
pub fn want(args: &[String]) -> Want {
    let Some((partial, before)) = args.split_last() else {
        return Want::Subcommands;
    };
    if before.is_empty() {
        return if partial.starts_with('-') {
            Want::Nothing
        } else {
            Want::Subcommands
        };
    }
    let sub = before[0].as_str();
    if let Some(prev) = before
        .last()
        .filter(|p| p.starts_with('-') && !p.contains('='))
    {
        match prev.as_str() {
            "-o" | "--output" => return Want::Values(vec!["table", "json", "yaml"]),
            "--plan" | "--kubeconfig" | "--scenario" | "--kubeconfig-out" | "--request-log" => {
                return Want::Files;
            }
            "-l"
            | "--selector"
            | "--pod-selector"
            | "--timeout"
            | "--grace-period"
            | "--context"
            | "--chunk-size"
            | "--max-parallel"
            | "--skip-wait-for-delete-timeout" => return Want::Nothing,
            _ => {}
        }
    }
    if partial.starts_with('-') {
        return Want::Flags(sub.to_string());
    }
    match sub {
        "drain" | "plan" | "uncordon" => Want::Nodes(partial.clone()),
        "completion" => Want::Values(vec!["bash", "zsh", "fish", "powershell"]),
        _ => Want::Nothing,
    }
}

/// Candidates and the directive for kubectl, given a way to list nodes.
pub fn candidates(args: &[String], nodes: impl FnOnce() -> Vec<String>) -> (Vec<String>, u8) {
    let partial = args.last().cloned().unwrap_or_default();
    let cmd = Cli::command();
    match want(args) {
        Want::Subcommands => {
            let subs = cmd
                .get_subcommands()
                .filter(|s| !s.is_hide_set())
                .map(|s| {
                    format!(
                        "{}\t{}",
                        s.get_name(),
                        s.get_about().map(ToString::to_string).unwrap_or_default()
                    )
                })
                .filter(|s| s.starts_with(&partial))
                .collect();
            (subs, DIRECTIVE_NO_FILE)
        }
        Want::Flags(sub) => {
            let flags = cmd
                .find_subcommand(&sub)
                .map(|s| {
                    s.get_arguments()
                        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
                        .filter(|f| f.starts_with(&partial))
                        .collect()
                })
                .unwrap_or_default();
            (flags, DIRECTIVE_NO_FILE)
        }
        Want::Values(vs) => (
            vs.into_iter()
                .filter(|v| v.starts_with(&partial))
                .map(str::to_string)
                .collect(),
            DIRECTIVE_NO_FILE,
        ),
        Want::Files => (Vec::new(), DIRECTIVE_DEFAULT),
        Want::Nodes(p) => {
            let typed: Vec<&String> = args.iter().collect();
            let names = nodes()
                .into_iter()
                .filter(|n| n.starts_with(&p) && !typed[..typed.len() - 1].contains(&n))
                .collect();
            (names, DIRECTIVE_NO_FILE)
        }
        Want::Nothing => (Vec::new(), DIRECTIVE_NO_FILE),
    }
}

/// `kubectl-maintain __complete ARGS... PARTIAL`: prints the candidates and
/// the directive as kubectl expects them. The cluster is asked only when node
/// names are wanted.
pub async fn run(args: &[String]) {
    let nodes = if matches!(want(args), Want::Nodes(_)) {
        node_names().await
    } else {
        Vec::new()
    };
    let (words, directive) = candidates(args, || nodes);
    for w in words {
        crate::outln!("{w}");
    }
    crate::outln!(":{directive}");
}

/// Node names from the cluster the kubeconfig points at, quickly or not at all.
pub async fn node_names() -> Vec<String> {
    use k8s_openapi::api::core::v1::Node;
    let list = async {
        let clients = crate::client::connect(&crate::cli::ClusterArgs::default())
            .await
            .ok()?;
        let api: kube::Api<Node> = kube::Api::all(clients.main);
        let nodes = api
            .list_metadata(&kube::api::ListParams::default())
            .await
            .ok()?;
        Some(
            nodes
                .items
                .into_iter()
                .filter_map(|n| n.metadata.name)
                .collect::<Vec<_>>(),
        )
    };
    tokio::time::timeout(std::time::Duration::from_secs(3), list)
        .await
        .ok()
        .flatten()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &[&str]) -> Vec<String> {
        s.iter().map(|w| (*w).to_string()).collect()
    }

    #[test]
    fn knows_what_to_complete() {
        assert_eq!(want(&words(&[""])), Want::Subcommands);
        assert_eq!(want(&words(&["dr"])), Want::Subcommands);
        assert_eq!(want(&words(&["drain", "wor"])), Want::Nodes("wor".into()));
        assert_eq!(
            want(&words(&["drain", "--ig"])),
            Want::Flags("drain".into())
        );
        assert_eq!(
            want(&words(&["drain", "-o", ""])),
            Want::Values(vec!["table", "json", "yaml"])
        );
        assert_eq!(want(&words(&["drain", "--plan", ""])), Want::Files);
        assert_eq!(want(&words(&["drain", "--timeout", ""])), Want::Nothing);
    }

    #[test]
    fn candidates_filter_by_prefix_and_skip_typed_nodes() {
        let (subs, d) = candidates(&words(&["dr"]), Vec::new);
        assert_eq!(d, DIRECTIVE_NO_FILE);
        assert!(subs.iter().any(|s| s.starts_with("drain\t")), "{subs:?}");
        let (nodes, _) = candidates(&words(&["drain", "node-1", "node"]), || {
            vec!["node-1".into(), "node-2".into(), "other".into()]
        });
        assert_eq!(nodes, ["node-2"]);
        let (flags, _) = candidates(&words(&["drain", "--ignore-d"]), Vec::new);
        assert_eq!(flags, ["--ignore-daemonsets"]);
    }
}
