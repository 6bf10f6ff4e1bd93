//! The command line the Job runs: the one typed, less what only the
//! submitter's machine means (where its kubeconfig is and who it is, the
//! in-cluster flags themselves), with the plan file read from the Job's
//! ConfigMap, and `--yes` (no terminal in a pod). Which flags take a value
//! is clap's definition of the command (`takes_value`), so that a value is
//! never read as a flag. Pure.

/// Flags dropped with their value: the submitter's connection and identity
/// (the pod talks to the API as its ServiceAccount), and the in-cluster
/// flags' own values.
const WITH_VALUE: &[&str] = &[
    "--kubeconfig",
    "--context",
    "--cluster",
    "--user",
    "--server",
    "-s",
    "--token",
    "--certificate-authority",
    "--client-certificate",
    "--client-key",
    "--tls-server-name",
    "--as",
    "--as-group",
    "--as-uid",
    "--username",
    "--password",
    "--namespace",
    "-n",
    "--cache-dir",
    "--image",
];

/// Flags dropped alone (booleans; `--flag=value` forms too).
const ALONE: &[&str] = &[
    "--in-cluster",
    "--render",
    "--cleanup",
    "--insecure-skip-tls-verify",
    "--yes",
    "-y",
];

/// Where the Job finds the plan file.
pub(crate) const PLAN_PATH: &str = "/etc/kubectl-maintain/plan.yaml";

/// The Job's arguments from the typed ones (without the program name);
/// `takes_value` says whether a flag (`--name` or `-n`) is followed by its
/// value when not given as `--name=value`.
pub(crate) fn for_job(typed: &[String], takes_value: impl Fn(&str) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = typed.iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with('-') => (f, Some(v)),
            _ => (a.as_str(), None),
        };
        if a == "--" {
            out.push(a.clone());
            out.extend(it.by_ref().cloned());
            break;
        }
        if ALONE.contains(&flag) {
            continue;
        }
        if WITH_VALUE.contains(&flag) {
            if inline.is_none() {
                it.next();
            }
            continue;
        }
        if flag == "--plan" {
            if inline.is_none() {
                it.next();
            }
            out.push(format!("--plan={PLAN_PATH}"));
            continue;
        }
        out.push(a.clone());
        if inline.is_none()
            && flag.starts_with('-')
            && takes_value(flag)
            && let Some(v) = it.next()
        {
            out.push(v.clone());
        }
    }
    out.push("--yes".into());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn valued(flag: &str) -> bool {
        ["-l", "--timeout", "--reason", "--exec"].contains(&flag) || WITH_VALUE.contains(&flag)
    }

    #[test]
    fn the_submitters_machine_stays_behind_and_the_plan_comes_from_the_config_map() {
        let job = for_job(
            &args(
                "roll -l pool=blue --kubeconfig /home/me/.kube/config --context=prod --in-cluster \
             --image reg/km@sha256:ab --plan ./plan.yaml --surge -n ops --as admin --timeout 10m -y",
            ),
            valued,
        );
        assert_eq!(
            job,
            args(&format!(
                "roll -l pool=blue --plan={PLAN_PATH} --surge --timeout 10m --yes"
            ))
        );
    }

    #[test]
    fn node_names_and_flag_values_that_look_like_flags_are_kept() {
        let job = for_job(
            &args("drain n1 node/n2 --exec=--render --reason --in-cluster --render"),
            valued,
        );
        assert_eq!(
            job,
            args("drain n1 node/n2 --exec=--render --reason --in-cluster --yes")
        );
    }
}
