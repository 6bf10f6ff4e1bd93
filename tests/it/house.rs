//! The house keeps its shape: scripts/module-cycles.py, which .ci/run runs
//! with `--check`, sees a cycle through a folder's re-export and judges
//! against its list of known ones in both directions; README.md's layout
//! names every source file.

use std::path::Path;
use std::process::Command;

use crate::harness::TempDir;

fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

fn check(allowed: &Path, src: &Path) -> (i32, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/module-cycles.py");
    let out = Command::new("python3")
        .arg(script)
        .arg("--check")
        .arg(allowed)
        .arg(src)
        .output()
        .expect("python3 runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn a_cycle_through_a_reexport_fails_the_check_until_it_is_listed_and_a_mended_one_must_leave_the_list()
 {
    let dir = TempDir::new("house");
    let src = dir.path().join("src");
    // drain::session names exit_codes; exit_codes names drain::run, which
    // drain/mod.rs re-exports from session: a cycle, seen only through the
    // re-export (the folder's edges into its own children are dropped).
    write(
        &src,
        &[
            ("main.rs", "mod drain;\nmod exit_codes;\n"),
            (
                "drain/mod.rs",
                "mod session;\npub(crate) use session::{Ended, run};\n",
            ),
            (
                "drain/session.rs",
                "use crate::exit_codes::Code;\npub(crate) fn run() {}\npub(crate) struct Ended;\n",
            ),
            (
                "exit_codes.rs",
                "pub(crate) struct Code(crate::drain::Ended);\n",
            ),
        ],
    );
    let allowed = dir.path().join("allowed");
    std::fs::write(&allowed, "# none known\n").unwrap();
    let (code, out) = check(&allowed, &src);
    let line = format!("{} cycle drain::session exit_codes", src.display());
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(&format!("new: {line}")), "{out}");

    std::fs::write(&allowed, format!("{line}\n")).unwrap();
    let (code, out) = check(&allowed, &src);
    assert_eq!(code, 0, "a known cycle passes: {out}");

    // Mended: exit_codes no longer names the drain; the list must shrink.
    write(&src, &[("exit_codes.rs", "pub(crate) struct Code;\n")]);
    let (code, out) = check(&allowed, &src);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("mended, take it off"), "{out}");
}

/// Every file of the plugin's `src/` is named in README.md's layout, by its
/// path or by its name in backticks (`pages` for src/client/pages.rs), so a
/// newcomer finds each one from the README; a file added without a word
/// there fails here.
#[test]
fn readme_layout_names_every_source_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let layout = &readme[readme.find("## Layout").expect("a Layout section")..];
    let mut unnamed = Vec::new();
    let mut dirs = vec![root.join("src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            if path.extension().is_none_or(|e| e != "rs")
                || ["mod", "main", "lib", "tests"].contains(&stem.as_str())
            {
                continue;
            }
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if !layout.contains(&rel) && !layout.contains(&format!("`{stem}`")) {
                unnamed.push(rel);
            }
        }
    }
    unnamed.sort();
    assert!(
        unnamed.is_empty(),
        "README.md's layout names none of: {unnamed:?}"
    );
}
