use std::process::ExitCode;

use clap::Parser;
use kubectl_maintain::cli::{Cli, completion, exit};

// A plan --simulate of a large cluster builds and frees millions of small
// JSON values; with the system allocator that was a third of its time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // mimalloc maps large aligned regions; where transparent huge pages are
    // on for every process (`always`, as on many distributions), a region
    // barely used holds 2 MiB pages. Off for this process and what it runs,
    // as MIMALLOC_ALLOW_THP=0 does: a drain of 500 of 5,000 nodes peaked at
    // 129 MiB with them, 108 MiB without (docs/benchmarks.md).
    #[cfg(target_os = "linux")]
    let _ = rustix::thread::disable_transparent_huge_pages(true);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    // kubectl's plugin completion: `kubectl_complete-maintain ARGS... PARTIAL`
    // runs `kubectl-maintain __complete ARGS... PARTIAL`.
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("__complete") {
        runtime.block_on(completion::run(&args[2..]));
        return ExitCode::SUCCESS;
    }
    let cli = Cli::parse();
    exit::report(runtime.block_on(kubectl_maintain::run(cli)))
}
