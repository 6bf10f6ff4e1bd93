//! A node argument as kubectl's resource builder reads it
//! (k8s.io/cli-runtime/pkg/resource/builder.go, `ResourceNames("nodes",
//! args...)` and `splitResourceTypeName`): a bare `NAME`, or `TYPE/NAME`
//! where TYPE names nodes, so that `kubectl get nodes -o name | xargs
//! kubectl maintain drain` works as it does with kubectl drain.
//!
//! TYPE is what kubectl's REST mapper takes for nodes: the resource or its
//! kind in any case (`node`, `nodes`, `Node`, `NODES`), the short name `no`
//! (in lower case only, as kubectl expands it), each optionally with the
//! core group spelled out (`nodes.`, `node.v1.`). Checked against kubectl
//! 1.27 and 1.33: `nodes.v1/x` (group `v1`) and `NO/x` are refused there too.
//!
//! The name is checked before any request, so that nothing an operator's
//! script produces by mistake reaches a URL: what client-go's `Request.Name`
//! refuses (`..`, `%`) in its words, and any other name no node can have
//! (kube-apiserver's `ValidateNodeName` takes lowercase RFC 1123 subdomains
//! only: `n1?x`, `N1`, a trailing newline) as not found, which is what the
//! server would answer (kubectl: `nodes "n1?x" not found`).

/// The node name an argument stands for, or kubectl's error for it.
pub fn parse(arg: &str) -> Result<String, String> {
    let Some((kind, name)) = arg.split_once('/') else {
        return if arg.is_empty() {
            Err("a node name cannot be empty".into())
        } else {
            checked(arg)
        };
    };
    if name.contains('/') {
        return Err("arguments in resource/name form may not have more than one slash".into());
    }
    if kind.is_empty() || name.is_empty() || kind.contains(',') {
        return Err("arguments in resource/name form must have a single resource and name".into());
    }
    if names_nodes(kind) {
        checked(name)
    } else {
        Err(format!(
            "expected resource of type node, got {kind:?} (node/NAME, nodes/NAME or no/NAME)"
        ))
    }
}

/// A name some node can have, or why none can.
fn checked(name: &str) -> Result<String, String> {
    use kube_conventions::names;
    let errors = names::path_segment_errors(name);
    if !errors.is_empty() {
        return Err(format!(
            "invalid resource name {name:?}: {}",
            names::go_list(&errors)
        ));
    }
    if !names::is_dns1123_subdomain(name) {
        return Err(format!(
            "nodes {name:?} not found: no node can have this name ({}), so nothing was asked of the cluster",
            names::DNS1123_SUBDOMAIN_RULE
        ));
    }
    Ok(name.to_string())
}

/// Does this TYPE name nodes, as kubectl's REST mapper reads it?
fn names_nodes(kind: &str) -> bool {
    if kind == "no" {
        return true;
    }
    let (resource, group) = match kind.split_once('.') {
        None => (kind, None),
        Some((resource, rest)) => (resource, Some(rest)),
    };
    // `nodes.` is the core group; `nodes.v1.` its version v1 in it.
    let core = matches!(group, None | Some("" | "v1."));
    core && matches!(resource.to_ascii_lowercase().as_str(), "node" | "nodes")
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn every_spelling_kubectl_takes_for_a_node() {
        for arg in [
            "n1",
            "node/n1",
            "nodes/n1",
            "no/n1",
            "Node/n1",
            "NODES/n1",
            "nodes./n1",
            "node.v1./n1",
            "Node.v1./n1",
        ] {
            assert_eq!(parse(arg).as_deref(), Ok("n1"), "{arg}");
        }
    }

    #[test]
    fn what_kubectl_refuses_is_refused_with_its_words() {
        let refused = |arg: &str| parse(arg).expect_err(arg);
        assert!(refused("node/n1/x").contains("more than one slash"));
        for arg in ["/n1", "node/", "node,pod/n1"] {
            assert!(refused(arg).contains("single resource and name"), "{arg}");
        }
        for arg in ["pod/n1", "NO/n1", "nodes.v1/n1", "node.v1.core/n1", "po/n1"] {
            assert!(
                refused(arg).contains("expected resource of type node"),
                "{arg}"
            );
        }
        assert!(refused("").contains("empty"));
    }

    #[test]
    fn a_name_no_node_can_have_never_reaches_a_url() {
        let refused = |arg: &str| parse(arg).expect_err(arg);
        assert_eq!(
            refused(".."),
            r#"invalid resource name "..": [may not be '..']"#
        );
        assert!(refused("node/.").contains("[may not be '.']"));
        assert!(refused("n1%2F").contains("may not contain '%'"));
        for arg in ["n1?x", "n1#x", "n1\n", "N1", "node/n1?x", " n1", "n1 "] {
            assert!(refused(arg).contains("not found"), "{arg:?}");
        }
    }
}
