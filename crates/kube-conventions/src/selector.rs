//! Label selectors: the string form (`-l app=web,tier notin (db)`) and the
//! structured `LabelSelector` of PDBs and plans, matched against a label map.
//!
//! Semantics follow apimachinery's `labels.Parse` and
//! `metav1.LabelSelectorAsSelector`: requirements are ANDed, `!=` and `notin`
//! match objects that lack the key, `>`/`<` compare integers.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid label selector {input:?}: {reason}")]
pub struct SelectorError {
    pub input: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Equals(String),
    NotEquals(String),
    In(Vec<String>),
    NotIn(Vec<String>),
    Exists,
    DoesNotExist,
    Gt(i64),
    Lt(i64),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    pub key: String,
    pub op: Op,
}

/// A parsed selector. `Nothing` is the nil `LabelSelector` of a PDB: it
/// matches no object, unlike the empty selector, which matches every object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    Nothing,
    All(Vec<Requirement>),
}

impl Default for Selector {
    fn default() -> Self {
        Selector::All(Vec::new())
    }
}

impl Requirement {
    fn matches_value(&self, value: Option<&str>) -> bool {
        match &self.op {
            Op::Equals(v) => value == Some(v.as_str()),
            Op::NotEquals(v) => value != Some(v.as_str()),
            Op::In(vs) => value.is_some_and(|x| vs.iter().any(|v| v == x)),
            Op::NotIn(vs) => value.is_none_or(|x| !vs.iter().any(|v| v == x)),
            Op::Exists => value.is_some(),
            Op::DoesNotExist => value.is_none(),
            Op::Gt(n) => value
                .and_then(|x| x.parse::<i64>().ok())
                .is_some_and(|x| x > *n),
            Op::Lt(n) => value
                .and_then(|x| x.parse::<i64>().ok())
                .is_some_and(|x| x < *n),
        }
    }
}

impl Selector {
    pub fn everything() -> Self {
        Selector::All(Vec::new())
    }

    pub fn is_everything(&self) -> bool {
        matches!(self, Selector::All(r) if r.is_empty())
    }

    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.matches_with(|k| labels.get(k).map(String::as_str))
    }

    /// Matches the `metadata.labels` of a JSON object, without copying them.
    pub fn matches_object(&self, object: &Value) -> bool {
        // Not `pointer`: it unescapes every token, on a hot path.
        let labels = object
            .get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(Value::as_object);
        self.matches_with(|k| labels.and_then(|l| l.get(k)).and_then(Value::as_str))
    }

    /// Matches labels read through `label` (key to value), whatever holds them.
    pub fn matches_with<'a>(&self, label: impl Fn(&str) -> Option<&'a str>) -> bool {
        match self {
            Selector::Nothing => false,
            Selector::All(reqs) => reqs.iter().all(|r| r.matches_value(label(&r.key))),
        }
    }

    /// Parses the string form used by `-l` and `?labelSelector=`.
    pub fn parse(input: &str) -> Result<Self, SelectorError> {
        Parser::new(input).parse()
    }

    /// Converts a `LabelSelector` object (`matchLabels`, `matchExpressions`).
    /// `None` (a JSON null or a missing field) is the selector that matches
    /// nothing, as for a policy/v1 PDB.
    pub fn from_label_selector(value: Option<&Value>) -> Result<Self, SelectorError> {
        let Some(value) = value.filter(|v| !v.is_null()) else {
            return Ok(Selector::Nothing);
        };
        let err = |reason: String| SelectorError {
            input: value.to_string(),
            reason,
        };
        let mut reqs = Vec::new();
        if let Some(labels) = value.get("matchLabels").and_then(Value::as_object) {
            for (k, v) in labels {
                let v = v
                    .as_str()
                    .ok_or_else(|| err(format!("matchLabels.{k} is not a string")))?;
                validate_key(k).map_err(&err)?;
                reqs.push(Requirement {
                    key: k.clone(),
                    op: Op::Equals(v.to_string()),
                });
            }
        }
        if let Some(exprs) = value.get("matchExpressions").and_then(Value::as_array) {
            reqs.extend(requirements(exprs, false).map_err(err)?);
        }
        Ok(Selector::All(reqs))
    }

    /// Converts a node selector term's `matchExpressions` or `matchFields`
    /// (core/v1 NodeSelectorRequirement): the label operators and `Gt`/`Lt`.
    pub fn from_node_selector_requirements(exprs: &[Value]) -> Result<Self, SelectorError> {
        requirements(exprs, true)
            .map(Selector::All)
            .map_err(|reason| SelectorError {
                input: Value::Array(exprs.to_vec()).to_string(),
                reason,
            })
    }
}

/// `matchExpressions`-shaped requirements; `numeric` allows `Gt` and `Lt`.
fn requirements(exprs: &[Value], numeric: bool) -> Result<Vec<Requirement>, String> {
    let mut reqs = Vec::new();
    for e in exprs {
        let key = e
            .get("key")
            .and_then(Value::as_str)
            .ok_or_else(|| "a matchExpression has no key".to_string())?;
        validate_key(key)?;
        let values: Vec<String> = e
            .get("values")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let operator = e.get("operator").and_then(Value::as_str).unwrap_or("");
        let op = match operator {
            "In" | "NotIn" if values.is_empty() => {
                return Err(format!("operator {operator} needs values for key {key}"));
            }
            "In" => Op::In(values),
            "NotIn" => Op::NotIn(values),
            "Exists" | "DoesNotExist" if !values.is_empty() => {
                return Err(format!("operator {operator} takes no values for key {key}"));
            }
            "Exists" => Op::Exists,
            "DoesNotExist" => Op::DoesNotExist,
            "Gt" | "Lt" if numeric => {
                let n = match values.as_slice() {
                    [v] => v.parse::<i64>().ok(),
                    _ => None,
                }
                .ok_or_else(|| {
                    format!("operator {operator} needs one integer value for key {key}")
                })?;
                if operator == "Gt" {
                    Op::Gt(n)
                } else {
                    Op::Lt(n)
                }
            }
            other => {
                let known = if numeric {
                    "In, NotIn, Exists, DoesNotExist, Gt, Lt"
                } else {
                    "In, NotIn, Exists, DoesNotExist"
                };
                return Err(format!(
                    "unknown operator {other:?} for key {key} ({known})"
                ));
            }
        };
        reqs.push(Requirement {
            key: key.to_string(),
            op,
        });
    }
    Ok(reqs)
}

pub fn labels_of(object: &Value) -> BTreeMap<String, String> {
    object
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Selector::All(reqs) = self else {
            return f.write_str("<none>");
        };
        let parts: Vec<String> = reqs
            .iter()
            .map(|r| match &r.op {
                Op::Equals(v) => format!("{}={v}", r.key),
                Op::NotEquals(v) => format!("{}!={v}", r.key),
                Op::In(vs) => format!("{} in ({})", r.key, vs.join(",")),
                Op::NotIn(vs) => format!("{} notin ({})", r.key, vs.join(",")),
                Op::Exists => r.key.clone(),
                Op::DoesNotExist => format!("!{}", r.key),
                Op::Gt(n) => format!("{}>{n}", r.key),
                Op::Lt(n) => format!("{}<{n}", r.key),
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

/// A qualified name with an optional DNS prefix, as apimachinery validates label keys.
pub fn validate_key(key: &str) -> Result<(), String> {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if let Some(p) = prefix
        && (p.is_empty()
            || p.len() > 253
            || !p
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.'))
    {
        return Err(format!("invalid prefix in label key {key:?}"));
    }
    if name.is_empty() || name.len() > 63 {
        return Err(format!("label key {key:?} must be 1 to 63 characters"));
    }
    let ok_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.';
    let first = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric());
    let last = name
        .chars()
        .last()
        .is_some_and(|c| c.is_ascii_alphanumeric());
    if !name.chars().all(ok_char) || !first || !last {
        return Err(format!(
            "label key {key:?} must consist of alphanumerics, '-', '_' or '.', and begin and end with an alphanumeric"
        ));
    }
    Ok(())
}

/// Why apimachinery refuses `value` as a label value, in its words
/// (k8s.io/apimachinery pkg/util/validation, `IsValidLabelValue`), which
/// kubectl and kube-apiserver print: its length first, then its form.
pub fn label_value_refusal(value: &str) -> Option<&'static str> {
    if value.len() > 63 {
        return Some("must be no more than 63 characters");
    }
    validate_value(value).err().map(|_| {
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    })
}

/// A label value as apimachinery validates it: empty, or at most 63
/// alphanumerics, '-', '_' or '.', beginning and ending with an alphanumeric.
pub fn validate_value(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Ok(());
    }
    let ok_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.';
    let edges = value.starts_with(|c: char| c.is_ascii_alphanumeric())
        && value.ends_with(|c: char| c.is_ascii_alphanumeric());
    if value.len() > 63 || !value.chars().all(ok_char) || !edges {
        return Err(format!("invalid label value {value:?}"));
    }
    Ok(())
}

struct Parser<'a> {
    input: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn new(input: &'a str) -> Self {
        Parser { input, pos: 0 }
    }

    fn err(&self, reason: impl Into<String>) -> SelectorError {
        SelectorError {
            input: self.input.to_string(),
            reason: reason.into(),
        }
    }

    fn rest(&self) -> &'a str {
        &self.input[self.pos..]
    }

    fn skip_ws(&mut self) {
        let trimmed = self.rest().trim_start();
        self.pos = self.input.len() - trimmed.len();
    }

    fn eat(&mut self, s: &str) -> bool {
        self.skip_ws();
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    fn word(&mut self) -> &'a str {
        self.skip_ws();
        let rest = self.rest();
        let end = rest
            .find(|c: char| c.is_whitespace() || "=!<>(),".contains(c))
            .unwrap_or(rest.len());
        self.pos += end;
        &rest[..end]
    }

    fn parse(mut self) -> Result<Selector, SelectorError> {
        let mut reqs = Vec::new();
        self.skip_ws();
        if self.rest().is_empty() {
            return Ok(Selector::everything());
        }
        loop {
            reqs.push(self.requirement()?);
            self.skip_ws();
            if self.rest().is_empty() {
                break;
            }
            if !self.eat(",") {
                return Err(self.err(format!("expected ',' at {:?}", self.rest())));
            }
        }
        Ok(Selector::All(reqs))
    }

    fn requirement(&mut self) -> Result<Requirement, SelectorError> {
        if self.eat("!") {
            let key = self.word();
            validate_key(key).map_err(|r| self.err(r))?;
            return Ok(Requirement {
                key: key.to_string(),
                op: Op::DoesNotExist,
            });
        }
        let key = self.word().to_string();
        validate_key(&key).map_err(|r| self.err(r))?;
        self.skip_ws();
        let op = if self.eat("==") || self.eat("=") {
            Op::Equals(self.value()?)
        } else if self.eat("!=") {
            Op::NotEquals(self.value()?)
        } else if self.eat(">") {
            Op::Gt(self.integer()?)
        } else if self.eat("<") {
            Op::Lt(self.integer()?)
        } else if self.rest().is_empty() || self.rest().starts_with(',') {
            Op::Exists
        } else {
            match self.word() {
                "in" => Op::In(self.set()?),
                "notin" => Op::NotIn(self.set()?),
                other => return Err(self.err(format!("unexpected {other:?} after key {key:?}"))),
            }
        };
        Ok(Requirement { key, op })
    }

    fn value(&mut self) -> Result<String, SelectorError> {
        let v = self.word();
        validate_value(v).map_err(|r| self.err(r))?;
        Ok(v.to_string())
    }

    fn integer(&mut self) -> Result<i64, SelectorError> {
        let v = self.word();
        v.parse()
            .map_err(|_| self.err(format!("{v:?} is not an integer")))
    }

    fn set(&mut self) -> Result<Vec<String>, SelectorError> {
        if !self.eat("(") {
            return Err(self.err("expected '(' after in/notin"));
        }
        let mut values = Vec::new();
        loop {
            values.push(self.value()?);
            if self.eat(")") {
                break;
            }
            if !self.eat(",") {
                return Err(self.err("expected ',' or ')' in value set"));
            }
        }
        Ok(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    #[test]
    fn parses_every_operator() {
        let s = Selector::parse(
            "app=web, tier!=db,env in (prod,stage),zone notin (a),canary,!legacy,gen>3,gen<9",
        )
        .unwrap();
        let l = labels(&[
            ("app", "web"),
            ("env", "prod"),
            ("canary", ""),
            ("gen", "5"),
        ]);
        assert!(s.matches(&l));
        let mut l2 = l.clone();
        l2.insert("legacy".into(), "1".into());
        assert!(!s.matches(&l2));
        assert_eq!(
            s.to_string(),
            "app=web,tier!=db,env in (prod,stage),zone notin (a),canary,!legacy,gen>3,gen<9"
        );
    }

    #[test]
    fn empty_matches_all_and_nil_matches_nothing() {
        assert!(Selector::parse("").unwrap().matches(&labels(&[])));
        let nil = Selector::from_label_selector(None).unwrap();
        assert!(!nil.matches(&labels(&[("a", "b")])));
        let empty = Selector::from_label_selector(Some(&json!({}))).unwrap();
        assert!(empty.matches(&labels(&[("a", "b")])));
    }

    #[test]
    fn label_selector_objects() {
        let s = Selector::from_label_selector(Some(&json!({
            "matchLabels": {"app": "db"},
            "matchExpressions": [{"key": "role", "operator": "In", "values": ["primary"]}]
        })))
        .unwrap();
        assert!(s.matches(&labels(&[("app", "db"), ("role", "primary")])));
        assert!(!s.matches(&labels(&[("app", "db"), ("role", "replica")])));
        let bad = Selector::from_label_selector(Some(&json!({
            "matchExpressions": [{"key": "role", "operator": "Maybe"}]
        })));
        assert!(bad.unwrap_err().reason.contains("unknown operator"));
    }

    #[test]
    fn rejects_malformed_strings() {
        for bad in [
            "app=",
            "=web",
            "app in web",
            "app in (a",
            "a b",
            "-x=1",
            "app=web,",
            "gen>x",
        ] {
            if bad == "app=" {
                // An empty value is legal: `app=` matches app="".
                assert!(Selector::parse(bad).is_ok());
                continue;
            }
            assert!(Selector::parse(bad).is_err(), "{bad} should be rejected");
        }
    }
}
