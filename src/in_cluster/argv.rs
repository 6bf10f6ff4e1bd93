//! The command line the Job runs: the one typed, less what only the
//! submitter's machine means (where its kubeconfig is and who it is, the
//! in-cluster flags themselves), with the plan file read from the Job's
//! ConfigMap, and `--yes` (no terminal in a pod). Which flags take a value
//! is clap's definition of the command (`takes_value`), so that a value is
//! never read as a flag. The values of the flags that may hold credentials
//! (`--notify`, `--pushgateway`, `--block-on-alerts`: a webhook's path, a
//! URL's login) are not in the arguments: each becomes `env:NAME`, and its
//! value goes to the run's Secret, which the Job's environment reads
//! (`secretKeyRef`). Pure.

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

/// Flags whose values may be credentials.
const SECRET_VALUED: &[&str] = &["--notify", "--pushgateway", "--block-on-alerts"];

/// Does this flag's value go to the run's Secret? Every endpoint's (its URL
/// may carry a login), and an `--exec` command given as `env:NAME` or
/// `file:PATH`, the form for a command that carries a credential (a plain
/// one stays in the arguments, where the operator reviewing it reads it).
fn secret_valued(flag: &str, value: &str) -> bool {
    SECRET_VALUED.contains(&flag)
        || (flag == "--exec" && (value.starts_with("env:") || value.starts_with("file:")))
}

/// A value kept out of the Job's arguments: the flag it was given to, the
/// how-manieth such value it is, and the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SecretValue {
    /// `--notify`.
    pub(crate) flag: String,
    pub(crate) n: usize,
    pub(crate) value: String,
}

impl SecretValue {
    /// Its key in the run's Secret: `notify-0`.
    pub(crate) fn key(&self) -> String {
        format!("{}-{}", self.flag.trim_start_matches('-'), self.n)
    }

    /// The environment variable the Job reads it from.
    pub(crate) fn env(&self) -> String {
        format!("KUBECTL_MAINTAIN_SECRET_{}", self.n)
    }
}

/// The Job's command line and what it reads from its Secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ForJob {
    pub(crate) args: Vec<String>,
    pub(crate) secrets: Vec<SecretValue>,
}

/// Takes the credential-bearing values out of `args` (what `for_job`
/// made), `resolve` reading `env:`/`file:` values on the submitter's side.
pub(crate) fn without_secrets(
    args: Vec<String>,
    resolve: impl Fn(&str, &str) -> Result<String, String>,
) -> Result<ForJob, String> {
    let mut out = Vec::new();
    let mut secrets = Vec::new();
    let mut it = args.into_iter();
    let keep = |flag: &str, value: &str, secrets: &mut Vec<SecretValue>| {
        let secret = SecretValue {
            flag: flag.to_string(),
            n: secrets.len(),
            value: resolve(flag, value)?,
        };
        let arg = format!("{flag}=env:{}", secret.env());
        secrets.push(secret);
        Ok::<_, String>(arg)
    };
    while let Some(a) = it.next() {
        if a == "--" {
            out.push(a);
            out.extend(it.by_ref());
            break;
        }
        match a.split_once('=') {
            Some((flag, value)) if secret_valued(flag, value) => {
                out.push(keep(flag, value, &mut secrets)?);
            }
            None if SECRET_VALUED.contains(&a.as_str()) || a == "--exec" => match it.next() {
                Some(value) if secret_valued(&a, &value) => {
                    out.push(keep(&a, &value, &mut secrets)?);
                }
                Some(value) => {
                    out.push(a);
                    out.push(value);
                }
                None => out.push(a),
            },
            _ => out.push(a),
        }
    }
    Ok(ForJob { args: out, secrets })
}

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
    fn credentials_leave_the_arguments_for_the_secret() {
        let typed = args(
            "roll -l a=b --notify https://hooks.slack.com/x/SECRET --timeout 5m \
             --pushgateway=http://u:PW@pgw:9091 --notify file:/etc/hook -- --notify x",
        );
        let resolve = |_: &str, v: &str| {
            Ok(match v.strip_prefix("file:") {
                Some(_) => "https://from-the-file/SECRET2".to_string(),
                None => v.to_string(),
            })
        };
        let job = without_secrets(typed, resolve).unwrap();
        assert_eq!(
            job.args,
            args(
                "roll -l a=b --notify=env:KUBECTL_MAINTAIN_SECRET_0 --timeout 5m \
                 --pushgateway=env:KUBECTL_MAINTAIN_SECRET_1 --notify=env:KUBECTL_MAINTAIN_SECRET_2 -- --notify x"
            )
        );
        let values: Vec<(String, &str)> = job
            .secrets
            .iter()
            .map(|s| (s.key(), s.value.as_str()))
            .collect();
        assert_eq!(
            values,
            [
                ("notify-0".to_string(), "https://hooks.slack.com/x/SECRET"),
                ("pushgateway-1".to_string(), "http://u:PW@pgw:9091"),
                ("notify-2".to_string(), "https://from-the-file/SECRET2"),
            ]
        );
        let line = job.args.join(" ");
        assert!(
            !line.contains("x/SECRET") && !line.contains(":PW@"),
            "{line}"
        );
    }

    #[test]
    fn an_exec_command_from_env_or_file_goes_to_the_secret_and_a_plain_one_stays() {
        let resolve = |_: &str, v: &str| Ok(format!("ssh root@$NODE reboot # token {v}"));
        let typed = vec![
            "roll".to_string(),
            "n1".to_string(),
            "--exec".to_string(),
            "env:REBOOT".to_string(),
        ];
        let job = without_secrets(typed, resolve).unwrap();
        assert_eq!(
            job.args,
            args("roll n1 --exec=env:KUBECTL_MAINTAIN_SECRET_0")
        );
        assert_eq!(
            job.secrets[0].value,
            "ssh root@$NODE reboot # token env:REBOOT"
        );
        let plain = vec![
            "roll".to_string(),
            "--exec".to_string(),
            "systemctl reboot".to_string(),
        ];
        let job = without_secrets(plain.clone(), resolve).unwrap();
        assert_eq!(job.args, plain);
        assert!(job.secrets.is_empty());
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
