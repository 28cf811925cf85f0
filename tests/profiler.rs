//! The profiler: launches recorded under their kernel names, per-kernel and per-operation
//! tables, JSON / CSV exports that parse back, a valid trace-event file, profiling only
//! when on, and the `SEAL_OPENCL_PROFILE` dump at process exit.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use seal_opencl::cl::{self, ArgType, KernelArg, KernelSig, Region, SharedKernel};
use seal_opencl::config::Config;
use seal_opencl::device::{DeviceOptions, Devices, Graph};
use seal_opencl::memcache::PoolBuffer;
use seal_opencl::profiler::{self, ProfileReport, Profiler, CSV_HEADER, REPORT_FORMAT};
use seal_opencl_testkit::child_test;
use seal_opencl_testkit::fixture;
use seal_opencl_testkit::harness::run_child_output;

/// Kernels named like the real ones, so the NTT share has something to count.
const NAMED: &str = r#"
__kernel void alpha_add(__global ulong *x, ulong x_at) { x += x_at; x[get_global_id(0)] += 1; }
__kernel void ntt_forward_stage(__global ulong *x, ulong x_at) {
    x += x_at;
    size_t i = get_global_id(0);
    ulong v = x[i];
    for (int r = 0; r < 200; ++r) v = v * 6364136223846793005UL + 1UL;
    x[i] = v;
}
"#;

fn scratch(name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let dir = std::env::temp_dir().join(format!(
        "seal-opencl-profiler-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn profiled() -> (Arc<Profiler>, Devices) {
    let p = Profiler::new();
    let devices = Devices::new(DeviceOptions {
        profiler: Some(p.clone()),
        ..Default::default()
    })
    .unwrap();
    (p, devices)
}

/// The backend behind SEAL on profiled devices, SEAL's parameters for it, and two images of
/// 2 polynomials at their first level.
fn profiled_backend() -> (
    Arc<Profiler>,
    seal_opencl::seal_backend::Backend,
    fixture::BackendParams,
    seal_opencl::seal_backend::GpuImage,
    seal_opencl::seal_backend::GpuImage,
) {
    let (p, devices) = profiled();
    let backend = fixture::backend_on(devices);
    let params = fixture::BackendParams::new();
    let n = fixture::BACKEND_N;
    let words: Vec<u64> = (0..2 * 2 * n)
        .map(|i| i as u64 % params.key_moduli[0])
        .collect();
    let a = backend.create_image(&words).unwrap();
    let b = backend.create_image(&words).unwrap();
    (p, backend, params, a, b)
}

/// A kernel of [`NAMED`] over a buffer: its signature and the region each launch sets.
struct Named {
    kernel: SharedKernel,
    sig: KernelSig,
    x: Region,
}

fn named_kernel(g: &Graph, name: &'static str, buf: &PoolBuffer) -> Named {
    let program = g.context().program(&[NAMED], "").unwrap();
    let sig = KernelSig {
        name,
        params: &[("x", ArgType::Buf)],
    };
    let kernel = cl::shared_kernel(sig.build(&program, &[]).unwrap());
    Named {
        kernel,
        sig,
        x: buf.buffer().clone(),
    }
}

/// A buffer of `words` words and the two kernels of [`NAMED`] over it.
fn alpha_and_ntt(g: &Graph, words: usize) -> (PoolBuffer, Named, Named) {
    let buf = g.alloc(words).unwrap();
    let alpha = named_kernel(g, "alpha_add", &buf);
    let ntt = named_kernel(g, "ntt_forward_stage", &buf);
    (buf, alpha, ntt)
}

/// Launches `kernel` `times` times over every word of `words`.
fn launch(g: &Graph, k: &Named, words: usize, times: usize) {
    for _ in 0..times {
        // SAFETY: built from `k.sig`; both test kernels touch x[i] for i < words; the
        // buffer holds `words`.
        unsafe {
            g.launch(
                &k.kernel,
                &k.sig,
                &[("x", KernelArg::Buf(&k.x))],
                words,
                None,
            )
            .unwrap()
        };
    }
}

#[test]
fn exports_parse_back_with_the_expected_kernels_and_counts() {
    let (p, devices) = profiled();
    let g = devices.graph();
    let (_buf, alpha, ntt) = alpha_and_ntt(&g, 1024);
    let start = std::time::Instant::now();
    launch(&g, &alpha, 1024, 3);
    launch(&g, &ntt, 1024, 5);
    g.finish().unwrap();
    let op = p.add_operation("MulLin", start.elapsed(), 1).unwrap();

    let by_name = |n: &str| op.kernels.iter().find(|k| k.name == n).unwrap().clone();
    assert_eq!(op.kernels.len(), 2);
    assert_eq!(by_name("alpha_add").calls_per_loop, 3.0);
    assert_eq!(by_name("ntt_forward_stage").calls_per_loop, 5.0);
    assert!(by_name("ntt_forward_stage").is_ntt && !by_name("alpha_add").is_ntt);
    assert!(op.kernel_ns > 0.0 && op.ntt_ns > 0.0 && op.ntt_ns <= op.kernel_ns);
    assert!((op.ntt_share - op.ntt_ns / op.kernel_ns).abs() < 1e-12);
    let shares: f64 = op.kernels.iter().map(|k| k.share).sum();
    assert!(
        (shares - 1.0).abs() < 1e-9,
        "kernel shares add up to 1: {shares}"
    );

    let stats = p.kernel_stats().unwrap();
    let counts: Vec<(String, u64)> = {
        let mut c: Vec<_> = stats.iter().map(|s| (s.name.clone(), s.count)).collect();
        c.sort();
        c
    };
    assert_eq!(
        counts,
        [
            ("alpha_add".to_string(), 3),
            ("ntt_forward_stage".to_string(), 5)
        ]
    );
    assert!(p.kernel_table().unwrap().contains("ntt_forward_stage"));

    let base = scratch("profile.json");
    let files = p.export_all(&base).unwrap();
    let report: ProfileReport =
        serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert_eq!(report.format, REPORT_FORMAT);
    assert_eq!(report.kernels, stats);
    assert_eq!(report.operations, vec![op]);
    assert_eq!(report.unprofiled_events, 0);
    assert!(report.tiles.contains_key(&g.tile().index()));

    let csv = std::fs::read_to_string(&files[1]).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let header = &rows[0];
    assert_eq!(header.join(","), CSV_HEADER);
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let kernel_rows: Vec<_> = rows[1..].iter().filter(|r| r[0] == "kernel").collect();
    let op_rows: Vec<_> = rows[1..].iter().filter(|r| r[0] == "operation").collect();
    assert_eq!((kernel_rows.len(), op_rows.len()), (2, 2));
    for r in kernel_rows {
        let calls: u64 = r[col("calls")].parse().unwrap();
        assert_eq!(
            calls,
            if r[col("kernel")] == "alpha_add" {
                3
            } else {
                5
            }
        );
        assert_eq!(
            r[col("is_ntt")] == "true",
            r[col("kernel")].starts_with("ntt")
        );
    }
    assert!(op_rows
        .iter()
        .all(|r| r[col("operation")] == "MulLin" && r[col("loops")] == "1"));
    assert!(files[2].exists());
}

#[test]
fn the_trace_is_valid_trace_event_json() {
    let (p, devices) = profiled();
    let graphs = [devices.graph(), devices.tiles()[0].graph(0).unwrap()];
    for g in &graphs {
        let buf = g.alloc(256).unwrap();
        let k = named_kernel(g, "alpha_add", &buf);
        launch(g, &k, 256, 4);
    }
    let path = scratch("trace.json");
    p.export_trace(&path).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let events = v["traceEvents"].as_array().expect("a traceEvents array");
    let complete: Vec<_> = events.iter().filter(|e| e["ph"] == "X").collect();
    let kernels = complete.iter().filter(|e| e["cat"] == "kernel").count();
    assert_eq!(kernels, 8);
    for e in &complete {
        if e["cat"] == "kernel" {
            assert_eq!(e["name"], "alpha_add");
        } else {
            // Device idle between launches (outside a routed operation here).
            assert_eq!(e["cat"], "idle");
            assert_eq!(e["name"], "idle: waiting for (none)");
        }
        assert!(e["ts"].as_f64().unwrap() >= 0.0 && e["dur"].as_f64().unwrap() >= 0.0);
        assert!(e["pid"].is_u64() && e["tid"].is_u64());
    }
    let meta: Vec<_> = events.iter().filter(|e| e["ph"] == "M").collect();
    assert!(meta
        .iter()
        .any(|e| e["name"] == "process_name" && e["args"]["name"].is_string()));
    assert!(meta.iter().any(|e| e["name"] == "thread_name"));
}

#[test]
fn each_operation_groups_only_the_launches_since_the_previous_one() {
    let (p, devices) = profiled();
    let g = devices.graph();
    let (_buf, alpha, ntt) = alpha_and_ntt(&g, 128);
    launch(&g, &alpha, 128, 2);
    let first = p
        .add_operation("Add", Duration::from_micros(100), 2)
        .unwrap();
    launch(&g, &ntt, 128, 4);
    let second = p
        .add_operation("NTT", Duration::from_micros(200), 2)
        .unwrap();
    assert_eq!(first.kernels.len(), 1);
    assert_eq!(
        (
            first.kernels[0].name.as_str(),
            first.kernels[0].calls_per_loop
        ),
        ("alpha_add", 1.0)
    );
    assert_eq!(first.ntt_share, 0.0);
    assert_eq!(
        (
            second.kernels[0].name.as_str(),
            second.kernels[0].calls_per_loop
        ),
        ("ntt_forward_stage", 2.0)
    );
    assert_eq!(second.ntt_share, 1.0);
    assert_eq!(second.external_ns, 200_000.0);
    assert_eq!(p.report().unwrap().operations.len(), 2);
    assert_eq!(
        p.kernel_stats().unwrap().len(),
        2,
        "kernel totals cover both operations"
    );

    p.clear_export_table();
    p.clear_events();
    let report = p.report().unwrap();
    assert!(report.operations.is_empty() && report.kernels.is_empty());
}

#[test]
fn queues_profile_only_when_a_profiler_is_on() {
    let (p, devices) = profiled();
    let off = Devices::new(DeviceOptions::default()).unwrap();
    for (g, on) in [(devices.graph(), true), (off.graph(), false)] {
        let buf = g.alloc(64).unwrap();
        let k = named_kernel(&g, "alpha_add", &buf);
        launch(&g, &k, 64, 1);
        let mut ev = cl::Event::empty();
        let args = [("x", KernelArg::Buf(&k.x))];
        // SAFETY: built from `k.sig`; `alpha_add` touches x[i] for i < 64; the buffer holds
        // 64 words.
        unsafe {
            cl::launch(
                g.queue(),
                &k.kernel,
                &k.sig,
                &args,
                &[],
                64,
                None,
                Some(&mut ev),
            )
        }
        .unwrap();
        cl::wait(&ev).unwrap();
        assert_eq!(cl::event_times(&ev).is_ok(), on, "profiling on = {on}");
    }
    assert_eq!(
        p.kernel_stats().unwrap()[0].count,
        1,
        "only the profiled devices record"
    );
}

child_test! {
    /// `SEAL_OPENCL_PROFILE` set: the process records with the global profiler and dumps
    /// its report at exit, with no export call.
    fn the_environment_variable_dumps_at_process_exit() {
        let devices = Devices::new(Config::from_env().unwrap().device_options()).unwrap();
        assert!(profiler::global().is_some());
        let g = devices.graph();
        let buf = g.alloc(64).unwrap();
        let k = named_kernel(&g, "ntt_forward_stage", &buf);
        launch(&g, &k, 64, 2);
    }
    parent(child) {
        let base = scratch("dump.json");
        let out = run_child_output(
            child,
            &[(seal_opencl::config::PROFILE.name, base.to_str().unwrap())],
        );
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let report: ProfileReport = serde_json::from_str(
            &std::fs::read_to_string(&base)
                .unwrap_or_else(|e| panic!("no dump at {}: {e}\n{log}", base.display())),
        )
        .unwrap();
        assert_eq!(report.kernels.len(), 1);
        assert_eq!(
            (report.kernels[0].name.as_str(), report.kernels[0].count),
            ("ntt_forward_stage", 2)
        );
        assert!(base.with_extension("csv").exists());
        assert!(base.with_extension("trace.json").exists());
    }
}

/// The backend behind SEAL records the host time of every routed call while profiling: an
/// operation's `host_ns` covers the calls issued in its window, and the report has one row
/// per routed call name. Without a profiler nothing is recorded (nothing to record into).
#[test]
fn routed_calls_record_their_host_time() {
    let (p, backend, params, mut a, b) = profiled_backend();
    let level = params.level();
    p.clear_events();
    for _ in 0..3 {
        backend.add(&level, &mut a, 2, &b, 2).unwrap();
        backend.negate(&level, &mut a, 2).unwrap();
    }
    let op = p
        .add_operation("add + negate", Duration::from_millis(1), 3)
        .unwrap();
    assert!(op.host_ns > 0.0, "{op:?}");
    let report = p.report().unwrap();
    let calls: Vec<(&str, u64)> = report
        .host_calls
        .iter()
        .map(|h| (h.name.as_str(), h.calls))
        .collect();
    assert!(
        calls.contains(&("add", 3)) && calls.contains(&("negate", 3)),
        "{calls:?}"
    );
    assert!(report.host_calls.iter().all(|h| h.avg_ns > 0.0));
}

/// While profiling, each launch carries the routed operation that issued it, and a gap on a
/// queue's device timeline longer than `IDLE_GAP_NS` is idle time charged to the operation
/// whose launch ended it: in the report (`idle`) and as an `idle` event in the trace.
#[test]
fn idle_gaps_name_the_operation_the_device_waited_for() {
    let (p, backend, params, mut a, _) = profiled_backend();
    let level = params.level();
    // a + a: an add that launches at the call (an add of another ciphertext waits as a
    // deferred sum, which the next operation would launch).
    backend.double_inplace(&level, &mut a, 2).unwrap();
    backend.synchronize().unwrap();
    p.clear_events();
    backend.double_inplace(&level, &mut a, 2).unwrap();
    backend.synchronize().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    backend.negate(&level, &mut a, 2).unwrap();
    backend.synchronize().unwrap();

    let report = p.report().unwrap();
    let negate = report
        .idle
        .iter()
        .find(|i| i.operation == "negate")
        .unwrap_or_else(|| panic!("no idle time before negate: {:?}", report.idle));
    assert_eq!(negate.gaps, 1, "{negate:?}");
    assert!(negate.max_ns >= 40_000_000, "{negate:?}");
    assert!(
        report.idle.iter().all(|i| i.operation != "add"),
        "{:?}",
        report.idle
    );

    let dir = std::env::temp_dir().join(format!("seal-opencl-idle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("idle.trace.json");
    p.export_trace(&trace).unwrap();
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(text.contains("idle: waiting for negate"), "{text}");
    assert!(text.contains("\"operation\":\"add\""), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The backend's threads' waits, by kind: a thread waiting for another thread's operation
/// on its queue (the issue lock), a read of an image's words, a synchronize.
#[test]
fn waits_are_recorded_by_kind() {
    let (p, backend, _params, a, _b) = profiled_backend();
    let graph = backend.graph().clone();
    // Another thread holds the queue's issue lock for 50 ms while this one asks for it.
    let held = std::sync::Barrier::new(2);
    std::thread::scope(|s| {
        s.spawn(|| {
            let _issuing = graph.issuing();
            held.wait();
            std::thread::sleep(Duration::from_millis(50));
        });
        held.wait();
        drop(graph.issuing());
    });
    let mut words = vec![0u64; a.len()];
    backend.download(&a, &mut words).unwrap();
    backend.synchronize().unwrap();
    let report = p.report().unwrap();
    let wait = |name: &str| {
        report
            .waits
            .iter()
            .find(|w| w.name == name)
            .unwrap_or_else(|| panic!("no {name:?} wait in {:?}", report.waits))
            .clone()
    };
    let lock = wait("issue lock");
    assert!(
        lock.calls >= 2 && lock.total_ns >= 40_000_000,
        "the second thread's wait for the first's operation: {lock:?}"
    );
    assert!(wait("host read").calls >= 1);
    assert!(wait("synchronize").calls >= 1);
}
