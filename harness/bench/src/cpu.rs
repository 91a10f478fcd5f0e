//! The machine's CPU, for benchmarks that need to say whether a figure is bound by the CPU or
//! by something else (locks, flushes): busy CPU-seconds between two readings of `/proc/stat`,
//! and pinning the benchmark cluster and this process to fewer CPUs (`taskset`) to measure how
//! a figure scales with cores.

use std::process::Command;
use std::time::Instant;

use crate::Failure;

/// A reading of the machine's CPU counters.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CpuMeter {
    busy: u64,
    total: u64,
    at: Instant,
}

impl CpuMeter {
    pub(crate) fn start() -> Result<Self, Failure> {
        let stat = std::fs::read_to_string("/proc/stat")?;
        let fields: Vec<u64> = stat
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("cpu "))
            .ok_or("no cpu line in /proc/stat")?
            .split_whitespace()
            .filter_map(|n| n.parse().ok())
            .collect();
        // user nice system idle iowait irq softirq steal ...: idle and iowait are not busy.
        let total: u64 = fields.iter().take(8).sum();
        let idle = fields.get(3).copied().unwrap_or(0) + fields.get(4).copied().unwrap_or(0);
        Ok(Self { busy: total - idle, total, at: Instant::now() })
    }

    /// Busy CPU-seconds since this reading, over every CPU of the machine.
    pub(crate) fn busy_seconds(&self) -> Result<f64, Failure> {
        let now = Self::start()?;
        let share = (now.busy - self.busy) as f64 / (now.total - self.total).max(1) as f64;
        Ok(share * online_cpus() as f64 * self.at.elapsed().as_secs_f64())
    }
}

pub(crate) fn online_cpus() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// The postmaster of the cluster that runs backend `backend_pid` (on this machine).
pub(crate) fn postmaster_of(backend_pid: i32) -> Result<u32, Failure> {
    parent_of(backend_pid)
}

/// Pin a Postgres cluster (its `postmaster` and every child, so new backends inherit it) and
/// every thread of this process to `cpus` (a `taskset` list, such as `0` or `0-1`).
pub(crate) fn pin(postmaster: u32, cpus: &str) -> Result<(), Failure> {
    let mut pids = vec![postmaster, std::process::id()];
    pids.extend(children_of(postmaster));
    for pid in pids {
        // A backend may exit between the listing and here; only the postmaster must succeed.
        let status = Command::new("taskset").args(["-a", "-p", "-c", cpus, &pid.to_string()]).output()?;
        if !status.status.success() && pid == postmaster {
            return Err(format!("taskset failed: {}", String::from_utf8_lossy(&status.stderr)).into());
        }
    }
    Ok(())
}

fn parent_of(pid: i32) -> Result<u32, Failure> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
    let after = stat.rsplit_once(')').map(|(_, rest)| rest).ok_or("unreadable /proc stat")?;
    Ok(after.split_whitespace().nth(1).and_then(|n| n.parse().ok()).ok_or("no parent pid")?)
}

fn children_of(pid: u32) -> Vec<u32> {
    let Ok(output) = Command::new("pgrep").args(["-P", &pid.to_string()]).output() else {
        return Vec::new();
    };
    String::from_utf8_lossy(&output.stdout).lines().filter_map(|l| l.trim().parse().ok()).collect()
}

/// Process `pid`'s CPU time so far, in milliseconds: the on-CPU time of each of its threads
/// (`se.sum_exec_runtime` in `/proc/<pid>/task/<tid>/sched`, to the nanosecond), added up. A
/// thread that ended is no longer counted (the dev server's threads live as long as it, but for
/// its blocking pool's, which idle 10 s first). Where the scheduler's statistics cannot be read,
/// the process's user + system time (`/proc/<pid>/stat`, in 10 ms clock ticks).
pub(crate) fn cpu_ms_of(pid: u32) -> f64 {
    let threads = std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten();
    let mut sum = None;
    for thread in threads {
        let Ok(sched) = std::fs::read_to_string(thread.path().join("sched")) else { continue };
        let runtime = sched
            .lines()
            .find(|line| line.starts_with("se.sum_exec_runtime"))
            .and_then(|line| line.rsplit(':').next())
            .and_then(|ms| ms.trim().parse::<f64>().ok());
        if let Some(ms) = runtime {
            *sum.get_or_insert(0.0) += ms;
        }
    }
    sum.unwrap_or_else(|| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or_default();
        let ticks: Vec<f64> = after.split_whitespace().map(|f| f.parse().unwrap_or(0.0)).collect();
        // utime and stime: the 12th and 13th fields after the name; USER_HZ is 100.
        (ticks.get(11).copied().unwrap_or(0.0) + ticks.get(12).copied().unwrap_or(0.0)) * 10.0
    })
}
