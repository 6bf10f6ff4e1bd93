//! `--block-on-alerts URL`: the alerts firing now, from Alertmanager's API
//! (`/api/v2/alerts`: active, neither silenced nor inhibited) or
//! Prometheus' (`/api/v1/alerts`: state `firing`, not `pending`), chosen by
//! asking Alertmanager's path first (Prometheus answers it 404). With
//! `--alert-filter REGEX`, only alerts whose `NAME{label="value",…}`
//! (labels sorted) matches count: `^Node` picks by name,
//! `severity="critical"` by label. kured's `--alert-filter-regexp` names
//! the alerts to ignore; ours names those that hold (docs/usage.md).

use std::collections::BTreeMap;
use std::sync::Mutex;

use regex::Regex;
use serde_json::Value;

use crate::outbound::{Http, Url};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    Alertmanager,
    Prometheus,
}

pub(crate) struct Alerts {
    base: Url,
    filter: Option<Regex>,
    http: Http,
    api: Mutex<Option<Api>>,
}

/// An alert as the filter and the screen read it.
fn render(labels: &serde_json::Map<String, Value>) -> String {
    let name = labels
        .get("alertname")
        .and_then(Value::as_str)
        .unwrap_or("(no alertname)");
    let rest: BTreeMap<&str, &str> = labels
        .iter()
        .filter(|(k, _)| *k != "alertname")
        .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or_default()))
        .collect();
    let rest: Vec<String> = rest.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
    format!("{name}{{{}}}", rest.join(","))
}

/// The alerts firing in an answer of either API.
fn firing_in(api: Api, body: &Value) -> Result<Vec<String>, String> {
    let (list, firing): (&Vec<Value>, fn(&Value) -> bool) = match api {
        Api::Alertmanager => (body.as_array().ok_or("not a list of alerts")?, |a| {
            a["status"]["state"] == "active"
        }),
        Api::Prometheus => (
            body["data"]["alerts"].as_array().ok_or("no data.alerts")?,
            |a| a["state"] == "firing",
        ),
    };
    Ok(list
        .iter()
        .filter(|a| firing(a))
        .filter_map(|a| a["labels"].as_object().map(render))
        .collect())
}

impl Alerts {
    pub(crate) fn new(url: &Url, filter: Option<Regex>) -> Alerts {
        let path = url.path();
        let (path, api) = if let Some(b) = path.strip_suffix("/api/v2/alerts") {
            (b, Some(Api::Alertmanager))
        } else if let Some(b) = path.strip_suffix("/api/v1/alerts") {
            (b, Some(Api::Prometheus))
        } else {
            (path, None)
        };
        Alerts {
            base: url.with_path(if path.is_empty() { "/" } else { path }),
            filter,
            http: Http::new(),
            api: Mutex::new(api),
        }
    }

    fn url(&self, api: Api) -> Url {
        let base = self.base.path();
        self.base.with_path(&match api {
            Api::Alertmanager => {
                format!("{base}/api/v2/alerts?active=true&silenced=false&inhibited=false")
            }
            Api::Prometheus => format!("{base}/api/v1/alerts"),
        })
    }

    /// The matching alerts firing now, or why they cannot be known.
    pub(crate) async fn firing(&self) -> Result<Vec<String>, String> {
        let known = *self.api.lock().expect("api");
        let (api, answer) = if let Some(api) = known {
            (api, self.http.get(&self.url(api)).await)
        } else {
            match self.http.get(&self.url(Api::Alertmanager)).await {
                Ok(a) if a.status == 404 => (
                    Api::Prometheus,
                    self.http.get(&self.url(Api::Prometheus)).await,
                ),
                other => (Api::Alertmanager, other),
            }
        };
        let answer = answer.map_err(|e| format!("cannot ask {}: {e}", self.base))?;
        if !answer.ok() {
            return Err(format!("{} answered {}", self.url(api), answer.words()));
        }
        let body: Value = serde_json::from_slice(&answer.body)
            .map_err(|e| format!("{} did not answer JSON: {e}", self.url(api)))?;
        let all = firing_in(api, &body).map_err(|e| format!("{}: {e}", self.url(api)))?;
        *self.api.lock().expect("api") = Some(api);
        Ok(all
            .into_iter()
            .filter(|a| self.filter.as_ref().is_none_or(|f| f.is_match(a)))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_apis_are_read_and_only_firing_alerts_count() {
        let prom = json!({"status": "success", "data": {"alerts": [
            {"labels": {"alertname": "NodeDown", "severity": "critical", "instance": "r1"}, "state": "firing"},
            {"labels": {"alertname": "DiskFilling"}, "state": "pending"},
        ]}});
        assert_eq!(
            firing_in(Api::Prometheus, &prom).unwrap(),
            [r#"NodeDown{instance="r1",severity="critical"}"#]
        );
        let am = json!([
            {"labels": {"alertname": "Watchdog"}, "status": {"state": "active"}},
            {"labels": {"alertname": "Silenced"}, "status": {"state": "suppressed"}},
        ]);
        assert_eq!(firing_in(Api::Alertmanager, &am).unwrap(), ["Watchdog{}"]);
        assert!(firing_in(Api::Prometheus, &am).is_err());
    }

    #[test]
    fn a_given_api_path_is_kept() {
        let url = |u: &str| Url::parse("--block-on-alerts", u).unwrap();
        let a = Alerts::new(&url("http://u:pw@am:9093/api/v2/alerts"), None);
        assert_eq!(*a.api.lock().unwrap(), Some(Api::Alertmanager));
        let prometheus = a.url(Api::Prometheus);
        assert_eq!(prometheus.uri().to_string(), "http://am:9093/api/v1/alerts");
        assert!(prometheus.authorization().is_some(), "the login is kept");
        let p = Alerts::new(&url("http://prom:9090/"), None);
        assert_eq!(*p.api.lock().unwrap(), None);
        assert_eq!(
            p.url(Api::Alertmanager).uri().to_string(),
            "http://prom:9090/api/v2/alerts?active=true&silenced=false&inhibited=false"
        );
    }
}
