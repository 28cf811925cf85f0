//! Applies the SEAL patch series in pure Rust, so no `patch` binary is needed.
//!
//! Shared by build.rs and by the test target `tests/seal_patch.rs` (both include this
//! file with `#[path]`); it touches no file system itself: the caller passes a loader
//! for the original files and gets back the new content of every file the series
//! touched, so tests run on strings.
//!
//! A patch is a unified diff (as `git diff` or `git format-patch` writes it) that may
//! cover several files and may start with a free-text description. Paths are taken
//! like `patch -p1`: the first component (`a/`, `b/`) is dropped. `/dev/null` on the
//! old side creates a file, on the new side deletes it. Hunks must match exactly (no
//! fuzz); diffy finds them at a shifted line number if lines were added above.

use std::collections::BTreeMap;
use std::fmt;

/// Why the series did not apply; names the patch and, where one is involved, the file.
#[derive(Debug, PartialEq, Eq)]
pub struct PatchError {
    pub patch: String,
    pub file: Option<String>,
    pub reason: String,
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.file {
            Some(file) => write!(f, "seal-patch/{}: {}: {}", self.patch, file, self.reason),
            None => write!(f, "seal-patch/{}: {}", self.patch, self.reason),
        }
    }
}

impl std::error::Error for PatchError {}

/// The patch file names of a `series` file, in order: one per line, `#` starts a
/// comment, blank lines are ignored.
pub fn parse_series(series: &str) -> Vec<String> {
    series
        .lines()
        .map(|line| line.split('#').next().unwrap_or("").trim())
        .filter(|name| !name.is_empty())
        .map(str::to_string)
        .collect()
}

/// Applies `patches` (name, text) in order.
///
/// `load(path)` returns the original content of a tree file, `Ok(None)` when the tree
/// has no such file. Returns every touched path (relative, `/`-separated) with its final
/// content, `None` for a file the series deleted.
pub fn apply_series<F>(
    patches: &[(String, String)],
    mut load: F,
) -> Result<BTreeMap<String, Option<String>>, PatchError>
where
    F: FnMut(&str) -> Result<Option<String>, String>,
{
    let mut touched: BTreeMap<String, Option<String>> = BTreeMap::new();
    for (name, text) in patches {
        let fail = |file: Option<&str>, reason: String| PatchError {
            patch: name.clone(),
            file: file.map(str::to_string),
            reason,
        };
        let files = split_files(text).map_err(|reason| fail(None, reason))?;
        if files.is_empty() {
            return Err(fail(None, "contains no file diff".into()));
        }
        for file in files {
            let path = match (&file.old_path, &file.new_path) {
                (_, Some(p)) | (Some(p), None) => p.clone(),
                (None, None) => {
                    return Err(fail(None, "a diff goes from /dev/null to /dev/null".into()))
                }
            };
            check_relative(&path).map_err(|reason| fail(Some(&path), reason))?;
            let current = match touched.get(&path) {
                Some(content) => content.clone(),
                None => load(&path).map_err(|reason| fail(Some(&path), reason))?,
            };
            let base = match (&file.old_path, current) {
                (None, None) => String::new(),
                (None, Some(_)) => {
                    return Err(fail(
                        Some(&path),
                        "creates a file that already exists".into(),
                    ))
                }
                (Some(_), Some(content)) => content,
                (Some(_), None) => {
                    return Err(fail(Some(&path), "file not found in the SEAL tree".into()))
                }
            };
            let parsed =
                diffy::Patch::from_str(file.text).map_err(|e| fail(Some(&path), e.to_string()))?;
            let patched = diffy::apply(&base, &parsed)
                .map_err(|e| fail(Some(&path), format!("{e}: its context is not in the file")))?;
            let result = if file.new_path.is_none() {
                if !patched.is_empty() {
                    return Err(fail(
                        Some(&path),
                        "deletes the file but leaves lines in it".into(),
                    ));
                }
                None
            } else {
                Some(patched)
            };
            touched.insert(path, result);
        }
    }
    Ok(touched)
}

/// A patch must stay inside the SEAL tree.
fn check_relative(path: &str) -> Result<(), String> {
    if path.is_empty()
        || path.starts_with('/')
        || path.split('/').any(|c| c == ".." || c.is_empty())
    {
        return Err("path must be relative to the SEAL tree, without `..`".into());
    }
    Ok(())
}

/// One file's part of a (possibly multi-file) unified diff.
#[derive(Debug)]
struct FileDiff<'a> {
    old_path: Option<String>,
    new_path: Option<String>,
    /// From the `--- ` line through the last hunk line, as diffy parses it.
    text: &'a str,
}

/// Splits a unified diff into per-file parts.
///
/// Hunk bodies are consumed by their line counts rather than by looking for the next
/// `--- ` line, because a deleted line that itself starts with `-- ` would look like a
/// file header.
fn split_files(text: &str) -> Result<Vec<FileDiff<'_>>, String> {
    let mut lines = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        lines.push((offset, line));
        offset += line.len();
    }
    let content = |line: &str| line.trim_end_matches(['\n', '\r']).to_string();

    let mut files = Vec::new();
    // (start offset, old path, new path, whether a hunk was seen)
    let mut current: Option<(usize, Option<String>, Option<String>, bool)> = None;
    let mut close = |current: &mut Option<(usize, Option<String>, Option<String>, bool)>,
                     end: usize| {
        if let Some((start, old_path, new_path, has_hunk)) = current.take() {
            if !has_hunk {
                return Err(format!(
                    "the diff of {} has no hunk",
                    new_path.or(old_path).unwrap_or_default()
                ));
            }
            files.push(FileDiff {
                old_path,
                new_path,
                text: &text[start..end],
            });
        }
        Ok(())
    };

    let mut i = 0;
    while i < lines.len() {
        let (start, line) = lines[i];
        let next_is_new = lines.get(i + 1).is_some_and(|(_, l)| l.starts_with("+++ "));
        if line.starts_with("--- ") && next_is_new {
            close(&mut current, start)?;
            let old_path = header_path(&content(&line[4..]));
            let new_path = header_path(&content(&lines[i + 1].1[4..]));
            current = Some((start, old_path, new_path, false));
            i += 2;
        } else if line.starts_with("@@ ") {
            let Some(file) = current.as_mut() else {
                return Err(format!(
                    "hunk `{}` comes before any `---`/`+++` file header",
                    content(line)
                ));
            };
            file.3 = true;
            let (mut old_left, mut new_left) = hunk_counts(&content(line))?;
            i += 1;
            while old_left > 0 || new_left > 0 {
                let Some((_, body)) = lines.get(i) else {
                    return Err(format!(
                        "hunk `{}` ends before its line counts are met",
                        content(line)
                    ));
                };
                match body.as_bytes().first() {
                    Some(b' ') if old_left > 0 && new_left > 0 => {
                        old_left -= 1;
                        new_left -= 1;
                    }
                    Some(b'-') if old_left > 0 => old_left -= 1,
                    Some(b'+') if new_left > 0 => new_left -= 1,
                    Some(b'\\') => {}
                    _ => {
                        return Err(format!(
                            "line `{}` does not fit hunk `{}` (blank context lines must keep their leading space)",
                            content(body),
                            content(line)
                        ))
                    }
                }
                i += 1;
            }
            // "\ No newline at end of file" after the hunk's last line.
            while lines.get(i).is_some_and(|(_, l)| l.starts_with('\\')) {
                i += 1;
            }
        } else {
            // Description, `diff --git`, `index`, mode lines or a mail signature: the
            // current file's hunks are over.
            close(&mut current, start)?;
            i += 1;
        }
    }
    close(&mut current, text.len())?;
    Ok(files)
}

/// The tree path a `---`/`+++` header names: a trailing timestamp and the first path
/// component are dropped (`patch -p1`); `/dev/null` is no file.
fn header_path(header: &str) -> Option<String> {
    let name = header.split('\t').next().unwrap_or("").trim();
    if name == "/dev/null" {
        return None;
    }
    Some(
        name.split_once('/')
            .map_or(name, |(_, rest)| rest)
            .to_string(),
    )
}

/// The old and new line counts of a `@@ -a,b +c,d @@` header (a missing count is 1).
fn hunk_counts(header: &str) -> Result<(usize, usize), String> {
    let bad = || format!("malformed hunk header `{header}`");
    let ranges = header
        .strip_prefix("@@ ")
        .and_then(|rest| rest.split_once(" @@"))
        .map(|(ranges, _)| ranges)
        .ok_or_else(bad)?;
    let (old, new) = ranges.split_once(' ').ok_or_else(bad)?;
    let count = |range: &str, sign: char| -> Result<usize, String> {
        let range = range.strip_prefix(sign).ok_or_else(bad)?;
        match range.split_once(',') {
            Some((_, n)) => n.parse().map_err(|_| bad()),
            None => range.parse::<usize>().map(|_| 1).map_err(|_| bad()),
        }
    };
    Ok((count(old, '-')?, count(new, '+')?))
}
