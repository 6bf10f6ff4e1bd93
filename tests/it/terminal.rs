//! The binary in a real terminal: a tmux session at a width, in a locale
//! and a TERM of its own, read as a person sees it (`capture-pane`), as the
//! program wrote it (the raw bytes, `pipe-pane`), and resized on demand.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::harness::Cluster;

fn bin() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_BIN_EXE_kubectl-maintain"))
}

/// A tmux session running one command at a width, killed when dropped.
pub(crate) struct Terminal {
    session: String,
    /// What the program wrote, byte for byte, once `record` asked.
    raw: Option<std::path::PathBuf>,
}

impl Terminal {
    pub(crate) fn start(c: &Cluster, width: u16, args: &str) -> Terminal {
        Self::start_in(c, width, "LANG=C.UTF-8", args)
    }

    /// In a locale of its own (`LANG=C`: no UTF-8).
    pub(crate) fn start_in(c: &Cluster, width: u16, locale: &str, args: &str) -> Terminal {
        Self::start_with(c, width, &format!("TERM=xterm-256color {locale}"), args)
    }

    /// With `env` (`TERM=dumb LANG=C`, ...) set for the command, which
    /// runs in a shell (`args` may redirect).
    pub(crate) fn start_with(c: &Cluster, width: u16, env: &str, args: &str) -> Terminal {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let session = format!("km-{}-{n}-{width}", std::process::id());
        let command = format!(
            // A moment before it starts: `record` takes every byte.
            "sleep 0.3; env -u NO_COLOR -u LC_ALL -u LC_CTYPE {env} KUBECONFIG={} HOME={} {} {args}; echo EXIT=$?; sleep 60",
            c.kubeconfig.display(),
            c.dir.path().display(),
            bin().display()
        );
        let started = Command::new("tmux")
            .args(["new-session", "-d", "-s", &session, "-x"])
            .arg(width.to_string())
            .args(["-y", "40", &command])
            .status()
            .expect("tmux is required (.ci/run installs it)");
        assert!(started.success(), "tmux new-session");
        Terminal { session, raw: None }
    }

    pub(crate) fn screen(&self) -> String {
        self.capture(&[])
    }

    /// The lines as written: what the terminal wrapped, joined again.
    pub(crate) fn written_lines(&self) -> String {
        self.capture(&["-J", "-S", "-200"])
    }

    /// The visible screen with the rows the terminal wrapped joined again.
    pub(crate) fn screen_joined(&self) -> String {
        self.capture(&["-J"])
    }

    /// From now on, keeps every byte the program writes into `file`.
    pub(crate) fn record(&mut self, file: &std::path::Path) {
        let ok = Command::new("tmux")
            .args(["pipe-pane", "-o", "-t", &self.session])
            .arg(format!("cat >> '{}'", file.display()))
            .status()
            .expect("tmux pipe-pane");
        assert!(ok.success(), "tmux pipe-pane");
        self.raw = Some(file.to_path_buf());
    }

    /// The bytes written since `record`.
    pub(crate) fn raw(&self) -> Vec<u8> {
        self.raw
            .as_ref()
            .map(|f| std::fs::read(f).unwrap_or_default())
            .unwrap_or_default()
    }

    /// The terminal changes its width, as a person's window does.
    pub(crate) fn resize(&self, width: u16) {
        let ok = Command::new("tmux")
            .args(["resize-window", "-t", &self.session, "-x"])
            .arg(width.to_string())
            .status()
            .expect("tmux resize-window");
        assert!(ok.success(), "tmux resize-window");
    }

    /// Types `keys` (tmux key names: `y`, `Enter`), as a person does.
    pub(crate) fn keys(&self, keys: &[&str]) {
        let ok = Command::new("tmux")
            .args(["send-keys", "-t", &self.session])
            .args(keys)
            .status()
            .expect("tmux send-keys");
        assert!(ok.success(), "tmux send-keys");
    }

    fn capture(&self, extra: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["capture-pane", "-p", "-t", &self.session])
            .args(extra)
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen once it shows `what`; panics with the screen after `limit`.
    pub(crate) fn wait_for(&self, what: &str, limit: Duration) -> String {
        let deadline = Instant::now() + limit;
        loop {
            let screen = self.screen();
            if screen.contains(what) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "no {what:?} on the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.session])
            .status();
    }
}
