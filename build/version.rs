//! Which SEAL a source tree holds, and whether this crate has a patch series for it.
//!
//! Shared by build.rs and by the test target `tests/seal_patch.rs` (both include this file with
//! `#[path]`); it reads no file itself.

/// The SEAL versions with a patch series in `seal-patch/VERSION/`.
pub const SUPPORTED_SEAL_VERSIONS: &[&str] = &["4.0.0", "4.4.3"];

/// The version of the `project(SEAL VERSION x.y.z ...)` line of SEAL's CMakeLists.txt, checked
/// against [`SUPPORTED_SEAL_VERSIONS`]; the error names the supported versions.
pub fn seal_version(cmakelists: &str) -> Result<String, String> {
    let version = cmakelists
        .lines()
        .map(str::trim)
        .find_map(|line| {
            let args = line.strip_prefix("project(")?;
            let mut words = args.split_whitespace();
            (words.next()? == "SEAL" && words.next()? == "VERSION").then(|| words.next())?
        })
        .map(|v| v.trim_end_matches(')').to_string())
        .ok_or("it has no `project(SEAL VERSION ...)` line")?;
    if !SUPPORTED_SEAL_VERSIONS.contains(&version.as_str()) {
        return Err(format!(
            "it is SEAL {version}; seal-opencl has patch series for SEAL {} only \
             (4.4.3 recommended: upstream microsoft/SEAL at tag v4.4.3)",
            SUPPORTED_SEAL_VERSIONS.join(" and ")
        ));
    }
    Ok(version)
}
