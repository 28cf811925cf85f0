//! Device choice (the `device` setting, `SEAL_OPENCL_DEVICE`): `gpu` | `cpu` | `P:D`;
//! unset means the first GPU of any platform, else the first CPU device (PoCL on CI).

use ocl::flags::DeviceType;

use crate::error::{Error, Result};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceSelector {
    /// First GPU, else first CPU.
    Default,
    Gpu,
    Cpu,
    /// Platform index, device index (as `clinfo -l` numbers them).
    Index(usize, usize),
}

/// One device as enumerated on this machine.
#[derive(Clone, Debug)]
pub struct DeviceEntry {
    pub platform_index: usize,
    pub device_index: usize,
    pub platform: ocl::Platform,
    pub device: ocl::Device,
    pub platform_name: String,
    pub device_name: String,
    pub is_gpu: bool,
    pub is_cpu: bool,
}

impl std::fmt::Display for DeviceEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match (self.is_gpu, self.is_cpu) {
            (true, _) => "GPU",
            (_, true) => "CPU",
            _ => "other",
        };
        write!(
            f,
            "{}:{} {} / {} ({kind})",
            self.platform_index, self.device_index, self.platform_name, self.device_name
        )
    }
}

impl DeviceSelector {
    /// The device this selector names among the devices of this machine.
    pub fn resolve(&self) -> Result<DeviceEntry> {
        let all = list_devices()?;
        let found = match self {
            DeviceSelector::Default => all
                .iter()
                .find(|d| d.is_gpu)
                .or_else(|| all.iter().find(|d| d.is_cpu)),
            DeviceSelector::Gpu => all.iter().find(|d| d.is_gpu),
            DeviceSelector::Cpu => all.iter().find(|d| d.is_cpu),
            DeviceSelector::Index(p, d) => all
                .iter()
                .find(|e| e.platform_index == *p && e.device_index == *d),
        };
        found.cloned().ok_or_else(|| Error::NoDevice {
            wanted: self.to_string(),
            available: describe(&all),
        })
    }
}

/// As the `device` setting writes it.
impl std::fmt::Display for DeviceSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceSelector::Default => f.write_str("first GPU, else first CPU"),
            DeviceSelector::Gpu => f.write_str("gpu"),
            DeviceSelector::Cpu => f.write_str("cpu"),
            DeviceSelector::Index(p, d) => write!(f, "{p}:{d}"),
        }
    }
}

impl std::str::FromStr for DeviceSelector {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let s = s.trim();
        match s.to_ascii_lowercase().as_str() {
            "gpu" => return Ok(DeviceSelector::Gpu),
            "cpu" => return Ok(DeviceSelector::Cpu),
            _ => {}
        }
        let bad = || Error::BadDeviceSelector(s.to_string());
        let (p, d) = s.split_once(':').ok_or_else(bad)?;
        Ok(DeviceSelector::Index(
            p.trim().parse().map_err(|_| bad())?,
            d.trim().parse().map_err(|_| bad())?,
        ))
    }
}

/// Every device of every platform, numbered as `clinfo -l` numbers them.
pub fn list_devices() -> Result<Vec<DeviceEntry>> {
    // The ICD loader and PoCL initialise themselves on the first clGetPlatformIDs; two
    // threads doing that at once were seen to get an empty list on PoCL, so enumeration
    // is serialised. No ICD at all yields an empty list, reported as "no device".
    static ENUMERATION: parking_lot::Mutex<()> = parking_lot::Mutex::new(());
    let _guard = ENUMERATION.lock();
    let platforms = ocl::Platform::list();
    let mut out = Vec::new();
    for (pi, platform) in platforms.into_iter().enumerate() {
        let platform_name = platform.name().unwrap_or_else(|_| "?".into());
        let devices = match ocl::Device::list_all(platform) {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!(platform = %platform_name, error = %e, "cannot list devices");
                continue;
            }
        };
        for (di, device) in devices.into_iter().enumerate() {
            let ty = device_info!(device, Type).unwrap_or(DeviceType::empty());
            out.push(DeviceEntry {
                platform_index: pi,
                device_index: di,
                platform,
                device,
                platform_name: platform_name.clone(),
                device_name: device.name().unwrap_or_else(|_| "?".into()),
                is_gpu: ty.contains(DeviceType::GPU),
                is_cpu: ty.contains(DeviceType::CPU),
            });
        }
    }
    Ok(out)
}

fn describe(all: &[DeviceEntry]) -> String {
    if all.is_empty() {
        return "  (no OpenCL platform or device found: is an ICD such as pocl-opencl-icd installed?)"
            .into();
    }
    all.iter().map(|d| format!("  {d}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selector_parses() {
        assert_eq!(
            "gpu".parse::<DeviceSelector>().unwrap(),
            DeviceSelector::Gpu
        );
        assert_eq!(
            " CPU ".parse::<DeviceSelector>().unwrap(),
            DeviceSelector::Cpu
        );
        assert_eq!(
            "1:0".parse::<DeviceSelector>().unwrap(),
            DeviceSelector::Index(1, 0)
        );
        for bad in ["", "fpga", "1", "1:", ":2", "a:b", "1:2:3"] {
            assert!(
                matches!(
                    bad.parse::<DeviceSelector>(),
                    Err(Error::BadDeviceSelector(_))
                ),
                "{bad:?} should be rejected"
            );
        }
    }
}
