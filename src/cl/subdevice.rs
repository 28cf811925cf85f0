//! Device partitioning (tiles). `ocl::core::create_sub_devices` is an unimplemented stub
//! and `DeviceInfo::PartitionProperties` always answers an empty list, so both go through
//! `ocl::ffi` here.

use std::ptr;

use ocl::ffi::{self, cl_device_id, cl_device_partition_property, cl_int, cl_uint, CL_SUCCESS};

use crate::error::{Error, Result};

/// The partition schemes a device accepts (`CL_DEVICE_PARTITION_PROPERTIES`) and whether
/// its affinity-domain partitioning knows "next partitionable" (how Intel GPUs expose
/// their tiles).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartitionSupport {
    pub equally: bool,
    pub by_counts: bool,
    pub by_affinity_next_partitionable: bool,
    pub compute_units: u32,
    pub max_sub_devices: u32,
}

/// How to split one device into sub-devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartitionScheme {
    /// `CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN` with `NEXT_PARTITIONABLE`: the hardware
    /// tiles of a multi-tile GPU.
    AffinityNextPartitionable,
    /// `CL_DEVICE_PARTITION_EQUALLY`: sub-devices of this many compute units each.
    Equally { compute_units: u32 },
}

/// A sub-device created by `clCreateSubDevices`; released when dropped.
///
/// Sub-devices are reference counted by OpenCL (unlike root devices), so this owner keeps
/// the one reference we got from the driver and gives it back exactly once.
#[derive(Debug)]
pub struct SubDevice {
    device: ocl::Device,
}

impl SubDevice {
    pub fn device(&self) -> ocl::Device {
        self.device
    }
}

impl Drop for SubDevice {
    fn drop(&mut self) {
        // SAFETY: `device` is a sub-device id that clCreateSubDevices returned to us with a
        // reference count of one that only this owner holds; it is released once, here.
        let status = unsafe { ffi::clReleaseDevice(self.device.as_core().as_raw()) };
        if status != CL_SUCCESS as cl_int {
            tracing::warn!(status, "clReleaseDevice failed");
        }
    }
}

/// What partitioning `device` supports.
pub fn partition_support(device: ocl::Device) -> Result<PartitionSupport> {
    let props = device_info_words(device, ffi::CL_DEVICE_PARTITION_PROPERTIES)?;
    let has = |p: cl_uint| props.contains(&(p as cl_device_partition_property));
    let affinity = device_info!(device, PartitionAffinityDomain)
        .is_some_and(|d| d.bits() & ffi::CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE != 0);
    let compute_units = device_info!(device, MaxComputeUnits).unwrap_or(0);
    let max_sub_devices = device_info!(device, PartitionMaxSubDevices).unwrap_or(0);
    Ok(PartitionSupport {
        equally: has(ffi::CL_DEVICE_PARTITION_EQUALLY),
        by_counts: has(ffi::CL_DEVICE_PARTITION_BY_COUNTS),
        by_affinity_next_partitionable: affinity
            && has(ffi::CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN),
        compute_units,
        max_sub_devices,
    })
}

/// Splits `device` by `scheme`. The driver decides how many sub-devices come out (for
/// `Equally`, compute units / units per sub-device).
pub fn create_sub_devices(device: ocl::Device, scheme: PartitionScheme) -> Result<Vec<SubDevice>> {
    let props: [cl_device_partition_property; 3] = match scheme {
        PartitionScheme::AffinityNextPartitionable => [
            ffi::CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN as _,
            ffi::CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE as _,
            0,
        ],
        PartitionScheme::Equally { compute_units } => {
            if compute_units == 0 {
                return Err(Error::invalid(
                    "a sub-device needs at least one compute unit",
                ));
            }
            [ffi::CL_DEVICE_PARTITION_EQUALLY as _, compute_units as _, 0]
        }
    };
    let raw = device.as_core().as_raw();
    let mut count: cl_uint = 0;
    // SAFETY: `props` is a zero-terminated property list that outlives the call; asking
    // for the count only (num_devices 0, out_devices null) is the documented first step.
    let status =
        unsafe { ffi::clCreateSubDevices(raw, props.as_ptr(), 0, ptr::null_mut(), &mut count) };
    check(status, "clCreateSubDevices (count)")?;
    let mut ids: Vec<cl_device_id> = vec![ptr::null_mut(); count as usize];
    // SAFETY: `ids` has room for exactly `count` device ids, the number the driver
    // announced for the same device and properties.
    let status = unsafe {
        ffi::clCreateSubDevices(
            raw,
            props.as_ptr(),
            count,
            ids.as_mut_ptr(),
            ptr::null_mut(),
        )
    };
    check(status, "clCreateSubDevices")?;
    Ok(ids
        .into_iter()
        .map(|id| SubDevice {
            // SAFETY: the driver filled every slot with a valid, non-null sub-device id.
            device: ocl::Device::from(unsafe { ocl::core::DeviceId::from_raw(id) }),
        })
        .collect())
}

/// A device info query whose answer is an array of `intptr_t`-sized words.
fn device_info_words(
    device: ocl::Device,
    param: cl_uint,
) -> Result<Vec<cl_device_partition_property>> {
    let raw = device.as_core().as_raw();
    let mut bytes: usize = 0;
    // SAFETY: a size query (no output buffer) on a valid device id.
    let status = unsafe { ffi::clGetDeviceInfo(raw, param, 0, ptr::null_mut(), &mut bytes) };
    check(status, "clGetDeviceInfo (size)")?;
    let word = std::mem::size_of::<cl_device_partition_property>();
    let mut words: Vec<cl_device_partition_property> = vec![0; bytes.div_ceil(word)];
    // SAFETY: `words` holds at least `bytes` bytes, the size the driver announced.
    let status = unsafe {
        ffi::clGetDeviceInfo(
            raw,
            param,
            bytes,
            words.as_mut_ptr().cast(),
            ptr::null_mut(),
        )
    };
    check(status, "clGetDeviceInfo")?;
    Ok(words)
}

fn check(status: cl_int, what: &str) -> Result<()> {
    if status == CL_SUCCESS as cl_int {
        Ok(())
    } else {
        Err(Error::OpenCl(format!("{what} failed with status {status}")))
    }
}
