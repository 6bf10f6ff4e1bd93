//! `kubectl maintain sandbox`: serve a scenario until SIGINT or SIGTERM.

use anyhow::Context;

use crate::cli::SandboxArgs;
use crate::cli::exit::{self, Exit};
use kube_sandbox::{Options, Sandbox, SandboxConfig, generate, scenario};

fn apply_flags(config: &mut SandboxConfig, args: &SandboxArgs) -> Result<(), Exit> {
    if !args.listen.ip().is_loopback() && !args.expose {
        return Err(Exit::usage(format!(
            "--listen {}: not a loopback address; the sandbox's own user may do anything to its cluster, so it serves beyond this machine only with --expose",
            args.listen
        )));
    }
    if let Some(v) = &args.kube_version {
        let ok = v
            .split_once('.')
            .is_some_and(|(major, minor)| major == "1" && minor.parse::<u32>().is_ok());
        if !ok {
            return Err(Exit::usage(format!(
                "--kube-version {v:?}: expected 1.MINOR, such as 1.33"
            )));
        }
        config.kube_version.clone_from(v);
    }
    if let Some(n) = args.watch_history {
        config.watch_history = n;
    }
    let f = &mut config.faults;
    for (flag, value, slot) in [
        ("--fault-500", args.fault_500, &mut f.error500),
        ("--fault-503", args.fault_503, &mut f.error503),
        ("--fault-429", args.fault_429, &mut f.throttle429),
    ] {
        if let Some(v) = value {
            if !(0.0..=1.0).contains(&v) {
                return Err(Exit::usage(format!("{flag} {v}: a share between 0 and 1")));
            }
            *slot = v;
        }
    }
    if let Some(v) = args.latency_ms {
        f.latency_ms = v;
    }
    if let Some(v) = args.watch_cut_after {
        f.watch_cut_after = v;
    }
    if let Some(v) = args.fault_seed {
        f.seed = v;
    }
    Ok(())
}

pub(crate) async fn run(args: SandboxArgs) -> anyhow::Result<u8> {
    type Objects =
        Box<dyn Iterator<Item = (kube_sandbox::resources::Resource, serde_json::Value)> + Send>;
    let (objects, mut config): (Objects, SandboxConfig) =
        match (&args.scenario, args.synthetic_nodes) {
            (Some(path), _) => {
                let s = scenario::load_file(path).map_err(|e| Exit::usage(e.to_string()))?;
                (
                    Box::new(s.objects.into_iter()),
                    s.config.unwrap_or_default(),
                )
            }
            (None, Some(nodes)) => {
                let spec = generate::ClusterSpec {
                    nodes,
                    pods_per_node: args.pods_per_node,
                    ..generate::ClusterSpec::default()
                };
                // Made as loaded: a large cluster is never held whole.
                (Box::new(generate::stream(&spec)), SandboxConfig::default())
            }
            (None, None) => unreachable!("clap requires a source"),
        };
    apply_flags(&mut config, &args)?;
    let sandbox = Sandbox::start(
        objects,
        Options {
            listen: args.listen,
            config,
            request_log: args.request_log.clone(),
            local_images: args.local_image.clone(),
            ..Options::default()
        },
    )
    .await
    .context("starting the sandbox")?;
    // Its owner's token is new at each start: without a file of the
    // operator's, the kubeconfig goes where no one else can read it, and
    // goes with the sandbox.
    let private = match &args.kubeconfig_out {
        Some(_) => None,
        None => Some(
            kube_sandbox::PrivateDir::create("kubectl-maintain-sandbox")
                .context("making a private directory for the kubeconfig")?,
        ),
    };
    let kubeconfig = match (&args.kubeconfig_out, &private) {
        (Some(path), _) => path.clone(),
        (None, Some(dir)) => dir.path().join("kubeconfig"),
        (None, None) => unreachable!("a private directory without --kubeconfig-out"),
    };
    sandbox.write_kubeconfig(&kubeconfig)?;
    // The handlers are in place before the line that tells a caller it
    // may stop the sandbox: a SIGTERM sent the moment it reads the line
    // ends it cleanly, not by the signal's default action.
    let signals =
        crate::cli::interrupt::Signals::listen().context("listening for SIGINT and SIGTERM")?;
    crate::outln!(
        "sandbox listening on {} (kubeconfig: {})",
        sandbox.url(),
        kubeconfig.display()
    );
    signals.wait().await;
    sandbox.shutdown().await;
    drop(private);
    Ok(exit::OK)
}
