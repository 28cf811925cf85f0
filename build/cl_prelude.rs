//! The OpenCL sources' preludes. A program is its sources concatenated in order
//! (`src/cl/sources.rs`), so a file may use what files before it define. Each file states
//! which on its first line, `// Uses: arith.cl, ntt.cl` (or `// Uses: nothing`), and the
//! build fails where a file uses an identifier that another file defines without naming
//! that file there: a .cl file reads on its own, its prelude in its first line.
//!
//! Definitions are what a file defines at its top level: `#define NAME`, a function (a line
//! at column 0 whose identifier before its first `(` is the function's name), a struct type
//! (`} NAME;` at column 0). Uses are the identifiers of its text outside comments and string
//! literals. An identifier the file defines itself, or that several files define, counts
//! as its own or as any of those.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// The first line's prefix.
const USES: &str = "// Uses:";

/// Checks every `*.cl` file of `dir` (see the module's documentation); the error lists
/// every file that uses another's identifier without naming it, or has no `Uses` line.
pub fn check(dir: &Path) -> Result<(), String> {
    let mut files = BTreeMap::new();
    for entry in fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().is_some_and(|e| e == "cl") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let text = fs::read_to_string(&path).map_err(|e| format!("{name}: {e}"))?;
            files.insert(name, text);
        }
    }
    let mut definers: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for (name, text) in &files {
        for id in definitions(&strip(text)) {
            definers.entry(id).or_default().insert(name);
        }
    }
    let mut problems = Vec::new();
    for (name, text) in &files {
        let Some(uses) = declared_uses(text) else {
            problems.push(format!(
                "{name}: its first line is not `{USES} a.cl, b.cl` (or `{USES} nothing`)"
            ));
            continue;
        };
        for used in &uses {
            if !files.contains_key(used) {
                problems.push(format!(
                    "{name}: uses {used}, which is not a source of opencl/"
                ));
            }
        }
        let mut missing: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
        for id in identifiers(&strip(text)) {
            let Some(defined_in) = definers.get(&id) else {
                continue;
            };
            if defined_in.contains(name.as_str()) || defined_in.iter().any(|d| uses.contains(*d)) {
                continue;
            }
            let file = defined_in.iter().next().unwrap();
            missing.entry(file).or_default().insert(id);
        }
        for (file, ids) in missing {
            let ids: Vec<String> = ids.into_iter().take(5).collect();
            problems.push(format!(
                "{name}: uses {} of {file} without naming it in its `{USES}` line",
                ids.join(", ")
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// The files the first line names; None without the line.
fn declared_uses(text: &str) -> Option<BTreeSet<String>> {
    let rest = text.lines().next()?.strip_prefix(USES)?.trim();
    if rest == "nothing" {
        return Some(BTreeSet::new());
    }
    Some(
        rest.split(',')
            .map(|f| f.trim().trim_end_matches('.').to_string())
            .filter(|f| !f.is_empty())
            .collect(),
    )
}

/// `text` without comments and string literals (each replaced by a space).
fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
                out.push(' ');
            }
            '"' => {
                let mut escaped = false;
                for c in chars.by_ref() {
                    if c == '"' && !escaped {
                        break;
                    }
                    escaped = c == '\\' && !escaped;
                }
                out.push(' ');
            }
            c => out.push(c),
        }
    }
    out
}

/// The identifiers a stripped file defines at its top level.
fn definitions(text: &str) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    for line in text.lines() {
        if let Some(rest) = line.trim_start().strip_prefix("#define") {
            if let Some(id) = identifiers(rest).into_iter().next() {
                ids.insert(id);
            }
        } else if let Some(rest) = line.strip_prefix('}') {
            // `} name;` closing a typedef'd struct at the top level.
            let rest = rest.trim();
            if let Some(id) = rest.strip_suffix(';').filter(|r| is_identifier(r)) {
                ids.insert(id.to_string());
            }
        } else if line.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            // A function's name; not a qualifier's (`__kernel __attribute__((...))`).
            if let Some(open) = line.find('(') {
                if let Some(id) = identifiers(&line[..open]).into_iter().last() {
                    if !id.starts_with("__") {
                        ids.insert(id);
                    }
                }
            }
        }
    }
    ids
}

/// Every identifier of `text`, in order.
fn identifiers(text: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut current = String::new();
    let mut in_number = false;
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_alphanumeric() || c == '_' {
            if current.is_empty() && c.is_ascii_digit() {
                in_number = true;
            }
            current.push(c);
        } else {
            if !current.is_empty() && !in_number {
                ids.push(std::mem::take(&mut current));
            }
            current.clear();
            in_number = false;
        }
    }
    ids
}

fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}
