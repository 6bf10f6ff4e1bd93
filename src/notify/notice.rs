//! What a notification says: the documented JSON body (version
//! `kubectl-maintain.io/v1`, docs/notifications.md), its one-line text from
//! a template, and the Slack and Teams bodies made from it. Pure.
//!
//! Templates work as kured's `--message-template-*` do: `%s` is the node's
//! name. Also `{node}`, `{run}`, `{command}`, `{reason}` and `{summary}`.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};

use super::endpoint::Format;

/// The body's version: a change that breaks a reader gets a new one.
pub(crate) const VERSION: &str = "kubectl-maintain.io/v1";

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub(crate) enum Kind {
    #[serde(rename = "run.started")]
    RunStarted,
    #[serde(rename = "node.started")]
    NodeStarted,
    #[serde(rename = "node.done")]
    NodeDone,
    /// Held past `--notify-after`, or ended without being done: once per node.
    #[serde(rename = "node.blocked")]
    NodeBlocked,
    /// The roll takes no next node (alerts firing, outside every window),
    /// past `--notify-after`: once per hold.
    #[serde(rename = "run.held")]
    RunHeld,
    #[serde(rename = "run.finished")]
    RunFinished,
    #[serde(rename = "run.failed")]
    RunFailed,
}

pub(crate) const KINDS: [Kind; 7] = [
    Kind::RunStarted,
    Kind::NodeStarted,
    Kind::NodeDone,
    Kind::NodeBlocked,
    Kind::RunHeld,
    Kind::RunFinished,
    Kind::RunFailed,
];

impl Kind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::RunStarted => "run.started",
            Kind::NodeStarted => "node.started",
            Kind::NodeDone => "node.done",
            Kind::NodeBlocked => "node.blocked",
            Kind::RunHeld => "run.held",
            Kind::RunFinished => "run.finished",
            Kind::RunFailed => "run.failed",
        }
    }

    fn default_template(self, verb: Verb) -> &'static str {
        match (self, verb) {
            (Kind::RunStarted, Verb::Roll) => "Roll {run} started: {summary}",
            (Kind::RunStarted, Verb::Drain) => "Drain {run} started: {summary}",
            (Kind::NodeStarted, Verb::Roll) => "Maintenance of node %s started",
            (Kind::NodeStarted, Verb::Drain) => "Drain of node %s started",
            (Kind::NodeDone, Verb::Roll) => "Node %s is done and back in service",
            (Kind::NodeDone, Verb::Drain) => "Node %s is drained; it stays cordoned",
            (Kind::NodeBlocked, _) => "Node %s is blocked: {reason}",
            (Kind::RunHeld, Verb::Roll) => "Roll {run} is holding: {reason}",
            (Kind::RunHeld, Verb::Drain) => "Drain {run} is holding: {reason}",
            (Kind::RunFinished, Verb::Roll) => "Roll {run} finished: {summary}",
            (Kind::RunFinished, Verb::Drain) => "Drain {run} finished: {summary}",
            (Kind::RunFailed, Verb::Roll) => "Roll {run} failed: {reason}",
            (Kind::RunFailed, Verb::Drain) => "Drain {run} failed: {reason}",
        }
    }
}

/// Which command tells: the body's `command`, and the default texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Verb {
    Drain,
    Roll,
}

impl Verb {
    fn as_str(self) -> &'static str {
        match self {
            Verb::Drain => "drain",
            Verb::Roll => "roll",
        }
    }
}

/// The text of each kind: kured-style templates, the defaults for the rest.
#[derive(Debug, Clone, Default)]
pub(crate) struct Templates(BTreeMap<Kind, String>);

impl Templates {
    /// `KIND=TEXT` (`--notify-template node.blocked="…"`).
    pub(crate) fn set(&mut self, spec: &str) -> Result<(), String> {
        let (kind, text) = spec
            .split_once('=')
            .ok_or_else(|| format!("--notify-template {spec:?}: KIND=TEXT"))?;
        let kind = KINDS
            .into_iter()
            .find(|k| k.as_str() == kind)
            .ok_or_else(|| {
                let all: Vec<&str> = KINDS.iter().map(|k| k.as_str()).collect();
                format!(
                    "--notify-template {spec:?}: {kind:?} is not one of {}",
                    all.join(", ")
                )
            })?;
        self.0.insert(kind, text.to_string());
        Ok(())
    }

    fn text(&self, notice: &Notice) -> String {
        let template = self
            .0
            .get(&notice.kind)
            .map_or(notice.kind.default_template(notice.command), String::as_str);
        let node = notice.node.as_deref().unwrap_or_default();
        template
            .replace("%s", node)
            .replace("{node}", node)
            .replace("{run}", &notice.run)
            .replace("{command}", notice.command.as_str())
            .replace("{reason}", notice.reason.as_deref().unwrap_or_default())
            .replace(
                "{summary}",
                notice.summary_words.as_deref().unwrap_or_default(),
            )
    }
}

/// One notification: the generic body is this, serialised.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Notice {
    pub(crate) version: &'static str,
    pub(crate) kind: Kind,
    /// `drain` or `roll`.
    pub(crate) command: Verb,
    /// The run's identity (the same command is the same run; it resumes a
    /// roll).
    pub(crate) run: String,
    /// RFC 3339.
    pub(crate) time: String,
    /// The text, from the kind's template.
    pub(crate) text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) node: Option<String>,
    /// Why: what holds the node or the roll, why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
    /// For `run.started`: the nodes in the order they are taken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) nodes: Option<Vec<String>>,
    /// For `run.finished` and `run.failed`: nodes by result, elapsed
    /// seconds, the exit code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) summary: Option<Value>,
    /// The summary in words, for templates.
    #[serde(skip)]
    pub(crate) summary_words: Option<String>,
}

impl Notice {
    pub(crate) fn new(kind: Kind, command: Verb, run: &str, node: Option<&str>) -> Notice {
        Notice {
            version: VERSION,
            kind,
            command,
            run: run.to_string(),
            time: kube_conventions::time::now_rfc3339(),
            text: String::new(),
            node: node.map(str::to_string),
            reason: None,
            nodes: None,
            summary: None,
            summary_words: None,
        }
    }

    pub(crate) fn because(mut self, reason: impl Into<String>) -> Notice {
        self.reason = Some(reason.into());
        self
    }

    /// Its text from the templates, set once before it is sent.
    pub(crate) fn worded(mut self, templates: &Templates) -> Notice {
        self.text = templates.text(&self);
        self
    }

    /// The body for an endpoint's format.
    pub(crate) fn body(&self, format: Format) -> Value {
        match format {
            Format::Json => serde_json::to_value(self).unwrap_or(Value::Null),
            Format::Slack => json!({ "text": self.text }),
            Format::Teams => json!({
                "type": "message",
                "summary": self.text,
                "attachments": [{
                    "contentType": "application/vnd.microsoft.card.adaptive",
                    "contentUrl": null,
                    "content": {
                        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                        "type": "AdaptiveCard",
                        "version": "1.4",
                        "body": [{ "type": "TextBlock", "text": self.text, "wrap": true }],
                    },
                }],
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kured_style_templates_and_defaults() {
        let mut t = Templates::default();
        t.set("node.started=Draining node %s").unwrap();
        let n = Notice::new(Kind::NodeStarted, Verb::Roll, "abc", Some("r1")).worded(&t);
        assert_eq!(n.text, "Draining node r1");
        let b = Notice::new(Kind::NodeBlocked, Verb::Roll, "abc", Some("r2"))
            .because("PDB web/db holds pod web/db-0")
            .worded(&t);
        assert_eq!(b.text, "Node r2 is blocked: PDB web/db holds pod web/db-0");
        assert!(
            t.set("node.rebooted=x")
                .unwrap_err()
                .contains("node.started")
        );
        assert!(t.set("no equals").is_err());
    }

    #[test]
    fn each_format_carries_the_text() {
        let n = Notice::new(Kind::NodeDone, Verb::Roll, "abc", Some("r1"))
            .worded(&Templates::default());
        let json = n.body(Format::Json);
        assert_eq!(json["version"], VERSION);
        assert_eq!(json["kind"], "node.done");
        assert_eq!(json["node"], "r1");
        assert_eq!(json["command"], "roll");
        let drained = Notice::new(Kind::NodeDone, Verb::Drain, "abc", Some("r1"))
            .worded(&Templates::default());
        assert_eq!(drained.text, "Node r1 is drained; it stays cordoned");
        assert!(json.get("reason").is_none());
        assert_eq!(
            n.body(Format::Slack),
            json!({"text": "Node r1 is done and back in service"})
        );
        let teams = n.body(Format::Teams);
        assert_eq!(
            teams["attachments"][0]["content"]["body"][0]["text"],
            "Node r1 is done and back in service"
        );
    }
}
