//! Real-kernel mode end to end (`make test-kernel`, part of `make test`):
//! fetch Debian's newest 7.2.x, boot the same short scenario twice and
//! check that the results are well formed and byte-identical, then boot
//! the same image by path and check the result is the same again; then
//! sweep it over `--kernel sim,7.2`; boot a two-node SMT machine as that
//! machine.
//! Ignored by a plain `cargo test`: it needs QEMU and the package archive.
//! Nothing here compares with committed kernel numbers (the archive
//! moves), but the committed references must name the guest built here.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

fn eevdf(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_eevdf"))
        .args(args)
        .output()
        .expect("run eevdf");
    assert!(
        out.status.success(),
        "eevdf {}: {}\n{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8 output")
}

fn smoke() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/kernel/smoke.scn")
        .display()
        .to_string()
}

fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

#[test]
#[ignore = "boots a real kernel under QEMU (make test-kernel)"]
fn a_kernel_run_is_well_formed_and_replays_byte_for_byte() {
    // `kernel fetch` prints the release and the image's path.
    let fetched = eevdf(&["kernel", "fetch", "7.2"]);
    let (release, image) = fetched.trim().split_once(' ').expect("release and path");
    assert!(release.starts_with("7.2."), "fetched {release}");
    eprintln!("kernel: {release}");

    let scn = smoke();
    let args = ["kernel", "run", &scn, "--kernel", "7.2", "--format", "json"];
    let first = eevdf(&args);
    let second = eevdf(&args);
    assert_eq!(first, second, "identical inputs, different kernel runs");

    let v = json(&first);
    assert_eq!(v["schema"], "eevdf.result.v1");
    let src = &v["source"];
    assert_eq!(src["kind"], "kernel");
    assert_eq!(src["kernel"], release);
    assert!(src["uname"].as_str().unwrap().starts_with("7.2."), "{src}");
    assert!(
        src["features"].as_str().unwrap().contains("PLACE_LAG"),
        "{src}"
    );
    assert_eq!(src["guest_sha256"].as_str().unwrap().len(), 64);
    assert_eq!(src["kernel_sha256"].as_str().unwrap().len(), 64);
    eprintln!("source: {src}");

    // 3 s of a 1 ms timer: 3000 wakeups, give or take the edges.
    let ct = &v["by_name"]["ct"];
    let samples = ct["samples"].as_u64().unwrap();
    assert!((2970..=3030).contains(&samples), "ct samples {samples}");
    let lat = &ct["latency_us"];
    let (p50, max) = (lat["p50"].as_f64().unwrap(), lat["max"].as_f64().unwrap());
    assert!(p50 > 1.0 && p50 <= max, "ct latency {lat}");
    // The hog gets most of the CPU, the timer about 2 %.
    let hog_ms = v["by_name"]["hog"]["cpu_ms"].as_f64().unwrap();
    assert!(hog_ms > 2000.0 && hog_ms < 3100.0, "hog cpu {hog_ms} ms");
    assert!(v["totals"]["switches"].as_u64().unwrap() >= samples);

    // The same image given by path: the same trajectory.
    let third = eevdf(&["kernel", "run", &scn, "--kernel", image, "--format", "json"]);
    let t = json(&third);
    assert_eq!(t["by_name"], v["by_name"], "--kernel PATH ran differently");
    assert_eq!(t["source"]["kernel_sha256"], src["kernel_sha256"]);

    sweep_on_the_kernel(&scn, &first);
}

/// A machine with SMT and two NUMA nodes boots as that machine: the
/// run fails unless the kernel built the simulator's sched domains, a
/// pinned task runs on the CPU the scenario names (QEMU numbers a core's
/// threads 0 and 1, the simulator 0 and 4) and per-CPU results come back
/// in the simulator's numbers. A machine QEMU cannot give is refused.
#[test]
#[ignore = "boots a real kernel under QEMU (make test-kernel)"]
fn a_topology_boots_as_the_simulators_machine() {
    let dir = std::env::temp_dir().join(format!("eevdf-topo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scn = dir.join("numa.scn");
    std::fs::write(
        &scn,
        "eevdf-scenario v1\nmachine custom nodes=2 cores=2 smt=2\nduration 300ms\n\
         task hog kind=hog cpus=4\nend\n",
    )
    .unwrap();
    let scn = scn.display().to_string();
    let out = eevdf(&["kernel", "run", &scn, "--kernel", "7.2", "--format", "json"]);
    let v = json(&out);
    assert_eq!(v["source"]["cpus"], 8);
    let busy: Vec<f64> = v["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["busy_ms"].as_f64().unwrap())
        .collect();
    assert_eq!(busy.len(), 8);
    assert!(busy[4] > 250.0, "the hog runs on CPU 4: {busy:?}");
    for (cpu, ms) in busy.iter().enumerate().filter(|(c, _)| *c != 4) {
        assert!(*ms < 50.0, "CPU {cpu} is busy {ms} ms: {busy:?}");
    }
    let hog = v["by_name"]["hog"]["cpu_ms"].as_f64().unwrap();
    assert!(hog > 250.0, "hog cpu {hog} ms");

    std::fs::write(
        dir.join("rb5.scn"),
        "eevdf-scenario v1\nmachine rb5\ntask a kind=hog\nend\n",
    )
    .unwrap();
    let rb5 = dir.join("rb5.scn").display().to_string();
    let refused = Command::new(env!("CARGO_BIN_EXE_eevdf"))
        .args(["kernel", "run", &rb5, "--kernel", "7.2"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "rb5 is refused");
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("capacities other than 1024"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The guest's burner burns what a task asks for: an rt-app burst of
/// 8,177 us holds the CPU for its run plus the interrupts inside it,
/// never less, with cyclictest and another rt-app beside it. The
/// burner calibrated by the thread's CPU clock (the guest of 4f511025)
/// burnt 8,114 us there.
#[test]
#[ignore = "boots a real kernel under QEMU (make test-kernel)"]
fn a_burst_burns_its_whole_run_beside_other_threads() {
    let scn = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/kernel/burner.scn");
    let trace = std::env::temp_dir().join(format!("eevdf-burner-{}.trace", std::process::id()));
    let (scn, tr) = (scn.display().to_string(), trace.display().to_string());
    eevdf(&[
        "kernel", "run", &scn, "--kernel", "7.2", "--trace", &tr, "--format", "json",
    ]);
    let text = std::fs::read_to_string(&trace).expect("the trace");
    let _ = std::fs::remove_file(&trace);
    let bursts = rt_bursts_us(&text);
    assert_eq!(bursts.len(), 2, "two rt-app tasks: {:?}", bursts.keys());
    for (pid, mut b) in bursts {
        // The first and last bursts may be cut by the window.
        // About 75 whole bursts in 2 s; fewer if they overlap.
        assert!(b.len() > 40, "rt pid {pid}: {} bursts", b.len());
        b.sort_unstable();
        let median = b[b.len() / 2];
        assert!(
            (8_177..=8_300).contains(&median),
            "rt pid {pid}: a burst of 8177 us held the CPU {median} us at the median"
        );
        // The trace's microseconds round each switch.
        assert!(
            b[0] >= 8_170,
            "rt pid {pid}: a burst held the CPU {} us",
            b[0]
        );
    }
}

/// Each `rt` task's on-CPU time per burst (us, whole bursts only: from
/// the first sleep on), from the trace's `sched_switch` lines.
fn rt_bursts_us(trace: &str) -> BTreeMap<u32, Vec<u64>> {
    let field = |l: &str, key: &str| -> Option<String> {
        let at = l.find(key)? + key.len();
        Some(l[at..].split_whitespace().next()?.to_string())
    };
    let rt_pid = |l: &str, side: &str| -> Option<u32> {
        let comm = field(l, &format!("{side}_comm="))?;
        let pid = field(l, &format!("{side}_pid="))?;
        comm.starts_with("rt.").then(|| pid.parse().expect("a pid"))
    };
    // Per pid: when it last went on the CPU, and the time held in the
    // current burst (`None` until its first sleep: a cut burst).
    let mut since: BTreeMap<u32, u64> = BTreeMap::new();
    let mut held: BTreeMap<u32, Option<u64>> = BTreeMap::new();
    let mut out: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    for l in trace.lines().filter(|l| l.contains(" sched_switch: ")) {
        // "SECONDS.MICROSECONDS: sched_switch: ..." in us.
        let us: u64 = l
            .split(": sched_switch")
            .next()
            .and_then(|h| h.split_whitespace().last())
            .map(|t| t.replace('.', ""))
            .and_then(|t| t.parse().ok())
            .expect("a timestamp");
        if let Some(pid) = rt_pid(l, "prev") {
            let h = held.entry(pid).or_insert(None);
            if let (Some(h), Some(t0)) = (h.as_mut(), since.get(&pid)) {
                *h += us - t0;
            }
            if field(l, "prev_state=").is_some_and(|s| s.starts_with('S')) {
                out.entry(pid).or_default().extend(h.take());
                *h = Some(0);
            }
        }
        if let Some(pid) = rt_pid(l, "next") {
            since.insert(pid, us);
        }
    }
    out
}

/// The committed kernel references (`tests/kernel-ref/`) were made with
/// the guest this checkout builds: the guest's binary (its code, its
/// dependencies and the compiler) is an input of every kernel number in
/// docs/fidelity.md, so a change to it comes with fresh references.
#[test]
#[ignore = "builds the guest runner (make test-kernel)"]
fn the_kernel_references_come_from_this_guest() {
    let built = eevdf(&["kernel", "guest"]);
    // "PATH SHA256": the path may hold spaces, the hash does not.
    let guest = built
        .split_whitespace()
        .last()
        .expect("the guest's path and sha256");
    assert_eq!(guest.len(), 64, "{built}");
    let refs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/kernel-ref");
    let stale = eevdf_kernel::ref_guests::stale_references(&refs, guest).expect("the references");
    assert!(
        stale.is_empty(),
        "this checkout's guest is {}, but kernel references were made with others: {}; \
         refresh them with `{}`",
        &guest[..8],
        stale.join("; "),
        eevdf_kernel::ref_guests::REFRESH
    );
}

/// `eevdf sweep --kernel sim,7.2`: the kernel's cell is `kernel run`'s
/// result byte for byte, a rerun boots nothing (the cache holds one
/// boot) and prints the same, and a simulator-only feature skips the
/// kernel's cell without a boot.
fn sweep_on_the_kernel(scn: &str, kernel_run: &str) {
    let cache = std::env::temp_dir().join(format!("eevdf-kernel-sweep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let cache_arg = cache.to_string_lossy().into_owned();
    let sweep = |extra: &[&str]| {
        let mut a = vec!["sweep", scn, "--kernel-cache", &cache_arg, "--jobs", "2"];
        a.extend(extra);
        eevdf(&a)
    };
    let boots = || std::fs::read_dir(&cache).map_or(0, |d| d.count());
    let out = sweep(&["--kernel", "sim,7.2"]);
    let lines: Vec<serde_json::Value> = out.lines().map(json).collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[0]["axes"], serde_json::json!([["kernel", "sim"]]));
    assert!(lines[0]["result"].get("source").is_none(), "the sim cell");
    assert_eq!(lines[1]["axes"], serde_json::json!([["kernel", "7.2"]]));
    assert_eq!(lines[1]["result"], json(kernel_run), "the kernel cell");
    assert_eq!(boots(), 1);
    assert_eq!(sweep(&["--kernel", "sim,7.2"]), out, "a cached rerun");
    assert_eq!(boots(), 1, "the rerun booted");

    let out = sweep(&["--kernel", "7.2", "--features-axis", "PS_CLEAR_BUDDY"]);
    let skipped = json(out.trim_end());
    let why = skipped["skipped"].as_str().unwrap_or_default();
    assert!(why.contains("PS_CLEAR_BUDDY is simulator-only"), "{out}");
    assert_eq!(boots(), 1, "a simulator-only cell booted");
    let _ = std::fs::remove_dir_all(&cache);
}
