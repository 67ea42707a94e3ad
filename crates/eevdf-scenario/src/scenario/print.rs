//! Printing the canonical text of a task line and its CPU lists.

use super::*;

/// A CPU list as sorted ranges, e.g. `0-3,6`.
pub(super) fn fmt_cpus(cpus: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        let mut end = start;
        while i + 1 < cpus.len() && cpus[i + 1] == end.saturating_add(1) {
            i += 1;
            end = cpus[i];
        }
        parts.push(if end == start {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

/// The canonical `task` line: the name, then every key the table prints.
pub(super) fn task_line(t: &TaskSpec) -> String {
    let mut s = format!("task {}", t.name);
    for (k, v) in task_kvs(t) {
        s.push(' ');
        s.push_str(k);
        s.push('=');
        s.push_str(&v);
    }
    s
}
