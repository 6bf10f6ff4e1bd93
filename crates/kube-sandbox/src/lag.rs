//! How late the simulated cluster acts against its own schedule: for each
//! timer of its kubelets and controllers (a pod's start, readiness, stop,
//! a volume's detach), the time from when it was due to when it fired; for
//! each write to the store, the time from the write to when the
//! controllers heard of it. A bench whose sandbox is late measures the
//! simulator, not the drain (benches/pool.rs says so beside its row).
//!
//! Kept as counts in exponential buckets (1 µs to about an hour), so a
//! run of millions of events costs a few hundred counters.
//!
//! And for the API server's side, how long a request's handler waited to
//! take the store: a request that waits is an answer the drain waits for,
//! so a row whose requests wait long measures the sandbox too.
//!
//! Beside them, why it is late: how long the simulation was at work, and
//! how much of that it spent waiting for the store while the API server's
//! handlers held it. A simulation busy nearly all the run is saturated; one
//! that waits a large share of it is held up by the requests it serves (both
//! run under the one lock of the store, crate::shared).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const BUCKETS: usize = 64;

/// A histogram of lateness, shared by the simulation and its readers.
pub(crate) struct Lag {
    timers: Histogram,
    changes: Histogram,
    requests: Histogram,
    /// Nanoseconds the simulation worked (from a change or timer heard to
    /// the store quiet again), its waits for the store included.
    busy: AtomicU64,
    /// Nanoseconds of it the simulation waited to take the store.
    waited: AtomicU64,
}

struct Histogram([AtomicU64; BUCKETS]);

/// The median and the 99th percentile of one kind of lateness, and how
/// many were counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Lateness {
    /// Half were at most this late (the upper edge of its bucket).
    pub median: Duration,
    /// 99 in 100 were at most this late.
    pub p99: Duration,
    /// The latest.
    pub max: Duration,
    /// How many were counted.
    pub count: u64,
}

/// The sandbox's lateness since it started (or since `reset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SandboxLag {
    /// Timers: kubelets' starts, readiness and stops, detaches, controllers' steps.
    pub timers: Lateness,
    /// Writes: from the store's change to the controllers' hearing of it.
    pub changes: Lateness,
    /// Requests: how long a handler of the API server waited for the store
    /// (only those that found it taken).
    pub requests: Lateness,
    /// How long the simulation was at work, waits for the store included.
    pub busy: Duration,
    /// How long of that it waited to take the store from the API server.
    pub waited: Duration,
}

impl SandboxLag {
    /// Timers, writes or requests were later than `bound` at their 99th
    /// percentile.
    pub fn late(&self, bound: Duration) -> bool {
        self.timers.p99.max(self.changes.p99).max(self.requests.p99) > bound
    }

    /// Why, over a run of `wall`: "simulation busy 84 % of the run (65 µs a
    /// write), 27 % waiting for the store". The work a write is what must
    /// not grow with the cluster; the busy share, what a faster drain needs.
    pub fn cause(&self, wall: Duration) -> String {
        let share = |d: Duration| 100.0 * d.as_secs_f64() / wall.as_secs_f64().max(1e-9);
        let work = self.busy.saturating_sub(self.waited);
        let per_write = work.as_secs_f64() * 1e6 / self.changes.count.max(1) as f64;
        format!(
            "simulation busy {:.0} % of the run ({per_write:.0} µs a write), {:.0} % waiting for the store",
            share(self.busy).min(100.0),
            share(self.waited).min(100.0)
        )
    }
}

impl Histogram {
    fn new() -> Self {
        Histogram(std::array::from_fn(|_| AtomicU64::new(0)))
    }

    /// Bucket `i` holds lateness in [2^(i-1), 2^i) µs; bucket 0 under 1 µs.
    fn record(&self, late: Duration) {
        let us = u64::try_from(late.as_micros()).unwrap_or(u64::MAX);
        let i = (64 - us.leading_zeros() as usize).min(BUCKETS - 1);
        self.0[i].fetch_add(1, Ordering::Relaxed);
    }

    fn read(&self) -> Lateness {
        let counts: Vec<u64> = self.0.iter().map(|c| c.load(Ordering::Relaxed)).collect();
        let count: u64 = counts.iter().sum();
        // The upper edge of the bucket where the quantile falls.
        let at = |q: f64| {
            let want = ((count as f64) * q).ceil().max(1.0) as u64;
            let mut seen = 0;
            for (i, c) in counts.iter().enumerate() {
                seen += c;
                if seen >= want {
                    return Duration::from_micros(if i == 0 { 0 } else { 1 << i });
                }
            }
            Duration::ZERO
        };
        let max = counts
            .iter()
            .rposition(|c| *c > 0)
            .map_or(Duration::ZERO, |i| {
                Duration::from_micros(if i == 0 { 0 } else { 1 << i })
            });
        Lateness {
            median: if count == 0 { Duration::ZERO } else { at(0.5) },
            p99: if count == 0 { Duration::ZERO } else { at(0.99) },
            max,
            count,
        }
    }

    fn reset(&self) {
        for c in &self.0 {
            c.store(0, Ordering::Relaxed);
        }
    }
}

impl Lag {
    pub(crate) fn new() -> Self {
        Lag {
            timers: Histogram::new(),
            changes: Histogram::new(),
            requests: Histogram::new(),
            busy: AtomicU64::new(0),
            waited: AtomicU64::new(0),
        }
    }

    /// The simulation worked this long (one pass until the store was quiet).
    pub(crate) fn busy(&self, d: Duration) {
        add(&self.busy, d);
    }

    /// The simulation waited this long to take the store.
    pub(crate) fn waited(&self, d: Duration) {
        add(&self.waited, d);
    }

    pub(crate) fn timer(&self, late: Duration) {
        self.timers.record(late);
    }

    pub(crate) fn change(&self, late: Duration) {
        self.changes.record(late);
    }

    pub(crate) fn request(&self, waited: Duration) {
        self.requests.record(waited);
    }

    pub(crate) fn read(&self) -> SandboxLag {
        SandboxLag {
            timers: self.timers.read(),
            changes: self.changes.read(),
            requests: self.requests.read(),
            busy: Duration::from_nanos(self.busy.load(Ordering::Relaxed)),
            waited: Duration::from_nanos(self.waited.load(Ordering::Relaxed)),
        }
    }

    pub(crate) fn reset(&self) {
        self.timers.reset();
        self.changes.reset();
        self.requests.reset();
        self.busy.store(0, Ordering::Relaxed);
        self.waited.store(0, Ordering::Relaxed);
    }
}

fn add(counter: &AtomicU64, d: Duration) {
    let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    counter.fetch_add(ns, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_fall_in_their_bucket() {
        let lag = Lag::new();
        for _ in 0..98 {
            lag.timer(Duration::from_micros(300));
        }
        lag.timer(Duration::from_millis(40));
        lag.timer(Duration::from_millis(900));
        let t = lag.read().timers;
        assert_eq!(t.count, 100);
        // 300 µs is in [256, 512): said as 512 µs, never less than it was.
        assert_eq!(t.median, Duration::from_micros(512));
        assert!(t.p99 >= Duration::from_millis(40) && t.p99 < Duration::from_millis(80));
        assert!(t.max >= Duration::from_millis(900));
        lag.reset();
        assert_eq!(lag.read().timers.count, 0);
    }

    #[test]
    fn the_cause_is_said_as_shares_of_the_run() {
        let lag = Lag::new();
        lag.busy(Duration::from_secs(8));
        lag.waited(Duration::from_secs(2));
        for _ in 0..200_000 {
            lag.change(Duration::from_micros(5));
        }
        let read = lag.read();
        assert_eq!(
            read.cause(Duration::from_secs(10)),
            "simulation busy 80 % of the run (30 µs a write), 20 % waiting for the store"
        );
        assert!(!read.late(Duration::from_millis(100)));
        lag.request(Duration::from_millis(150));
        assert!(
            lag.read().late(Duration::from_millis(100)),
            "a request waited"
        );
        lag.reset();
        assert_eq!(lag.read().busy, Duration::ZERO);
    }
}
