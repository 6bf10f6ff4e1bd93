//! The screen as a person reads it (#54): the binary in a real terminal
//! (tmux, at 80 and 120 columns), a cloud node's 41-character name, read
//! with `tmux capture-pane` while the drain is blocked and when it ends.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::Cluster;
use crate::scenario::{Scenario, template};
use crate::terminal::Terminal;

const NODE: &str = "ip-10-0-12-34.eu-west-1.compute.internal";

/// One replica behind `minAvailable: 1` on the cloud-named node: blocked.
fn blocked() -> Cluster {
    let c = Scenario::new()
        .node(NODE)
        .node("ip-10-0-12-35.eu-west-1.compute.internal")
        .deployment("web", 2)
        .deployment_with("solo", 1, |d| {
            template(d)["spec"]["nodeSelector"] = json!({"kubernetes.io/hostname": NODE});
        })
        .pdb("solo", "minAvailable: 1")
        .start(33);
    c.wait_settled();
    c
}

#[test]
fn the_blocker_is_on_screen_at_80_and_120_columns_with_a_cloud_node_name() {
    for width in [80, 120] {
        let c = blocked();
        let t = Terminal::start(&c, width, &format!("drain {NODE} --timeout 6s --yes"));
        let screen = t.wait_for("↳ apps/solo-", Duration::from_secs(20));
        let lines: Vec<&str> = screen.lines().collect();
        // The name whole on its own line, and the blocker whole on its own,
        // naming the pod and its budget, under the bar.
        assert!(lines.iter().any(|l| l.trim() == NODE), "{width}:\n{screen}");
        let blocker = lines.iter().find(|l| l.contains("↳ apps/solo-")).unwrap();
        assert!(blocker.contains("PDB solo"), "{width}:\n{screen}");
        assert!(
            lines.iter().any(|l| l.contains("1 blocked")),
            "{width}:\n{screen}"
        );
        let end = t.wait_for("EXIT=", Duration::from_secs(30));
        assert!(end.contains("EXIT=3"), "{width}:\n{end}");
        // The last words name what stays cordoned and how to undo it (the
        // terminal may wrap them: read them joined).
        let joined: String = end.lines().collect();
        assert!(
            joined.contains(&format!("left cordoned: {NODE}"))
                && joined.contains("kubectl maintain uncordon"),
            "{width}:\n{end}"
        );
        assert!(
            joined.contains("--surge"),
            "the hint names the fix for a one-replica Deployment: {end}"
        );
        // Nothing the report writes is wider than the terminal: its prose
        // wraps under its text, its tables give the node a line of its own,
        // the command to undo stays whole on a line.
        let written = t.written_lines();
        let report = &written[written.find("NODE").expect("the report")..];
        for line in report.lines().filter(|l| !l.starts_with("EXIT=")) {
            assert!(
                line.chars().count() <= usize::from(width),
                "{width}: a line the terminal had to wrap: {line:?}\n{report}"
            );
        }
        assert!(
            report
                .lines()
                .any(|l| l.contains(&format!("`kubectl maintain uncordon {NODE}`"))),
            "{width}:\n{report}"
        );
    }
}

/// Under a locale that is not UTF-8, everything the drain draws is ASCII:
/// the spinner, the separators, the line under a bar.
#[test]
fn under_lang_c_the_screen_is_ascii() {
    let c = blocked();
    let t = Terminal::start_in(&c, 80, "LANG=C", "demo --timeout 4s");
    let screen = t.wait_for("-> shop/db-0", Duration::from_secs(30));
    let end = t.wait_for("EXIT=", Duration::from_secs(60));
    for frame in [&screen, &t.written_lines(), &end] {
        let wide: Vec<&str> = frame.lines().filter(|l| !l.is_ascii()).collect();
        assert!(wide.is_empty(), "not ASCII under LANG=C: {wide:#?}");
    }
}

#[test]
fn the_demo_shows_its_blocker_at_80_columns() {
    let c = blocked();
    let t = Terminal::start(&c, 80, "demo --timeout 4s");
    let screen = t.wait_for("↳ shop/db-0", Duration::from_secs(30));
    assert!(
        screen
            .lines()
            .any(|l| l.contains("↳ shop/db-0") && l.contains("PDB db")),
        "{screen}"
    );
    let end = t.wait_for("EXIT=", Duration::from_secs(60));
    assert!(!end.contains("panicked"), "{end}");
}

/// A node refused before anything moved (a bare pod, no `--force`) has no
/// bar on screen, only its name and why: an empty bar reads as a full one
/// (`0/0`). And no frame of the run, sampled as it goes, shows a bar in
/// indicatif's default style (a full-width `█` bar flashed at each node's
/// start before its own style came).
#[test]
fn a_refused_node_shows_no_bar_and_no_frame_flashes_a_full_one() {
    let c = Scenario::one_refused_one_drainable(1.0).start(33);
    c.wait_settled();
    let t = Terminal::start(&c, 80, "drain n1 n2 --timeout 20s --yes");
    let deadline = Instant::now() + Duration::from_secs(40);
    let mut frames = Vec::new();
    let end = loop {
        let screen = t.screen();
        if screen.contains("EXIT=") {
            break screen;
        }
        frames.push(screen);
        assert!(Instant::now() < deadline, "no end: {:?}", frames.last());
        std::thread::sleep(Duration::from_millis(25));
    };
    assert!(end.contains("EXIT=3"), "{end}");
    for frame in &frames {
        assert!(
            !frame.contains('█') && !frame.contains("  0/0  "),
            "a full bar for a node with nothing counted:\n{frame}"
        );
    }
    // The refused node's row, on the last frame with the bars (its last
    // row there: an earlier frame's may still stand above, #64).
    let last = frames
        .iter()
        .rev()
        .find(|f| f.contains("refused after"))
        .expect("a frame with the refused node's row");
    let row = last
        .lines()
        .rev()
        .find(|l| l.starts_with("  n1 "))
        .unwrap_or_else(|| panic!("n1's row:\n{last}"));
    assert!(
        !row.contains('[') && row.contains("refused after"),
        "{row:?}\n{last}"
    );
    assert!(
        last.lines()
            .any(|l| l.starts_with("  n2 ") && l.contains('[')),
        "the node with a pod to move keeps its bar:\n{last}"
    );
}
