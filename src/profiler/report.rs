//! The data processor: tables computed from resolved launches, and their files.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The `format` field of every JSON report; bumped when fields change meaning.
pub const REPORT_FORMAT: &str = "seal-opencl-profile/1";

/// A gap between two kernels of one queue longer than this is device idle time: the
/// device waited for the host's next launch (back-to-back launches leave a few
/// microseconds).
pub const IDLE_GAP_NS: u64 = 10_000;

/// Columns of the CSV export. `table` is `kernel` (one row per kernel over the whole
/// run: `calls` launches, `share` of all device time), `host` (one row per routed call
/// name: `calls`, host time), `idle` (one row per operation whose launches ended device
/// idle gaps: `calls` gaps, `avg_us` and `total_us` of idle time) or `operation` (one row
/// per kernel of an operation: `calls` per loop, `total_us` per loop, `share` of the
/// operation's device time; `external_us` and `ntt_share` repeat the operation's).
pub const CSV_HEADER: &str =
    "table,operation,loops,external_us,ntt_share,kernel,calls,avg_us,total_us,share,is_ntt";

/// One kernel launch with its device timestamps (ns, device clock).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelRecord {
    pub name: String,
    /// The routed operation that issued it, if any.
    #[serde(default)]
    pub operation: Option<String>,
    pub tile: usize,
    pub queue: usize,
    pub queued_ns: u64,
    pub submit_ns: u64,
    pub start_ns: u64,
    pub end_ns: u64,
}

impl KernelRecord {
    fn device_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// Device time of one kernel over every launch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelStats {
    pub name: String,
    pub count: u64,
    pub total_ns: u64,
    pub avg_ns: f64,
    pub min_ns: u64,
    pub max_ns: u64,
    /// The name starts with "ntt" (forward or inverse NTT kernels).
    pub is_ntt: bool,
}

/// One kernel within an operation, per loop of the operation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OperationKernel {
    pub name: String,
    pub calls_per_loop: f64,
    pub avg_ns: f64,
    pub ns_per_loop: f64,
    /// Of the operation's device time.
    pub share: f64,
    pub is_ntt: bool,
}

/// A named group of launches (`add_operation`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Operation {
    pub name: String,
    pub loops: u32,
    /// Host (wall) time per loop, as the caller measured it.
    pub external_ns: f64,
    /// Host time per loop the routed calls of the operation took to issue (from entering
    /// the backend to returning to SEAL; SEAL's own checks before the backend are not in
    /// it). 0 when no routed call was recorded.
    #[serde(default)]
    pub host_ns: f64,
    /// Device time of all its kernels, per loop.
    pub kernel_ns: f64,
    /// Device time of its NTT kernels, per loop.
    pub ntt_ns: f64,
    /// `ntt_ns / kernel_ns` (0 without kernels).
    pub ntt_share: f64,
    /// `kernel_ns / external_ns`: how busy the device was during the operation.
    pub device_share: f64,
    /// Device idle time per loop: gaps over [`IDLE_GAP_NS`] between its kernels on a queue.
    #[serde(default)]
    pub idle_ns: f64,
    /// Largest device time first.
    pub kernels: Vec<OperationKernel>,
}

/// The host time of one kind of routed call (see `Profiler::record_host`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostCallStats {
    pub name: String,
    pub calls: u64,
    pub avg_ns: f64,
    pub total_ns: u64,
}

/// Device idle time before the launches of one operation: gaps over [`IDLE_GAP_NS`] on a
/// queue's timeline that ended with a kernel of this operation (`"(none)"` for launches
/// outside a routed operation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IdleStats {
    pub operation: String,
    pub gaps: u64,
    pub total_ns: u64,
    pub max_ns: u64,
}

/// What `Profiler::export_json` writes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProfileReport {
    pub format: String,
    pub created_unix_s: u64,
    /// Trace process names by tile index.
    pub tiles: BTreeMap<usize, String>,
    /// Largest total device time first.
    pub kernels: Vec<KernelStats>,
    pub operations: Vec<Operation>,
    /// Host time per routed call, by operation name (SEAL's names), most total time first.
    #[serde(default)]
    pub host_calls: Vec<HostCallStats>,
    /// Device idle time by the operation whose launch ended it, most total time first.
    #[serde(default)]
    pub idle: Vec<IdleStats>,
    /// The backend's threads' waits by kind (`Wait`'s names; `calls` counts the waits),
    /// summed over threads, most total time first.
    #[serde(default)]
    pub waits: Vec<HostCallStats>,
    /// Launches whose events had no timestamps (queue created without profiling).
    pub unprofiled_events: u64,
}

/// NTT kernels are named `ntt_*` (ntt.cl's kernels, and the names operations record NTT
/// plans under); `ckks_galois_ntt` permutes in the NTT domain and is no transform.
fn is_ntt(name: &str) -> bool {
    name.to_ascii_lowercase().starts_with("ntt")
}

pub(super) fn kernel_stats<'a>(
    records: impl Iterator<Item = &'a KernelRecord>,
) -> Vec<KernelStats> {
    let mut by_name: HashMap<&str, KernelStats> = HashMap::new();
    for r in records {
        let ns = r.device_ns();
        let s = by_name.entry(&r.name).or_insert_with(|| KernelStats {
            name: r.name.clone(),
            count: 0,
            total_ns: 0,
            avg_ns: 0.0,
            min_ns: u64::MAX,
            max_ns: 0,
            is_ntt: is_ntt(&r.name),
        });
        s.count += 1;
        s.total_ns += ns;
        s.min_ns = s.min_ns.min(ns);
        s.max_ns = s.max_ns.max(ns);
    }
    let mut out: Vec<KernelStats> = by_name
        .into_values()
        .map(|mut s| {
            s.avg_ns = s.total_ns as f64 / s.count as f64;
            s
        })
        .collect();
    out.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}

pub(super) fn kernel_table(stats: &[KernelStats]) -> String {
    let total: u64 = stats.iter().map(|s| s.total_ns).sum();
    let mut out = format!(
        "{:<40} {:>8} {:>12} {:>12} {:>7}\n",
        "kernel", "calls", "avg us", "total us", "share"
    );
    for s in stats {
        let _ = writeln!(
            out,
            "{:<40} {:>8} {:>12.3} {:>12.3} {:>6.1}%",
            s.name,
            s.count,
            s.avg_ns / 1e3,
            s.total_ns as f64 / 1e3,
            share(s.total_ns as f64, total as f64) * 100.0
        );
    }
    out
}

fn share(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        part / whole
    } else {
        0.0
    }
}

pub(super) fn operation(
    name: &str,
    external: Duration,
    loops: u32,
    records: &[KernelRecord],
    host_ns: u64,
) -> Operation {
    let loops_f = f64::from(loops.max(1));
    let stats = kernel_stats(records.iter());
    let kernel_ns = stats.iter().map(|s| s.total_ns as f64).sum::<f64>() / loops_f;
    let ntt_ns = stats
        .iter()
        .filter(|s| s.is_ntt)
        .map(|s| s.total_ns as f64)
        .sum::<f64>()
        / loops_f;
    let external_ns = external.as_nanos() as f64;
    let idle_ns = idle_gaps(&records.iter().collect::<Vec<_>>())
        .iter()
        .map(|&(_, gap, _)| gap as f64)
        .sum::<f64>()
        / loops_f;
    Operation {
        name: name.to_string(),
        loops,
        external_ns,
        host_ns: host_ns as f64 / loops_f,
        kernel_ns,
        ntt_ns,
        ntt_share: share(ntt_ns, kernel_ns),
        device_share: share(kernel_ns, external_ns),
        idle_ns,
        kernels: stats
            .into_iter()
            .map(|s| OperationKernel {
                calls_per_loop: s.count as f64 / loops_f,
                avg_ns: s.avg_ns,
                ns_per_loop: s.total_ns as f64 / loops_f,
                share: share(s.total_ns as f64 / loops_f, kernel_ns),
                is_ntt: s.is_ntt,
                name: s.name,
            })
            .collect(),
    }
}

/// The idle gaps of `records` ([`IDLE_GAP_NS`]): per queue in start order, each gap with
/// the kernel that ended it.
fn idle_gaps<'a>(records: &[&'a KernelRecord]) -> Vec<(u64, u64, &'a KernelRecord)> {
    let mut by_queue: BTreeMap<(usize, usize), Vec<&KernelRecord>> = BTreeMap::new();
    for r in records {
        by_queue.entry((r.tile, r.queue)).or_default().push(r);
    }
    let mut gaps = Vec::new();
    for queue in by_queue.values_mut() {
        queue.sort_by_key(|r| r.start_ns);
        let mut busy_until = None;
        for r in queue.iter() {
            if let Some(end) = busy_until {
                if r.start_ns > end && r.start_ns - end > IDLE_GAP_NS {
                    gaps.push((end, r.start_ns - end, *r));
                }
            }
            busy_until = Some(busy_until.map_or(r.end_ns, |e: u64| e.max(r.end_ns)));
        }
    }
    gaps
}

fn operation_name(r: &KernelRecord) -> &str {
    r.operation.as_deref().unwrap_or("(none)")
}

/// Idle time by the operation whose launch ended it ([`IdleStats`]).
pub(super) fn idle_stats(records: &[&KernelRecord]) -> Vec<IdleStats> {
    let mut by_op: BTreeMap<&str, IdleStats> = BTreeMap::new();
    for (_, gap, next) in idle_gaps(records) {
        let name = operation_name(next);
        let s = by_op.entry(name).or_insert_with(|| IdleStats {
            operation: name.to_string(),
            gaps: 0,
            total_ns: 0,
            max_ns: 0,
        });
        s.gaps += 1;
        s.total_ns += gap;
        s.max_ns = s.max_ns.max(gap);
    }
    let mut out: Vec<IdleStats> = by_op.into_values().collect();
    out.sort_by_key(|s| std::cmp::Reverse(s.total_ns));
    out
}

pub(super) fn build_report(
    kernels: Vec<KernelStats>,
    idle: Vec<IdleStats>,
    operations: Vec<Operation>,
    host_calls: &BTreeMap<&'static str, (u64, u64)>,
    waits: &BTreeMap<&'static str, (u64, u64)>,
    tiles: &BTreeMap<usize, String>,
    unprofiled_events: u64,
) -> ProfileReport {
    // (count, total ns) by name, most total time first.
    let timed = |by_name: &BTreeMap<&'static str, (u64, u64)>| {
        let mut out: Vec<HostCallStats> = by_name
            .iter()
            .map(|(&name, &(calls, total_ns))| HostCallStats {
                name: name.to_string(),
                calls,
                avg_ns: total_ns as f64 / calls.max(1) as f64,
                total_ns,
            })
            .collect();
        out.sort_by_key(|h| std::cmp::Reverse(h.total_ns));
        out
    };
    let host_calls = timed(host_calls);
    let waits = timed(waits);
    ProfileReport {
        format: REPORT_FORMAT.to_string(),
        created_unix_s: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        tiles: tiles.clone(),
        kernels,
        operations,
        host_calls,
        idle,
        waits,
        unprofiled_events,
    }
}

fn write_file(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text)
        .map_err(|e| Error::Io(format!("cannot write {}: {e}", path.display())))
}

fn to_json<T: Serialize>(value: &T) -> Result<String> {
    serde_json::to_string_pretty(value)
        .map_err(|e| Error::Io(format!("profile serialisation failed: {e}")))
}

pub(super) fn write_json(path: &Path, report: &ProfileReport) -> Result<()> {
    write_file(path, &to_json(report)?)
}

/// Quotes a CSV field when it needs it (kernel and operation names are caller text).
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// The kernel columns of a CSV row (see [`CSV_HEADER`]): kernel, calls, avg_us, total_us,
/// share, is_ntt; `avg_ns` and `total_ns` are written in microseconds.
fn kernel_columns(
    name: &str,
    calls: impl std::fmt::Display,
    avg_ns: f64,
    total_ns: f64,
    share: f64,
    is_ntt: bool,
) -> String {
    format!(
        "{},{calls},{:.3},{:.3},{share:.6},{is_ntt}",
        csv_field(name),
        avg_ns / 1e3,
        total_ns / 1e3
    )
}

pub(super) fn write_csv(path: &Path, report: &ProfileReport) -> Result<()> {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    let total: u64 = report.kernels.iter().map(|k| k.total_ns).sum();
    for k in &report.kernels {
        let share = share(k.total_ns as f64, total as f64);
        let kernel = kernel_columns(
            &k.name,
            k.count,
            k.avg_ns,
            k.total_ns as f64,
            share,
            k.is_ntt,
        );
        let _ = writeln!(out, "kernel,,,,,{kernel}");
    }
    // A host call's or an idle gap's row: its count, mean and total in microseconds.
    let mut timed_row = |kind: &str, name: &str, count: u64, avg_ns: f64, total_ns: u64| {
        let _ = writeln!(
            out,
            "{kind},{},,,,,{count},{:.3},{:.3},,",
            csv_field(name),
            avg_ns / 1e3,
            total_ns as f64 / 1e3
        );
    };
    for h in &report.host_calls {
        timed_row("host", &h.name, h.calls, h.avg_ns, h.total_ns);
    }
    for w in &report.waits {
        timed_row("wait", &w.name, w.calls, w.avg_ns, w.total_ns);
    }
    for i in &report.idle {
        let avg_ns = i.total_ns as f64 / i.gaps.max(1) as f64;
        timed_row("idle", &i.operation, i.gaps, avg_ns, i.total_ns);
    }
    for op in &report.operations {
        for k in &op.kernels {
            let kernel = kernel_columns(
                &k.name,
                k.calls_per_loop,
                k.avg_ns,
                k.ns_per_loop,
                k.share,
                k.is_ntt,
            );
            let _ = writeln!(
                out,
                "operation,{},{},{:.3},{:.6},{kernel}",
                csv_field(&op.name),
                op.loops,
                op.external_ns / 1e3,
                op.ntt_share
            );
        }
    }
    write_file(path, &out)
}

#[derive(Serialize)]
struct TraceFile {
    #[serde(rename = "traceEvents")]
    trace_events: Vec<TraceEvent>,
    #[serde(rename = "displayTimeUnit")]
    display_time_unit: &'static str,
}

/// A trace event (the Trace Event Format of chrome://tracing and Perfetto): `X` is a
/// complete event with a duration, `M` metadata naming a process (tile) or thread
/// (queue). Times are microseconds.
#[derive(Serialize)]
struct TraceEvent {
    name: String,
    ph: &'static str,
    pid: usize,
    tid: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    cat: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ts: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dur: Option<f64>,
    args: serde_json::Value,
}

pub(super) fn write_trace(
    path: &Path,
    records: &[&KernelRecord],
    tiles: &BTreeMap<usize, String>,
) -> Result<()> {
    let origin = records.iter().map(|r| r.start_ns).min().unwrap_or(0);
    let mut events = Vec::with_capacity(records.len() + 8);
    let mut tracks: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for r in records {
        let queues = tracks.entry(r.tile).or_default();
        if !queues.contains(&r.queue) {
            queues.push(r.queue);
        }
    }
    for (&tile, queues) in &tracks {
        let name = match tiles.get(&tile) {
            Some(device) => format!("tile {tile}: {device}"),
            None => format!("tile {tile}"),
        };
        events.push(TraceEvent {
            name: "process_name".into(),
            ph: "M",
            pid: tile,
            tid: 0,
            cat: None,
            ts: None,
            dur: None,
            args: serde_json::json!({ "name": name }),
        });
        for &queue in queues {
            events.push(TraceEvent {
                name: "thread_name".into(),
                ph: "M",
                pid: tile,
                tid: queue,
                cat: None,
                ts: None,
                dur: None,
                args: serde_json::json!({ "name": format!("queue {queue}") }),
            });
        }
    }
    for r in records {
        events.push(TraceEvent {
            name: r.name.clone(),
            ph: "X",
            pid: r.tile,
            tid: r.queue,
            cat: Some("kernel"),
            ts: Some(r.start_ns.saturating_sub(origin) as f64 / 1e3),
            dur: Some(r.device_ns() as f64 / 1e3),
            args: serde_json::json!({
                "operation": operation_name(r),
                "queued_to_start_us": r.start_ns.saturating_sub(r.queued_ns) as f64 / 1e3,
            }),
        });
    }
    for (start, gap, next) in idle_gaps(records) {
        events.push(TraceEvent {
            name: format!("idle: waiting for {}", operation_name(next)),
            ph: "X",
            pid: next.tile,
            tid: next.queue,
            cat: Some("idle"),
            ts: Some(start.saturating_sub(origin) as f64 / 1e3),
            dur: Some(gap as f64 / 1e3),
            args: serde_json::json!({
                "operation": operation_name(next),
                "next_kernel": next.name,
            }),
        });
    }
    let file = TraceFile {
        trace_events: events,
        display_time_unit: "ns",
    };
    let text = serde_json::to_string(&file)
        .map_err(|e| Error::Io(format!("trace serialisation failed: {e}")))?;
    write_file(path, &text)
}
