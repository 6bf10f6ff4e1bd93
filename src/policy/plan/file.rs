//! Reading a DrainPlan from YAML. Every mistake is reported with the file,
//! line and column, and before anything talks to the cluster.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_saphyr::Spanned;

use super::defaults;
use super::model::{Hook, HookPoint, Hooks, OnTimeout, Plan, PodType, Rule, RuleAction, Wave};
use kube_conventions::selector::Selector;

pub const API_VERSION: &str = "kubectl-maintain.io/v1alpha1";
pub const KIND: &str = "DrainPlan";

/// A plan's mistake: `file:line:column: message`, or `file: message` for
/// the whole file (it cannot be read), then the hint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}{}", where_(file, *line, *column), hint.as_ref().map(|h| format!("\n  hint: {h}")).unwrap_or_default())]
pub struct PlanError {
    pub file: String,
    pub line: u64,
    pub column: u64,
    pub message: String,
    pub hint: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PlanDoc {
    api_version: String,
    kind: String,
    #[serde(default)]
    metadata: Option<MetadataDoc>,
    spec: SpecDoc,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MetadataDoc {
    #[allow(dead_code)]
    name: Option<String>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SpecDoc {
    #[serde(default)]
    waves: Vec<Spanned<WaveDoc>>,
    #[serde(default)]
    rules: Vec<Spanned<RuleDoc>>,
    #[serde(default)]
    taints: Vec<Spanned<TaintDoc>>,
    #[serde(default)]
    deadline: Option<Spanned<String>>,
    #[serde(default)]
    surge: bool,
    #[serde(default)]
    hooks: HooksDoc,
}

#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct HooksDoc {
    #[serde(default)]
    pre_drain: Vec<Spanned<HookDoc>>,
    #[serde(default)]
    post_action: Vec<Spanned<HookDoc>>,
    #[serde(default)]
    pre_uncordon: Vec<Spanned<HookDoc>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct HookDoc {
    annotation: String,
    #[serde(default)]
    timeout: Option<String>,
    #[serde(default)]
    on_timeout: OnTimeout,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaintDoc {
    key: String,
    #[serde(default)]
    value: String,
    effect: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct WaveDoc {
    name: Option<String>,
    #[serde(default)]
    pod_type: PodType,
    pod_priority: i32,
    pod_selector: Option<LabelSelectorDoc>,
    namespace_selector: Option<LabelSelectorDoc>,
    timeout: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RuleDoc {
    name: Option<String>,
    action: RuleAction,
    pod_selector: Option<LabelSelectorDoc>,
    namespace_selector: Option<LabelSelectorDoc>,
}

#[derive(Debug, Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct LabelSelectorDoc {
    #[serde(default)]
    match_labels: BTreeMap<String, String>,
    #[serde(default)]
    match_expressions: Vec<ExpressionDoc>,
}

#[derive(Debug, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
struct ExpressionDoc {
    key: String,
    operator: String,
    #[serde(default)]
    values: Vec<String>,
}

impl LabelSelectorDoc {
    fn to_selector(&self) -> Result<Selector, String> {
        let v = serde_json::json!({"matchLabels": self.match_labels, "matchExpressions": self.match_expressions});
        Selector::from_label_selector(Some(&v)).map_err(|e| e.reason)
    }
}

pub fn load(path: &Path) -> Result<Plan, PlanError> {
    let (file, text) = read_small(path, "the plan")?;
    parse(&file, &text)
}

/// A small YAML file the operator wrote (a plan, workload times): its name
/// as errors show it, and its text, read up to a bound (crate::files).
pub fn read_small(path: &Path, what: &str) -> Result<(String, String), PlanError> {
    let file = path.display().to_string();
    let whole = |message: String| PlanError {
        file: file.clone(),
        line: 0,
        column: 0,
        message,
        hint: None,
    };
    let text = crate::files::read_text(path).map_err(|e| match e {
        crate::files::SmallFileError::Io(e) => whole(format!("cannot read {what}: {e}")),
        other => whole(format!("{what}: {other}")),
    })?;
    Ok((file, text))
}

fn where_(file: &str, line: u64, column: u64) -> String {
    match line {
        0 => format!("{file}: "),
        _ => format!("{file}:{line}:{column}: "),
    }
}

/// A value of the wrong type, as the parser says it (`invalid i32`), said
/// with the field it is in (the key on its line) and what it takes.
fn typed(text: &str, line: u64, message: String) -> String {
    let expected = [
        ("i32", "a whole number"),
        ("i64", "a whole number"),
        ("u32", "a whole number, 0 or more"),
        ("u64", "a whole number, 0 or more"),
        ("bool", "true or false"),
    ]
    .into_iter()
    .find(|(t, _)| {
        message == format!("invalid {t}") || message.ends_with(&format!("expected {t}"))
    });
    let Some((_, words)) = expected else {
        return message;
    };
    let entry = usize::try_from(line)
        .ok()
        .and_then(|l| text.lines().nth(l.checked_sub(1)?))
        .and_then(|l| l.split_once(':'))
        .map(|(key, value)| (key.trim().trim_start_matches("- ").trim(), value.trim()));
    match entry {
        Some((key, value)) if !key.is_empty() && !key.contains(' ') => {
            format!("{key}: expected {words}, found {value}")
        }
        _ => format!("expected {words} ({message})"),
    }
}

fn at(file: &str, loc: serde_saphyr::Location, message: String, hint: Option<&str>) -> PlanError {
    PlanError {
        file: file.to_string(),
        line: loc.line(),
        column: loc.column(),
        message,
        hint: hint.map(str::to_string),
    }
}

fn selector_at(
    file: &str,
    loc: serde_saphyr::Location,
    s: Option<&LabelSelectorDoc>,
    what: &str,
) -> Result<Option<Selector>, PlanError> {
    s.map(LabelSelectorDoc::to_selector)
        .transpose()
        .map_err(|e| at(file, loc, format!("{what}: {e}"), None))
}

pub fn parse(file: &str, text: &str) -> Result<Plan, PlanError> {
    let doc: Spanned<PlanDoc> = serde_saphyr::from_str(text).map_err(|e| {
        let (line, column, message) = kube_conventions::yaml::position(&e);
        let message = typed(text, line, message);
        let hint = if message.contains("unknown field") {
            Some("a DrainPlan has apiVersion, kind, metadata and spec; spec has waves, rules, taints, deadline, surge and hooks; see docs/plan.md".into())
        } else if message.contains("unknown variant") {
            Some("podType is Default, DaemonSet or Static; action is skip, waitCompleted or surge; onTimeout is fail or continue".into())
        } else {
            None
        };
        PlanError {
            file: file.to_string(),
            line,
            column,
            message,
            hint,
        }
    })?;
    let top = doc.referenced;
    let doc = doc.value;
    if doc.api_version != API_VERSION || doc.kind != KIND {
        return Err(at(
            file,
            top,
            format!(
                "expected apiVersion {API_VERSION} and kind {KIND}, found {} {}",
                doc.api_version, doc.kind
            ),
            Some(
                "start the file with `apiVersion: kubectl-maintain.io/v1alpha1` and `kind: DrainPlan`",
            ),
        ));
    }
    let _ = doc.metadata;
    let spec = &doc.spec;
    let mut plan = Plan {
        waves: waves(file, &spec.waves)?,
        rules: rules(file, &spec.rules)?,
        taints: taints(file, &spec.taints)?,
        deadline: deadline(file, spec.deadline.as_ref())?,
        surge: doc.spec.surge,
        hooks: hooks(file, &spec.hooks)?,
        source: file.to_string(),
    };
    defaults::complete(&mut plan);
    Ok(plan)
}

fn waves(file: &str, waves: &[Spanned<WaveDoc>]) -> Result<Vec<Wave>, PlanError> {
    let mut out: Vec<Wave> = Vec::new();
    for (i, w) in waves.iter().enumerate() {
        let loc = w.referenced;
        let d = &w.value;
        let sel = |s: &Option<LabelSelectorDoc>, field: &str| {
            selector_at(file, loc, s.as_ref(), &format!("waves[{i}].{field}"))
        };
        let timeout = d
            .timeout
            .as_deref()
            .map(crate::duration::parse)
            .transpose()
            .map_err(|e| at(file, loc, format!("waves[{i}].timeout: {e}"), None))?;
        let name = d
            .name
            .clone()
            .unwrap_or_else(|| format!("{}<={}", d.pod_type, d.pod_priority));
        let wave = Wave {
            name,
            pod_type: d.pod_type,
            max_priority: d.pod_priority,
            pod_selector: sel(&d.pod_selector, "podSelector")?,
            namespace_selector: sel(&d.namespace_selector, "namespaceSelector")?,
            timeout,
        };
        // An empty selector is what a template renders from empty values;
        // as a wave's it would sort the wave as narrower than it is.
        for (field, s) in [
            ("podSelector", &wave.pod_selector),
            ("namespaceSelector", &wave.namespace_selector),
        ] {
            if s.as_ref().is_some_and(Selector::is_everything) {
                return Err(at(
                    file,
                    loc,
                    format!("waves[{i}].{field} is empty, so it matches every pod"),
                    Some(
                        "leave the selector out for a wave of every pod of its type and priority, or say which pods it is for",
                    ),
                ));
            }
        }
        if let Some(prev) = out.last()
            && wave.order_key() < Wave::order_key(prev)
        {
            let prev: &Wave = prev;
            return Err(at(
                file,
                loc,
                format!(
                    "wave {:?} ({} priority {}) cannot come after wave {:?} ({} priority {})",
                    wave.name,
                    wave.pod_type,
                    wave.max_priority,
                    prev.name,
                    prev.pod_type,
                    prev.max_priority
                ),
                Some(
                    "waves run in order: podType Default, then DaemonSet, then Static; within a type by ascending podPriority; at equal type and priority, entries with a selector first",
                ),
            ));
        }
        if let Some(prev) = out.iter().find(|p: &&Wave| p.name == wave.name) {
            return Err(at(
                file,
                loc,
                format!("two waves are named {:?}", prev.name),
                None,
            ));
        }
        out.push(wave);
    }
    Ok(out)
}

fn rules(file: &str, rules: &[Spanned<RuleDoc>]) -> Result<Vec<Rule>, PlanError> {
    let mut out = Vec::new();
    for (i, r) in rules.iter().enumerate() {
        let loc = r.referenced;
        let d = &r.value;
        if d.pod_selector.is_none() && d.namespace_selector.is_none() {
            return Err(at(
                file,
                loc,
                format!("rules[{i}] has neither podSelector nor namespaceSelector"),
                Some("a rule without a selector would match every pod; say which pods it is for"),
            ));
        }
        let sel = |s: &Option<LabelSelectorDoc>, field: &str| {
            selector_at(file, loc, s.as_ref(), &format!("rules[{i}].{field}"))
        };
        let rule = Rule {
            name: d.name.clone().unwrap_or_else(|| format!("rule-{i}")),
            action: d.action,
            pod_selector: sel(&d.pod_selector, "podSelector")?,
            namespace_selector: sel(&d.namespace_selector, "namespaceSelector")?,
        };
        // `podSelector: {}` (or `{matchLabels: {}}`, `{matchExpressions:
        // []}`) matches every pod, as a rule with no selector would: a rule
        // that skips or forces every pod is a template's empty values, not
        // an intent. Beside a namespace selector it means "every pod there".
        if [&rule.pod_selector, &rule.namespace_selector]
            .into_iter()
            .flatten()
            .all(Selector::is_everything)
        {
            return Err(at(
                file,
                loc,
                format!(
                    "rules[{i}] matches every pod: its {} empty",
                    match (&rule.pod_selector, &rule.namespace_selector) {
                        (Some(_), Some(_)) => "podSelector and namespaceSelector are",
                        (Some(_), None) => "podSelector is",
                        _ => "namespaceSelector is",
                    }
                ),
                Some(
                    "an empty selector matches every pod, as a missing one would; say which pods the rule is for",
                ),
            ));
        }
        out.push(rule);
    }
    Ok(out)
}

fn taints(
    file: &str,
    taints: &[Spanned<TaintDoc>],
) -> Result<Vec<crate::policy::maintenance::TaintSpec>, PlanError> {
    let mut out = Vec::new();
    for (i, t) in taints.iter().enumerate() {
        let d = &t.value;
        let text = if d.value.is_empty() {
            format!("{}:{}", d.key, d.effect)
        } else {
            format!("{}={}:{}", d.key, d.value, d.effect)
        };
        let taint = crate::policy::maintenance::TaintSpec::parse(&text)
            .map_err(|e| at(file, t.referenced, format!("taints[{i}]: {e}"), None))?;
        out.push(taint);
    }
    Ok(out)
}

/// An annotation key as the API server takes it: an optional DNS
/// subdomain prefix and `/`, then a name of at most 63 characters,
/// alphanumeric at both ends, with `-`, `_` and `.` inside.
fn annotation_key(key: &str) -> Result<(), String> {
    let (prefix, name) = key
        .rsplit_once('/')
        .map_or((None, key), |(p, n)| (Some(p), n));
    let name_ok = !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    let prefix_ok = prefix.is_none_or(|p| {
        !p.is_empty()
            && p.len() <= 253
            && p.split('.').all(|l| {
                !l.is_empty()
                    && l.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                    && !l.starts_with('-')
                    && !l.ends_with('-')
            })
    });
    if name_ok && prefix_ok {
        Ok(())
    } else {
        Err(format!(
            "{key:?} is not an annotation key (an optional DNS prefix and /, then a name of at most 63 characters: letters, digits, -, _, .)"
        ))
    }
}

/// How long a hook is waited for when its `timeout` is left out.
pub const HOOK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15 * 60);

fn hooks(file: &str, doc: &HooksDoc) -> Result<Hooks, PlanError> {
    let one = |point: HookPoint, list: &[Spanned<HookDoc>]| -> Result<Vec<Hook>, PlanError> {
        let mut out: Vec<Hook> = Vec::new();
        for (i, h) in list.iter().enumerate() {
            let field = format!("hooks.{}[{i}]", point.as_str());
            let d = &h.value;
            annotation_key(&d.annotation)
                .map_err(|e| at(file, h.referenced, format!("{field}.annotation: {e}"), None))?;
            if d.annotation.starts_with("kubectl-maintain.io/") {
                return Err(at(
                    file,
                    h.referenced,
                    format!(
                        "{field}.annotation: {:?} is kubectl-maintain's own",
                        d.annotation
                    ),
                    Some("name the annotation the other operator sets, such as rook.io/pre-drain"),
                ));
            }
            if out.iter().any(|o| o.annotation == d.annotation) {
                return Err(at(
                    file,
                    h.referenced,
                    format!("{field}: {:?} twice", d.annotation),
                    None,
                ));
            }
            let timeout = d
                .timeout
                .as_deref()
                .map(crate::duration::parse)
                .transpose()
                .map_err(|e| at(file, h.referenced, format!("{field}.timeout: {e}"), None))?
                .unwrap_or(HOOK_TIMEOUT);
            out.push(Hook {
                annotation: d.annotation.clone(),
                timeout,
                on_timeout: d.on_timeout,
            });
        }
        Ok(out)
    };
    Ok(Hooks {
        pre_drain: one(HookPoint::PreDrain, &doc.pre_drain)?,
        post_action: one(HookPoint::PostAction, &doc.post_action)?,
        pre_uncordon: one(HookPoint::PreUncordon, &doc.pre_uncordon)?,
    })
}

fn deadline(
    file: &str,
    deadline: Option<&Spanned<String>>,
) -> Result<Option<std::time::Duration>, PlanError> {
    deadline
        .map(|d| {
            crate::duration::parse(&d.value)
                .map_err(|e| at(file, d.referenced, format!("deadline: {e}"), None))
        })
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "apiVersion: kubectl-maintain.io/v1alpha1
kind: DrainPlan
spec:
  waves:
  - name: batch-first
    podPriority: 1000
    podSelector:
      matchLabels: {tier: batch}
    timeout: 2m
  - name: apps
    podPriority: 1000
  - name: agents
    podType: DaemonSet
    podPriority: 2000000000
  rules:
  - name: keep-logging
    action: skip
    namespaceSelector:
      matchLabels: {team: logging}
  - action: waitCompleted
    podSelector:
      matchExpressions: [{key: job, operator: Exists}]
";

    #[test]
    fn a_good_plan_gets_its_defaults() {
        let p = parse("p.yaml", GOOD).unwrap();
        let names: Vec<&str> = p.waves.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "batch-first",
                "apps",
                "user",
                "cluster-critical",
                "node-critical",
                "rest",
                "daemonset-user",
                "agents",
                "daemonset-node-critical",
                "daemonset-rest"
            ]
        );
        assert_eq!(
            p.waves[0].timeout,
            Some(std::time::Duration::from_secs(120))
        );
        assert_eq!(p.rules.len(), 2);
        assert_eq!(p.rules[1].action, RuleAction::WaitCompleted);
    }

    fn err(text: &str) -> PlanError {
        parse("p.yaml", text).unwrap_err()
    }

    #[test]
    fn out_of_order_waves_are_named_with_their_line() {
        let e = err(
            "apiVersion: kubectl-maintain.io/v1alpha1\nkind: DrainPlan\nspec:\n  waves:\n  - name: late\n    podPriority: 5000\n  - name: early\n    podPriority: 10\n",
        );
        assert_eq!((e.line, e.column), (7, 5), "{e}");
        assert!(e.message.contains("\"early\""), "{e}");
        assert!(e.hint.unwrap().contains("ascending podPriority"));
    }

    #[test]
    fn a_value_of_the_wrong_type_names_its_field_and_what_it_takes() {
        let e = err(
            "apiVersion: kubectl-maintain.io/v1alpha1\nkind: DrainPlan\nspec:\n  waves:\n  - name: a\n    podPriority: high\n",
        );
        assert_eq!(e.line, 6, "{e}");
        assert_eq!(
            e.message,
            "podPriority: expected a whole number, found high"
        );
        assert!(e.to_string().starts_with("p.yaml:6:"), "{e}");
        // A file that cannot be read is the whole file's mistake: no 0:0.
        let missing = load(Path::new("/nonexistent/plan.yaml")).unwrap_err();
        assert!(
            missing
                .to_string()
                .starts_with("/nonexistent/plan.yaml: cannot read the plan"),
            "{missing}"
        );
    }

    #[test]
    fn an_empty_selector_is_refused_where_it_would_match_every_pod() {
        let head = "apiVersion: kubectl-maintain.io/v1alpha1\nkind: DrainPlan\nspec:\n";
        for empty in ["{}", "{matchLabels: {}}", "{matchExpressions: []}"] {
            for field in ["podSelector", "namespaceSelector"] {
                let e = err(&format!(
                    "{head}  rules:\n  - name: all\n    action: skip\n    {field}: {empty}\n"
                ));
                assert_eq!(e.line, 5, "{e}");
                assert!(e.message.contains("matches every pod"), "{e}");
                let e = err(&format!(
                    "{head}  waves:\n  - podPriority: 5\n    {field}: {empty}\n"
                ));
                assert!(e.message.contains("is empty"), "{e}");
            }
        }
        // Every pod of the namespaces named: a selector that says which.
        let p = parse(
            "p.yaml",
            &format!(
                "{head}  rules:\n  - action: skip\n    podSelector: {{}}\n    namespaceSelector: {{matchLabels: {{team: a}}}}\n"
            ),
        )
        .unwrap();
        assert_eq!(p.rules.len(), 1);
    }

    #[test]
    fn deadline_and_surge_are_plan_fields() {
        let p = parse(
            "x.yaml",
            "apiVersion: kubectl-maintain.io/v1alpha1\nkind: DrainPlan\nspec:\n  deadline: 15m\n  surge: true\n",
        )
        .unwrap();
        assert_eq!(p.deadline, Some(std::time::Duration::from_secs(900)));
        assert!(p.surge);
        let e = err(
            "apiVersion: kubectl-maintain.io/v1alpha1\nkind: DrainPlan\nspec:\n  deadline: soon\n",
        );
        assert_eq!((e.line, e.message.contains("deadline")), (4, true), "{e}");
    }

    #[test]
    fn unknown_fields_and_bad_values_point_at_them() {
        let e = err(
            "apiVersion: kubectl-maintain.io/v1alpha1\nkind: DrainPlan\nspec:\n  waves:\n  - podPriority: 5\n    podSelecter: {}\n",
        );
        assert_eq!(e.line, 6, "{e}");
        assert!(e.message.contains("unknown field"), "{e}");
        let e = err(
            "apiVersion: kubectl-maintain.io/v1alpha1\nkind: DrainPlan\nspec:\n  waves:\n  - podPriority: high\n",
        );
        assert_eq!(e.line, 5, "{e}");
        let e = err(
            "apiVersion: kubectl-maintain.io/v1alpha1\nkind: DrainPlan\nspec:\n  rules:\n  - action: skip\n    podSelector:\n      matchExpressions: [{key: a, operator: Near}]\n",
        );
        assert!(e.message.contains("unknown operator"), "{e}");
        let e = err("apiVersion: v1\nkind: Pod\nspec: {}\n");
        assert!(e.message.contains("expected apiVersion"), "{e}");
        let e = err(
            "apiVersion: kubectl-maintain.io/v1alpha1\nkind: DrainPlan\nspec:\n  waves:\n  - podPriority: 5\n    timeout: soon\n",
        );
        assert!(e.message.contains("invalid duration"), "{e}");
    }

    #[test]
    fn truncated_yaml_names_a_position() {
        let e = err(
            "apiVersion: kubectl-maintain.io/v1alpha1\nkind: DrainPlan\nspec:\n  waves:\n  - {podPriority: 5\n",
        );
        assert!(e.line > 0, "{e}");
    }
}
