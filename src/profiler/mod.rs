//! The kernel profiler (after the XeHE paper's, III-I): an event collector that records
//! every kernel launch under its kernel name, and a data processor that turns the events
//! into tables: average device time per kernel, named operations (external time, host
//! time of the routed calls, loop count, each kernel's share, the NTT share), the host
//! time per routed call, exported as JSON and CSV, plus a
//! Chrome/Perfetto trace (`chrome://tracing`, ui.perfetto.dev) of the device timeline.
//!
//! # Idle device
//! Each launch records the routed operation that issued it ([`operation_scope`]). Where a
//! queue's device timeline has a gap of more than [`IDLE_GAP_NS`] between two kernels, the
//! device waited for the host to issue the next one: the trace marks the gap as an `idle`
//! event named after the operation whose launch ended it, and the report sums the gaps per
//! operation ([`IdleStats`]), so a program slower than its kernels shows where the host
//! held the device back.
//!
//! # Turning it on
//! - The `profile` setting (`SEAL_OPENCL_PROFILE=path`, `crate::config`): devices made
//!   with it record into the process-wide profiler ([`enable_global_dumping_to`]), and
//!   the tables are written when the process exits (see [`enable_global_dumping_to`] for
//!   the file names).
//! - Programmatically: pass a [`Profiler`] in `device::DeviceOptions::profiler` (or
//!   [`enable_global`]); call the export functions yourself.
//!
//! Off, nothing is recorded and launches create no events: the cost is one `Option`
//! check per launch.
//!
//! # Dump at exit
//! Rust never drops statics, so a `Drop` of a global collector would never run. Instead,
//! the first launch or routed call recorded by a profiler that dumps at exit registers a
//! C `atexit` handler. `exit()` (returning from `main` in Rust or C++, or `std::process::exit`)
//! runs it. It is registered after the OpenCL driver initialised (a queue existed to
//! record on), and `atexit` handlers run in reverse order, so it runs before any handler
//! the driver registered during its own initialisation and can still query events. It
//! does not run on abort or on a fatal signal; call [`Profiler::export_all`] explicitly
//! where that matters.

mod report;

use std::cell::Cell;
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Once};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::cl::{self, Event};
use crate::error::Result;

pub use report::{
    HostCallStats, IdleStats, KernelRecord, KernelStats, Operation, OperationKernel, ProfileReport,
    CSV_HEADER, IDLE_GAP_NS, REPORT_FORMAT,
};

/// Events waiting to be resolved into timestamps are checked (without waiting) each time
/// this many more have been recorded, so a long run holds few live OpenCL events.
const RESOLVE_EVERY: usize = 1024;

/// An event collector with its data processor. Shared (`Arc`) by every queue that
/// records into it; thread-safe.
pub struct Profiler {
    state: Mutex<State>,
    /// Where the at-exit dump goes (only for the environment-enabled global profiler).
    dump_at_exit: Option<PathBuf>,
    atexit: Once,
}

#[derive(Default)]
struct State {
    /// Launches whose events may not have completed yet, in launch order.
    pending: VecDeque<Pending>,
    /// Resolved launches not yet grouped into an operation.
    window: Vec<KernelRecord>,
    /// Resolved launches already grouped into operations (kept for the trace).
    grouped: Vec<KernelRecord>,
    operations: Vec<Operation>,
    /// Host time of routed calls not yet grouped into an operation, in ns.
    host_window_ns: u64,
    /// Host time of every routed call by name: (calls, total ns).
    host_calls: BTreeMap<&'static str, (u64, u64)>,
    /// The backend's threads' waits by kind ([`Wait::name`]): (waits, total ns).
    waits: BTreeMap<&'static str, (u64, u64)>,
    tile_names: BTreeMap<usize, String>,
    /// Events whose timestamps could not be read (a queue without profiling).
    unprofiled: u64,
}

struct Pending {
    name: String,
    operation: Option<&'static str>,
    event: Event,
    tile: usize,
    queue: usize,
}

thread_local! {
    /// The routed operation the calling thread is issuing ([`operation_scope`]).
    static OPERATION: Cell<Option<&'static str>> = const { Cell::new(None) };
}

/// While the returned guard lives, launches the calling thread records are attributed to
/// the routed operation `name` (the SEAL backend opens one per operation while profiling).
pub fn operation_scope(name: &'static str) -> OperationScope {
    OperationScope {
        previous: OPERATION.replace(Some(name)),
    }
}

/// Restores the operation named before [`operation_scope`] when dropped.
pub struct OperationScope {
    previous: Option<&'static str>,
}

impl Drop for OperationScope {
    fn drop(&mut self) {
        OPERATION.set(self.previous);
    }
}

/// What a thread waits for inside the backend while profiling ([`Profiler::record_wait`]):
/// with many threads, whether their time goes to each other (the queue's issue lock) or
/// to the device (reads, synchronize).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Another thread's operation on the same queue (`Graph::issuing`'s lock).
    IssueLock,
    /// Words read to the host, behind the work that writes them (`Backend::download`).
    HostRead,
    /// Every queue issued on (`Tile::finish_issued`: SEAL's synchronize, a frame's end).
    Synchronize,
}

impl Wait {
    /// The kind's name in the report's `waits`.
    pub fn name(self) -> &'static str {
        match self {
            Wait::IssueLock => "issue lock",
            Wait::HostRead => "host read",
            Wait::Synchronize => "synchronize",
        }
    }
}

/// Runs `f`, and where `profiler` is on records its time as a `wait` (none is read
/// without it).
pub fn timed_wait<T>(profiler: Option<&Profiler>, wait: Wait, f: impl FnOnce() -> T) -> T {
    match profiler {
        None => f(),
        Some(profiler) => {
            let started = Instant::now();
            let out = f();
            profiler.record_wait(wait, started.elapsed());
            out
        }
    }
}

impl Profiler {
    pub fn new() -> Arc<Profiler> {
        Arc::new(Self::with_dump(None))
    }

    fn with_dump(dump_at_exit: Option<PathBuf>) -> Profiler {
        Profiler {
            state: Mutex::new(State::default()),
            dump_at_exit,
            atexit: Once::new(),
        }
    }

    /// Records the launch behind `event` of kernel `name` on queue `queue` of tile
    /// `tile` (library-internal: the device layer calls it for every launch).
    pub fn record(&self, name: &str, event: Event, tile: usize, queue: usize) {
        self.dump_at_exit_once();
        let operation = OPERATION.get();
        let mut state = self.state.lock();
        state.pending.push_back(Pending {
            name: name.to_string(),
            operation,
            event,
            tile,
            queue,
        });
        if state.pending.len().is_multiple_of(RESOLVE_EVERY) {
            state.resolve(false);
        }
    }

    /// Records that the routed call `name` kept the host `host` long, from entering the
    /// backend to returning to SEAL (library-internal: the SEAL backend calls it for every
    /// operation while profiling). Next to the kernel times, it tells whether a workload is
    /// bound by the host's issuing or by the device.
    pub fn record_host(&self, name: &'static str, host: Duration) {
        self.dump_at_exit_once();
        let ns = host.as_nanos() as u64;
        let mut state = self.state.lock();
        state.host_window_ns += ns;
        let entry = state.host_calls.entry(name).or_default();
        entry.0 += 1;
        entry.1 += ns;
    }

    /// Records that a thread of the backend waited `waited` for `wait` (the waits of all
    /// threads add up: with several, more than the wall time).
    pub fn record_wait(&self, wait: Wait, waited: Duration) {
        let ns = waited.as_nanos() as u64;
        let mut state = self.state.lock();
        let entry = state.waits.entry(wait.name()).or_default();
        entry.0 += 1;
        entry.1 += ns;
    }

    /// Registers the dump at exit on the first record, launch or routed call (a call may
    /// launch nothing: a - a is a fill), once the driver has initialised.
    fn dump_at_exit_once(&self) {
        if self.dump_at_exit.is_some() {
            self.atexit.call_once(register_atexit_dump);
        }
    }

    /// Names tile `tile` in the trace (e.g. its device).
    pub fn name_tile(&self, tile: usize, name: &str) {
        self.state.lock().tile_names.insert(tile, name.to_string());
    }

    /// Turns completed events into timestamps without waiting (frame end calls it).
    pub fn resolve_completed(&self) {
        self.state.lock().resolve(false);
    }

    /// Average device time per kernel over every launch recorded and not cleared
    /// (waits for the launches to complete). Sorted by total time, largest first.
    pub fn kernel_stats(&self) -> Result<Vec<KernelStats>> {
        let mut state = self.state.lock();
        state.resolve(true);
        Ok(report::kernel_stats(
            state.grouped.iter().chain(state.window.iter()),
        ))
    }

    /// [`Profiler::kernel_stats`] as a text table for a terminal.
    pub fn kernel_table(&self) -> Result<String> {
        Ok(report::kernel_table(&self.kernel_stats()?))
    }

    /// Groups every launch recorded since the last operation (or clear) into operation
    /// `name` that ran `loops` times and took `external` per loop on the host clock,
    /// appends it to the export table and returns it.
    pub fn add_operation(&self, name: &str, external: Duration, loops: u32) -> Result<Operation> {
        let _span = tracing::debug_span!("profiler_add_operation", name, loops).entered();
        let mut state = self.state.lock();
        state.resolve(true);
        let window = std::mem::take(&mut state.window);
        let host_ns = std::mem::take(&mut state.host_window_ns);
        let op = report::operation(name, external, loops, &window, host_ns);
        state.grouped.extend(window);
        state.operations.push(op.clone());
        Ok(op)
    }

    /// Drops every recorded launch (the operation table stays).
    pub fn clear_events(&self) {
        let mut state = self.state.lock();
        state.pending.clear();
        state.window.clear();
        state.grouped.clear();
        state.host_window_ns = 0;
        state.host_calls.clear();
        state.waits.clear();
        state.unprofiled = 0;
    }

    /// Drops the operation table (recorded launches stay).
    pub fn clear_export_table(&self) {
        self.state.lock().operations.clear();
    }

    /// Everything as one serialisable value (waits for pending launches).
    pub fn report(&self) -> Result<ProfileReport> {
        let mut state = self.state.lock();
        state.resolve(true);
        let records: Vec<&KernelRecord> = state.grouped.iter().chain(state.window.iter()).collect();
        Ok(report::build_report(
            report::kernel_stats(records.iter().copied()),
            report::idle_stats(&records),
            state.operations.clone(),
            &state.host_calls,
            &state.waits,
            &state.tile_names,
            state.unprofiled,
        ))
    }

    /// Writes [`Profiler::report`] as pretty JSON.
    pub fn export_json(&self, path: &Path) -> Result<()> {
        report::write_json(path, &self.report()?)
    }

    /// Writes the kernel and operation tables as CSV rows (see `report::CSV_HEADER`).
    pub fn export_csv(&self, path: &Path) -> Result<()> {
        report::write_csv(path, &self.report()?)
    }

    /// Writes the device timeline in the trace-event format (complete events, one track
    /// per tile and queue).
    pub fn export_trace(&self, path: &Path) -> Result<()> {
        let mut state = self.state.lock();
        state.resolve(true);
        let records: Vec<&KernelRecord> = state.grouped.iter().chain(state.window.iter()).collect();
        report::write_trace(path, &records, &state.tile_names)
    }

    /// Writes BASE.json, BASE.csv and BASE.trace.json (BASE: `base` without a trailing
    /// `.json`); returns the three paths.
    pub fn export_all(&self, base: &Path) -> Result<[PathBuf; 3]> {
        let stem = base.to_string_lossy();
        let stem = stem.strip_suffix(".json").unwrap_or(&stem);
        let files = [
            PathBuf::from(format!("{stem}.json")),
            PathBuf::from(format!("{stem}.csv")),
            PathBuf::from(format!("{stem}.trace.json")),
        ];
        self.export_json(&files[0])?;
        self.export_csv(&files[1])?;
        self.export_trace(&files[2])?;
        Ok(files)
    }
}

impl State {
    /// Moves pending launches into the window, in order; with `wait`, all of them,
    /// otherwise until the first that has not completed.
    fn resolve(&mut self, wait: bool) {
        while let Some(front) = self.pending.front() {
            if wait {
                if let Err(e) = cl::wait(&front.event) {
                    tracing::warn!(kernel = %front.name, error = %e, "profiled launch failed");
                }
            } else if !cl::is_complete(&front.event).unwrap_or(true) {
                break;
            }
            let Some(p) = self.pending.pop_front() else {
                break;
            };
            match cl::event_times(&p.event) {
                Ok(t) => self.window.push(KernelRecord {
                    name: p.name,
                    operation: p.operation.map(str::to_string),
                    tile: p.tile,
                    queue: p.queue,
                    queued_ns: t.queued,
                    submit_ns: t.submit,
                    start_ns: t.start,
                    end_ns: t.end,
                }),
                Err(_) => self.unprofiled += 1,
            }
        }
    }
}

static GLOBAL: Mutex<Option<Arc<Profiler>>> = Mutex::new(None);

/// The process-wide profiler, once [`enable_global`] or [`enable_global_dumping_to`] made it.
pub fn global() -> Option<Arc<Profiler>> {
    GLOBAL.lock().clone()
}

/// Turns the process-wide profiler on (no dump at exit) and returns it. Devices created
/// afterwards record into it.
pub fn enable_global() -> Arc<Profiler> {
    GLOBAL.lock().get_or_insert_with(Profiler::new).clone()
}

/// Turns the process-wide profiler on, writing at exit `BASE.json` (the
/// [`ProfileReport`]), `BASE.csv` (the same tables as rows) and `BASE.trace.json` (trace
/// events), where BASE is `path` without a trailing `.json`; returns it. A profiler that
/// is on already stays as it is.
pub fn enable_global_dumping_to(path: PathBuf) -> Arc<Profiler> {
    GLOBAL
        .lock()
        .get_or_insert_with(|| Arc::new(Profiler::with_dump(Some(path))))
        .clone()
}

fn register_atexit_dump() {
    // SAFETY: `atexit` only stores the function pointer; `dump_global_at_exit` is a
    // plain `extern "C" fn()` that never unwinds (it catches panics).
    let status = unsafe { libc::atexit(dump_global_at_exit) };
    if status != 0 {
        tracing::warn!("atexit registration failed; the profile will not be written at exit");
    }
}

extern "C" fn dump_global_at_exit() {
    let outcome = std::panic::catch_unwind(|| {
        // Another thread may still hold the lock while the process exits: give up rather
        // than hang the exit.
        let Some(guard) = GLOBAL.try_lock_for(Duration::from_secs(1)) else {
            return;
        };
        let Some(profiler) = guard.clone() else {
            return;
        };
        drop(guard);
        let Some(path) = profiler.dump_at_exit.clone() else {
            return;
        };
        match profiler.export_all(&path) {
            Ok(files) => eprintln!(
                "seal-opencl: profile written to {}",
                files.map(|f| f.display().to_string()).join(", ")
            ),
            Err(e) => eprintln!(
                "seal-opencl: writing the profile to {} failed: {e}",
                path.display()
            ),
        }
    });
    if outcome.is_err() {
        eprintln!("seal-opencl: writing the profile at exit panicked");
    }
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) from Unix seconds (days-to-civil, proleptic Gregorian).
pub fn utc_date(unix: u64) -> String {
    let (days, secs) = ((unix / 86_400) as i64, unix % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}
