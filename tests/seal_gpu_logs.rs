//! What a host sees of the library's log (`SEAL_OPENCL_LOG`): installing
//! the backend installs a stderr subscriber at that level unless the process has one. Each
//! case runs in a child process (a global subscriber is set once per process), whose stderr
//! the parent reads.

use std::sync::{Arc, Mutex};

use seal_opencl_testkit::child_test;
use seal_opencl_testkit::fixture::*;
use seal_opencl_testkit::harness::*;
use seal_opencl_testkit::seal_c::*;

const LOG: &str = seal_opencl::config::LOG.name;

/// The name SEAL gives the multiply_plain that it runs on the CPU.
const FALLBACK: &str = "multiply_plain (operands not in NTT form)";

/// The device the child's backend runs on (the child inherits `SEAL_OPENCL_DEVICE`).
fn device() -> seal_opencl::cl::DeviceEntry {
    seal_opencl::config::Config::from_env()
        .map(|c| c.device)
        .and_then(|s| s.resolve())
        .expect("an OpenCL device")
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Lines of the log at `level` (the formatter writes a timestamp, then the level).
fn lines_at<'a>(stderr: &'a str, level: &str) -> Vec<&'a str> {
    stderr
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some(level))
        .collect()
}

child_test! {
    /// `SEAL_OPENCL_LOG=info`: the device chosen and "backend ready" naming the device.
    fn info_names_the_device_and_the_backend_ready() {
        install();
    }
    parent(child) {
        let out = run_child_output(child, &[(LOG, "info")]);
        let stderr = stderr_of(&out);
        let device = device();
        let ready: Vec<&str> = lines_at(&stderr, "INFO")
            .into_iter()
            .filter(|l| l.contains("seal-opencl backend ready"))
            .collect();
        assert_eq!(ready.len(), 1, "one backend-ready line:\n{stderr}");
        assert!(
            ready[0].contains(&device.device_name),
            "the backend-ready line names {}:\n{stderr}",
            device.device_name
        );
        assert!(
            lines_at(&stderr, "INFO")
                .iter()
                .any(|l| l.contains("OpenCL device chosen") && l.contains(&device.to_string())),
            "the device chosen ({device}):\n{stderr}"
        );
        assert!(lines_at(&stderr, "DEBUG").is_empty(), "{stderr}");
    }
}

child_test! {
    /// The default (`warn`, here as an empty value so that a `SEAL_OPENCL_LOG` of the parent's
    /// environment does not leak in): a CPU fallback of an operation on a marked operand is one
    /// warning naming the operation, however often it runs; routed operations and the setup
    /// print nothing.
    fn the_default_shows_a_cpu_fallback_once_and_nothing_else() {
        let fx = Fixture::new();
        let a = fx.encrypt(&mut rng());
        // Routed operations at the default level log nothing.
        let mut gpu = resident(&fx, &a);
        fx.evaluator.transform_from_ntt_inplace(&mut gpu).unwrap();
        assert!(!gpu.is_ntt_form());
        // SEAL multiplies operands not in NTT form on the CPU (a CKKS plaintext not in NTT form
        // must be empty: the product is zero, so transparent, and SEAL throws after the CPU
        // multiply).
        let empty = Plaintext::new().unwrap();
        for _ in 0..2 {
            let mut x = gpu.clone();
            let err = fx
                .evaluator
                .multiply_plain_inplace(&mut x, &empty)
                .expect_err("a transparent product");
            assert_eq!(err.kind(), seal_opencl::ErrorKind::Logic, "{err}");
        }
        assert_eq!(
            seal_opencl::ffi::cpu_fallbacks(),
            vec![FALLBACK.to_string()]
        );
    }
    parent(child) {
        let out = run_child_output(child, &[(LOG, "")]);
        let stderr = stderr_of(&out);
        let warnings = lines_at(&stderr, "WARN");
        assert_eq!(
            warnings.iter().filter(|l| l.contains(FALLBACK)).count(),
            1,
            "one warning naming {FALLBACK:?}:\n{stderr}"
        );
        assert!(
            !stderr.contains("backend ready"),
            "no info line at the default level:\n{stderr}"
        );
        assert!(lines_at(&stderr, "INFO").is_empty(), "{stderr}");
        assert!(lines_at(&stderr, "DEBUG").is_empty(), "{stderr}");
    }
}

child_test! {
    /// An unrecognised value makes installing the backend fail, listing the accepted values.
    fn an_unknown_log_level_is_refused() [(LOG, "loud")] {
        let err = seal_opencl::ffi::install_backend().unwrap_err().to_string();
        for value in [LOG, "loud", "error", "warn", "info", "debug"] {
            assert!(err.contains(value), "{err}");
        }
    }
}

child_test! {
    /// A Rust host that installed its own global subscriber keeps it: the backend's events go
    /// there, and the library writes nothing to stderr itself.
    fn a_host_subscriber_is_kept() {
        let collected = Collected::default();
        let writer = collected.clone();
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::INFO)
            .with_writer(move || writer.clone())
            .init();
        install();
        let text = String::from_utf8_lossy(&collected.0.lock().unwrap()).into_owned();
        assert!(text.contains("seal-opencl backend ready"), "{text}");
    }
    parent(child) {
        let out = run_child_output(child, &[(LOG, "debug")]);
        let stderr = stderr_of(&out);
        assert!(
            !stderr.contains("backend ready"),
            "the library installed a second subscriber:\n{stderr}"
        );
    }
}

/// Collects what a `fmt` subscriber writes.
#[derive(Clone, Default)]
struct Collected(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Collected {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
