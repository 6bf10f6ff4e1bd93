//! What krew installs: krew-manifest.yaml against krew's own rules
//! (kubernetes-sigs/krew internal/index/validation/validate.go, and the
//! licence its validate-krew-manifest requires among the installed files),
//! .krew.yaml, the template krew-release-bot submits, rendered as the bot
//! renders it and compared with krew-manifest.yaml, and scripts/release.sh's
//! archives, the same bytes from the same inputs.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn manifest(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_saphyr::from_str(&text).expect("manifest parses")
}

/// Every rule of krew's validator that a manifest can break, with the
/// krew-index reviewers' limit on the short description; the reasons,
/// empty when it passes.
fn krew_refusals(m: &serde_json::Value) -> Vec<String> {
    let mut why = Vec::new();
    let mut refuse = |ok: bool, what: &str| {
        if !ok {
            why.push(what.to_string());
        }
    };
    refuse(
        m["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2",
        "apiVersion",
    );
    refuse(m["kind"] == "Plugin", "kind");
    let name = m["metadata"]["name"].as_str().unwrap_or_default();
    refuse(
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
        "name matches ^[\\w-]+$",
    );
    let spec = &m["spec"];
    let short = spec["shortDescription"].as_str().unwrap_or_default();
    refuse(!short.is_empty(), "shortDescription set");
    refuse(
        !short.contains(['\r', '\n']),
        "shortDescription on one line",
    );
    refuse(short.chars().count() <= 50, "shortDescription at most 50");
    let description = spec["description"].as_str().unwrap_or_default();
    refuse(
        description.lines().all(|l| l.chars().count() <= 80),
        "description wrapped at 80",
    );
    refuse(
        !description.contains("kubectl maintain "),
        "no usage examples in description",
    );
    let version = spec["version"].as_str().unwrap_or_default();
    let semver = version.strip_prefix('v').is_some_and(|v| {
        let core = v.split(['-', '+']).next().unwrap_or_default();
        let parts: Vec<&str> = core.split('.').collect();
        parts.len() == 3
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
    });
    refuse(semver, "version a v-prefixed semver");
    let platforms = spec["platforms"].as_array().cloned().unwrap_or_default();
    refuse(!platforms.is_empty(), "a platform");
    let mut selectors = BTreeSet::new();
    for p in &platforms {
        let uri = p["uri"].as_str().unwrap_or_default();
        refuse(
            [".tar.gz", ".zip"].iter().any(|e| uri.ends_with(e)),
            "uri a .tar.gz or .zip",
        );
        let sha = p["sha256"].as_str().unwrap_or_default();
        refuse(
            sha.len() == 64 && sha.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f')),
            "sha256 lowercase 64-hex",
        );
        refuse(p["bin"].as_str().is_some_and(|b| !b.is_empty()), "bin set");
        let labels = p["selector"]["matchLabels"].as_object();
        refuse(
            labels.is_some_and(|l| !l.is_empty() && l.keys().all(|k| k == "os" || k == "arch")),
            "selector of os and arch",
        );
        refuse(
            selectors.insert(p["selector"].to_string()),
            "each selector once",
        );
    }
    why
}

#[test]
fn the_krew_manifest_passes_krews_rules() {
    let m = manifest(&root().join("krew-manifest.yaml"));
    assert_eq!(krew_refusals(&m), Vec::<String>::new());
    assert_eq!(m["metadata"]["name"], "maintain");
    assert_eq!(
        m["spec"]["version"].as_str().unwrap()[1..],
        *env!("CARGO_PKG_VERSION"),
        "manifest and crate versions agree"
    );
    let platforms: BTreeSet<String> = m["spec"]["platforms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let l = &p["selector"]["matchLabels"];
            format!(
                "{}/{}",
                l["os"].as_str().unwrap(),
                l["arch"].as_str().unwrap()
            )
        })
        .collect();
    let want = ["darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64"];
    assert_eq!(platforms, want.iter().map(ToString::to_string).collect());
    // The check refuses what krew refuses.
    let mut bad = m.clone();
    bad["spec"]["shortDescription"] =
        "Drain nodes in priority waves, PDB-aware, with a report".into();
    bad["spec"]["platforms"][0]["sha256"] = "A".repeat(64).into();
    bad["spec"]["platforms"][1]["selector"] = m["spec"]["platforms"][0]["selector"].clone();
    assert_eq!(
        krew_refusals(&bad),
        [
            "shortDescription at most 50",
            "sha256 lowercase 64-hex",
            "each selector once"
        ]
    );
}

/// What the bot submits to krew-index, and what a custom index serves,
/// is what release.sh writes and the test above checks: .krew.yaml
/// rendered as krew-release-bot renders it (scripts/krew-manifest.sh,
/// which the release runs on its SHA256SUMS) is krew-manifest.yaml, the
/// sums each archive's; one it has no sum for is refused.
#[test]
fn the_template_krew_release_bot_submits_is_the_checked_manifest() {
    let m = manifest(&root().join("krew-manifest.yaml"));
    let tag = m["spec"]["version"].as_str().unwrap();
    let tmp = crate::harness::TempDir::new("krew-manifest");
    let dir = tmp.path();
    let sums = dir.join("SHA256SUMS");
    let mut text = String::new();
    for p in m["spec"]["platforms"].as_array().unwrap() {
        let file = p["uri"].as_str().unwrap().rsplit('/').next().unwrap();
        writeln!(text, "{}  {file}", p["sha256"].as_str().unwrap()).unwrap();
    }
    let render = |sums: &Path| {
        Command::new("bash")
            .arg(root().join("scripts/krew-manifest.sh"))
            .args([tag, sums.to_str().unwrap()])
            .output()
            .expect("bash")
    };
    std::fs::write(&sums, &text).unwrap();
    let out = render(&sums);
    assert!(out.status.success(), "{out:?}");
    let rendered = String::from_utf8(out.stdout).unwrap();
    let bot: serde_json::Value =
        serde_saphyr::from_str(&rendered).expect("the rendered template parses");
    assert_eq!(bot, m, "{rendered}");
    assert_eq!(krew_refusals(&bot), Vec::<String>::new());
    let short = dir.join("SHORT");
    std::fs::write(&short, text.lines().skip(1).collect::<Vec<_>>().join("\n")).unwrap();
    let out = render(&short);
    assert!(
        !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("has no sum for"),
        "{out:?}"
    );
}

/// scripts/release.sh packing a given binary into `dist`.
fn pack(binary: &Path, dist: &Path) -> std::process::Output {
    let out = Command::new("bash")
        .arg(root().join("scripts/release.sh"))
        .args([
            &format!("v{}", env!("CARGO_PKG_VERSION")),
            "x86_64-unknown-linux-musl",
        ])
        .env("RELEASE_BINARY", binary)
        .env("RELEASE_DIST", dist)
        .env("RELEASE_MANIFEST", dist.join("krew-manifest.yaml"))
        .env("SOURCE_DATE_EPOCH", "1764547200")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn release_archives_are_the_same_bytes_from_the_same_inputs_and_hold_the_licence() {
    let tmp = crate::harness::TempDir::new("release");
    // A stand-in binary: the packing is under test, not the build.
    let binary = tmp.path().join("kubectl-maintain");
    std::fs::write(&binary, "#!/bin/sh\necho kubectl-maintain\n").unwrap();
    let (a, b): (PathBuf, PathBuf) = (tmp.path().join("a"), tmp.path().join("b"));
    pack(&binary, &a);
    // A later mtime of the inputs changes nothing.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    std::fs::write(&binary, "#!/bin/sh\necho kubectl-maintain\n").unwrap();
    pack(&binary, &b);
    let name = format!(
        "kubectl-maintain-v{}-x86_64-unknown-linux-musl.tar.gz",
        env!("CARGO_PKG_VERSION")
    );
    let bytes_a = std::fs::read(a.join(&name)).unwrap();
    assert_eq!(bytes_a, std::fs::read(b.join(&name)).unwrap(), "same bytes");

    let listing = Command::new("tar")
        .args(["-tvzf"])
        .arg(a.join(&name))
        .output()
        .unwrap();
    let listing = String::from_utf8(listing.stdout).unwrap();
    let entries: Vec<&str> = listing
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .collect();
    for want in [
        "./kubectl-maintain",
        "./LICENSE",
        "./README.md",
        "./kubectl_complete-maintain",
    ] {
        assert!(entries.contains(&want), "{want} in {listing}");
    }
    let mut sorted = entries.clone();
    sorted.sort_unstable();
    assert_eq!(entries, sorted, "entries sorted");
    assert!(
        listing.lines().all(|l| l.contains(" 0/0 ")),
        "owner 0: {listing}"
    );

    // The manifest and SHA256SUMS carry the archive's lowercase sum.
    let sum = Command::new("sha256sum")
        .arg(a.join(&name))
        .output()
        .unwrap();
    let sum = String::from_utf8(sum.stdout).unwrap();
    let sum = sum.split_whitespace().next().unwrap().to_string();
    let sums = std::fs::read_to_string(a.join("SHA256SUMS")).unwrap();
    assert_eq!(sums, format!("{sum}  {name}\n"));
    let m = manifest(&a.join("krew-manifest.yaml"));
    let platform = m["spec"]["platforms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["uri"].as_str().unwrap().ends_with(&name))
        .unwrap()
        .clone();
    assert_eq!(platform["sha256"], sum.as_str());
    assert!(entries.contains(&platform["bin"].as_str().unwrap()));
    assert_eq!(krew_refusals(&m), Vec::<String>::new());
}
