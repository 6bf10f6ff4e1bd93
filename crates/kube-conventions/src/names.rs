//! Which names an object can have, as apimachinery checks them
//! (k8s.io/apimachinery/pkg/util/validation/validation.go `IsDNS1123Subdomain`,
//! and pkg/api/validation/path/name.go `IsValidPathSegmentName`, which
//! client-go's `Request.Name` applies before it builds a URL). Shared by the
//! plugin, which refuses a node name no node can have before any request,
//! and the sandbox, which refuses to store one.

/// The longest DNS-1123 subdomain.
pub const DNS1123_SUBDOMAIN_MAX: usize = 253;

/// Why a name cannot be one path segment of a URL, in client-go's words
/// (`may not be '..'`, `may not contain '/'`); empty when it can.
pub fn path_segment_errors(name: &str) -> Vec<String> {
    if let Some(bad) = [".", ".."].into_iter().find(|b| name == *b) {
        return vec![format!("may not be '{bad}'")];
    }
    ["/", "%"]
        .into_iter()
        .filter(|c| name.contains(c))
        .map(|c| format!("may not contain '{c}'"))
        .collect()
}

/// `[may not be '..']`: a list as Go's `%v` prints a `[]string`.
pub fn go_list(items: &[String]) -> String {
    format!("[{}]", items.join(" "))
}

/// Is this a lowercase RFC 1123 subdomain: dot-separated labels of lower
/// case letters, digits and '-', each starting and ending with a letter or
/// digit, 253 characters at most? Node, namespace and most other names are.
pub fn is_dns1123_subdomain(name: &str) -> bool {
    name.len() <= DNS1123_SUBDOMAIN_MAX
        && !name.is_empty()
        && name.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

/// apimachinery's message for a name that is not a subdomain.
pub const DNS1123_SUBDOMAIN_RULE: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_segments_as_client_go_checks_them() {
        assert_eq!(path_segment_errors(".."), vec!["may not be '..'"]);
        assert_eq!(path_segment_errors("."), vec!["may not be '.'"]);
        assert_eq!(
            path_segment_errors("a/%2F"),
            vec!["may not contain '/'", "may not contain '%'"]
        );
        assert!(path_segment_errors("n1?x").is_empty());
        assert_eq!(go_list(&path_segment_errors("..")), "[may not be '..']");
    }

    #[test]
    fn subdomains_as_apimachinery_checks_them() {
        for ok in [
            "n1",
            "gke-prod-pool-1-a1b2c3d4-x9z8",
            "ip-10-0-1-2.eu-west-1.compute.internal",
            "0",
            &"a".repeat(253),
        ] {
            assert!(is_dns1123_subdomain(ok), "{ok}");
        }
        for bad in [
            "",
            "N1",
            "n1?x",
            "n1#x",
            "n1\n",
            " n1",
            "-n1",
            "n1-",
            "a..b",
            ".a",
            "a.",
            "a.-b",
            "n_1",
            "nö",
            &"a".repeat(254),
        ] {
            assert!(!is_dns1123_subdomain(bad), "{bad:?}");
        }
    }
}
