//! Data-driven placement tests: every `tests/placement/*.txt` describes a
//! machine, the state of its CPUs and a waking (or forked) task, and
//! states the CPU `select_task_rq_fair` must choose and the rule that
//! chose it. Format (one directive per line, `#` comments):
//!
//! ```text
//! machine xeon-4314-2s          # a preset, or flat:N, or
//! machine custom clusters=2 cores=4 smt=1 llcs=1 nodes=1
//! profile v6.12                 # re-base on a profile (default v7.1)
//! features SIS_SLICE            # feature tokens over the profile
//! scan 3                        # SIS_UTIL budget of every LLC
//! eas on                        # energy-aware scheduling
//! busy 0-15,32-47 load=1024 util=1024 slice=2800us nr=1
//! busy 20 slice=16ms            # later lines override earlier ones
//! idle 20 util=200              # back to idle (util: blocked tasks')
//! wake prev=0 waker=5 util=100 utilest=120 load=1024 slice=2800us [sync] [fork]
//!      [allowed=0-3] [recent=7] [flips=8/8] => 32 IdleSmtSibling
//! ```
//! CPUs not named in a `busy` line are idle. A `wake` with `prev=` is a
//! fresh task; one without wakes the last task again, from the CPU its
//! last wakeup chose and with the `recent_used_cpu` that left it.

use std::fs;
use std::path::Path;

use eevdf_core::{FeatureSet, Profile};
use eevdf_sim::placement::{
    select_task_rq_fair, CpuView, CpuViews, LlcState, MachineView, WakeCtx,
};
use eevdf_sim::topology::{CustomMachine, MachineSpec, Topology};

fn cpus(list: &str) -> Vec<u32> {
    let mut v = Vec::new();
    for part in list.split(',') {
        match part.split_once('-') {
            Some((a, b)) => v.extend(a.parse::<u32>().unwrap()..=b.parse::<u32>().unwrap()),
            None => v.push(part.parse().unwrap()),
        }
    }
    v
}

fn ns(s: &str) -> u64 {
    let (n, m) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1_000_000)
    } else if let Some(n) = s.strip_suffix("us") {
        (n, 1_000)
    } else {
        (s.trim_end_matches("ns"), 1)
    };
    n.parse::<u64>().unwrap() * m
}

fn kv<'a>(words: &[&'a str], key: &str) -> Option<&'a str> {
    words
        .iter()
        .find_map(|w| w.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
}

fn custom(words: &[&str]) -> MachineSpec {
    let n = |k: &str, d: u32| kv(words, k).map_or(d, |x| x.parse().unwrap());
    MachineSpec::Custom(CustomMachine {
        nodes: n("nodes", 1),
        llcs_per_package: n("llcs", 1),
        clusters_per_llc: n("clusters", 1),
        cores_per_cluster: n("cores", 1),
        smt: n("smt", 1),
        capacities: kv(words, "caps").map_or(Vec::new(), cpus),
        ..CustomMachine::smp(1, 1)
    })
}

fn run(path: &Path) -> Result<(), String> {
    let text = fs::read_to_string(path).unwrap();
    let mut topo: Option<Topology> = None;
    let mut fs = FeatureSet::new(Profile::V7_1);
    let mut views: Vec<CpuView> = Vec::new();
    let mut llc = LlcState::default();
    let mut eas = false;
    // The waking task's state carried from one wakeup to the next.
    let mut last_cpu: Option<u32> = None;
    let mut recent: Option<u32> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap().trim();
        if line.is_empty() {
            continue;
        }
        let err = |m: String| format!("{}:{}: {m}\n    {}", path.display(), n + 1, raw.trim());
        let (cmd, expect) = match line.split_once("=>") {
            Some((c, e)) => (c.trim(), Some(e.trim())),
            None => (line, None),
        };
        let words: Vec<&str> = cmd.split_whitespace().collect();
        match words[0] {
            "machine" => {
                let spec = match words[1].strip_prefix("flat:") {
                    Some(n) => MachineSpec::Flat(n.parse().unwrap()),
                    None if words[1] == "custom" => custom(&words),
                    None => MachineSpec::Preset(words[1].to_string()),
                };
                let t = Topology::build(&spec).map_err(err)?;
                views = vec![
                    CpuView {
                        idle: true,
                        ..CpuView::default()
                    };
                    t.nr_cpus() as usize
                ];
                llc.nr_idle_scan = (0..t.nr_cpus()).map(|c| t.llc_size(c)).collect();
                topo = Some(t);
            }
            "profile" => {
                let p = Profile::parse(words[1]).ok_or_else(|| err("unknown profile".into()))?;
                fs = FeatureSet::new(p);
            }
            "features" => {
                for t in &words[1..] {
                    fs.apply(t).map_err(|e| err(e.to_string()))?;
                }
            }
            "eas" => eas = words[1] == "on",
            "scan" => {
                let n: u32 = words[1].parse().unwrap();
                llc.nr_idle_scan.iter_mut().for_each(|x| *x = n);
            }
            "idle" => {
                for c in cpus(words[1]) {
                    views[c as usize] = CpuView {
                        idle: true,
                        util: kv(&words, "util").map_or(0, |x| x.parse().unwrap()),
                        ..CpuView::default()
                    };
                }
            }
            "busy" => {
                for c in cpus(words[1]) {
                    let v = &mut views[c as usize];
                    v.idle = false;
                    v.nr_running = kv(&words, "nr").map_or(1, |x| x.parse().unwrap());
                    v.load = kv(&words, "load").map_or(1024, |x| x.parse().unwrap());
                    v.util = kv(&words, "util").map_or(1024, |x| x.parse().unwrap());
                    v.min_slice = Some(kv(&words, "slice").map_or(2_800_000, ns));
                }
            }
            "wake" => {
                let topo = topo
                    .as_ref()
                    .ok_or_else(|| err("wake before machine".into()))?;
                let all: Vec<u32> = (0..topo.nr_cpus()).collect();
                let allowed = kv(&words, "allowed").map_or(all, cpus);
                let flips = kv(&words, "flips").unwrap_or("0/0");
                let (wf, tf) = flips.split_once('/').unwrap();
                let again = kv(&words, "prev").is_none();
                let carried = if again { recent } else { None };
                let prev = match kv(&words, "prev") {
                    Some(x) => x.parse().unwrap(),
                    None => last_cpu.ok_or_else(|| err("the first wake needs prev=".into()))?,
                };
                let util: u64 = kv(&words, "util").map_or(100, |x| x.parse().unwrap());
                let ctx = WakeCtx {
                    waker_cpu: kv(&words, "waker").unwrap().parse().unwrap(),
                    prev_cpu: prev,
                    sync: words.contains(&"sync"),
                    fork: words.contains(&"fork"),
                    task_util: util,
                    task_util_est: kv(&words, "utilest")
                        .map_or(util, |x| x.parse().unwrap())
                        .max(util),
                    task_load: kv(&words, "load").map_or(1024, |x| x.parse().unwrap()),
                    waker_load: kv(&words, "wakerload").map_or(1024, |x| x.parse().unwrap()),
                    task_slice: kv(&words, "slice").map_or(2_800_000, ns),
                    allowed: &allowed,
                    recent_used_cpu: kv(&words, "recent").map(|x| x.parse().unwrap()).or(carried),
                    waker_flips: wf.parse().unwrap(),
                    wakee_flips: tf.parse().unwrap(),
                };
                let m = MachineView {
                    topo,
                    cpus: CpuViews::all(&views),
                    features: &fs.features,
                    profile: fs.profile,
                    llc: &llc,
                    eas,
                };
                let placed = select_task_rq_fair(&m, &ctx);
                // CPUs made as they are read decide the same.
                let cells = vec![std::cell::OnceCell::new(); views.len()];
                let make = |c: u32| views[c as usize];
                let idleness = |c: u32| (views[c as usize].idle, views[c as usize].sched_idle);
                let lazy = MachineView {
                    cpus: CpuViews::lazy(&cells, &make, &idleness),
                    ..m
                };
                assert_eq!(
                    select_task_rq_fair(&lazy, &ctx),
                    placed,
                    "{}: lazy views",
                    path.display()
                );
                let (cpu, why) = (placed.cpu, placed.reason);
                recent = placed.recent_used_cpu;
                last_cpu = Some(cpu);
                let got = format!("{cpu} {why:?}");
                let want = expect.ok_or_else(|| err("wake needs => CPU REASON".into()))?;
                if got != want {
                    return Err(err(format!("expected {want}, got {got}")));
                }
            }
            w => return Err(err(format!("unknown directive {w}"))),
        }
    }
    Ok(())
}

#[test]
fn placement_scripts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/placement");
    let mut files: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let failures: Vec<String> = files.iter().filter_map(|f| run(f).err()).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
