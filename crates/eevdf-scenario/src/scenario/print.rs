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

/// The canonical `task` line.
pub(super) fn task_line(t: &TaskSpec) -> String {
    let mut s = format!("task {} kind={}", t.name, t.workload.kind());
    let mut kv = |k: &str, v: String| {
        s.push(' ');
        s.push_str(k);
        s.push('=');
        s.push_str(&v);
    };
    if t.count != 1 {
        kv("count", t.count.to_string());
    }
    let d = fmt_duration;
    match &t.workload {
        Workload::Timer { period_ns, run_ns } => {
            kv("period", d(*period_ns));
            if *run_ns != DEFAULT_TIMER_RUN {
                kv("run", d(*run_ns));
            }
        }
        Workload::Periodic {
            run_ns,
            sleep_ns,
            period_ns,
        } => {
            kv("run", d(*run_ns));
            if period_ns.is_none() || *sleep_ns != 0 {
                kv("sleep", d(*sleep_ns));
            }
            if let Some(p) = period_ns {
                kv("period", d(*p));
            }
        }
        Workload::Hackbench {
            groups,
            fds,
            threads,
            pipe,
            loops,
            send_ns,
            recv_ns,
            pipe_msgs,
        } => {
            if *groups != DEFAULT_HB_GROUPS {
                kv("groups", groups.to_string());
            }
            if *fds != DEFAULT_HB_FDS {
                kv("fds", fds.to_string());
            }
            if *threads {
                kv("mode", "thread".to_string());
            }
            if *pipe {
                kv("ipc", "pipe".to_string());
            }
            if *loops != 0 {
                kv("loops", loops.to_string());
            }
            if *send_ns != DEFAULT_HB_MSG_NS {
                kv("send", d(*send_ns));
            }
            if *recv_ns != DEFAULT_HB_MSG_NS {
                kv("recv", d(*recv_ns));
            }
            if *pipe_msgs != default_hb_msgs(*pipe) {
                kv("pipe_msgs", pipe_msgs.to_string());
            }
        }
        Workload::Schbench {
            message_threads,
            workers,
            request_ns,
            sleep_ns,
        } => {
            if *message_threads != DEFAULT_SB_MESSAGES {
                kv("messages", message_threads.to_string());
            }
            if *workers != DEFAULT_SB_WORKERS {
                kv("workers", workers.to_string());
            }
            if *request_ns != DEFAULT_SB_REQUEST {
                kv("request", d(*request_ns));
            }
            if *sleep_ns != DEFAULT_SB_THINK {
                kv("think", d(*sleep_ns));
            }
        }
        Workload::Hog => {}
    }
    if t.nice != 0 {
        kv("nice", t.nice.to_string());
    }
    if t.policy != Policy::Normal {
        kv("policy", t.policy.name().to_string());
    }
    if let Some(v) = t.slice_ns {
        kv("slice", d(v));
    }
    if let Some(c) = &t.cpus {
        kv("cpus", fmt_cpus(c));
    }
    if let Some(g) = &t.group {
        kv("group", g.clone());
    }
    if let Some(v) = t.slack_ns {
        kv("slack", d(v));
    }
    if t.start_ns != 0 {
        kv("start", d(t.start_ns));
    }
    if let Some(p) = t.kernel_pct {
        kv("kernel", format!("{p}%"));
    }
    if let Some(v) = t.ksection_ns {
        kv("ksection", d(v));
    }
    s
}
