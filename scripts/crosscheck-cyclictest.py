#!/usr/bin/env python3
"""Cross-check the project's guest timer workload against Debian's real cyclictest.

Both sides run on the same Debian kernel in the same deterministic QEMU
(1 CPU, -icount shift=1), over seeds 1..5:

  * cyclictest (rt-tests 2.4, bookworm): 4 busy-loop hogs plus
    `cyclictest -t1 -p0 --policy=other -i1000 -D 10 -h 20000 -q -m`
    (SCHED_OTHER, nice 0, default 50 us timer slack, 1 ms interval, 10 s);
    its -h histogram (1 us buckets + overflows) gives p50/p90/p99 with the
    rank rule: the smallest value whose cumulative count reaches ceil(p*N).
  * the project: `eevdf kernel run timer4hogs.scn --kernel K --seed N
    --format json`, reading by_name.ct.latency_us.p50/p90/p99.

It prints per-seed percentiles for both, the medians over seeds and whether
they agree: |p50 diff| <= 5 us, |p90 diff| and |p99 diff| <= 25% of
cyclictest's.  Exit 0 if all three hold, 1 otherwise.  At most 2 QEMUs run
at once.

    python3 scripts/crosscheck-cyclictest.py [--kernel VMLINUZ] [--eevdf BIN]

Needs qemu-system-x86_64 and apt-get/dpkg (rt-tests, busybox-static and
libnuma1 are downloaded once into a private apt tree under /tmp/xcheck; libc
and ld.so come from the host, which must be glibc-compatible with bookworm).
"""
import argparse, concurrent.futures as cf, gzip, json, math, re, statistics, subprocess, sys, time
from pathlib import Path

WORK = Path("/tmp/xcheck")
KERNEL = "/tmp/k/x72/usr/lib/modules/7.2.13+deb14-cloud-amd64/vmlinuz"
EEVDF = str(Path(__file__).resolve().parent.parent / "target/release/eevdf")
SEEDS = range(1, 6)
CYCLICTEST = "cyclictest -t1 -p0 --policy=other -i1000 -D 10 -h 20000 -q -m"
SCENARIO = """eevdf-scenario v1
machine up
duration 10s
task ct kind=timer period=1ms run=5us
task hog kind=hog count=4
end
"""
INIT = f"""#!/bin/sh
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs dev /dev
mkdir -p /dev/shm; mount -t tmpfs shm /dev/shm
for i in 1 2 3 4; do sh -c 'while :; do :; done' & done
{CYCLICTEST} >/tmp/ct.txt 2>&1
cat /tmp/ct.txt >/dev/ttyS1
poweroff -f
"""
LIBS = "/lib/x86_64-linux-gnu"


def stage():
    """Download and unpack the bookworm packages once (private apt config)."""
    x = WORK / "x"
    if (x / "usr/bin/cyclictest").exists():
        return x
    apt = WORK / "apt"
    for d in ("lists/partial", "cache/archives/partial", "debs"):
        (apt / d).mkdir(parents=True, exist_ok=True)
    uri = re.search(r"^URIs:\s*(\S+)", Path("/etc/apt/sources.list.d/debian.sources").read_text(), re.M)[1]
    (apt / "sources.list").write_text(
        f"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] {uri} bookworm main\n")
    opts = [f"-oDir::Etc::SourceList={apt}/sources.list", "-oDir::Etc::SourceParts=/dev/null",
            f"-oDir::State::Lists={apt}/lists", f"-oDir::Cache={apt}/cache"]
    subprocess.run(["apt-get", *opts, "update"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["apt-get", *opts, "download", "rt-tests", "busybox-static", "libnuma1"],
                   check=True, cwd=apt / "debs", stdout=subprocess.DEVNULL)
    for deb in (apt / "debs").glob("*.deb"):
        subprocess.run(["dpkg", "-x", str(deb), str(x)], check=True)
    return x


def cpio(entries):
    """newc archive of {path: (mode, data, rdev)}: sorted, mtime 0, uid/gid 0."""
    out = bytearray()
    def put(ino, name, mode, data=b"", rdev=(0, 0)):
        name = name.encode() + b"\0"
        fields = (ino, mode, 0, 0, 1, 0, len(data), 0, 0, *rdev, len(name), 0)
        out.extend(b"070701" + b"".join(b"%08X" % f for f in fields) + name)
        out.extend(b"\0" * (-len(out) % 4) + data)
        out.extend(b"\0" * (-len(out) % 4))
    for ino, (path, (mode, data, rdev)) in enumerate(sorted(entries.items()), 1):
        put(ino, path, mode, data, rdev)
    put(0, "TRAILER!!!", 0)
    return bytes(out)


def initrd(x):
    f = lambda p: (0o100755, Path(p).read_bytes(), (0, 0))
    d, link = (0o40755, b"", (0, 0)), lambda t: (0o120777, t.encode(), (0, 0))
    e = {p: d for p in ("bin", "dev", "proc", "sys", "tmp", "lib", LIBS[1:], "lib64")}
    e["dev/console"] = (0o20600, b"", (5, 1))
    e["init"] = (0o100755, INIT.encode(), (0, 0))
    e["bin/busybox"] = f(x / "bin/busybox")
    for a in ("sh", "mount", "mkdir", "cat", "poweroff"):
        e[f"bin/{a}"] = link("busybox")
    e["bin/cyclictest"] = f(x / "usr/bin/cyclictest")
    e[f"{LIBS[1:]}/libnuma.so.1"] = f(x / "usr/lib/x86_64-linux-gnu/libnuma.so.1")
    for lib in ("libc.so.6", "librt.so.1", "libpthread.so.0", "ld-linux-x86-64.so.2"):
        e[f"{LIBS[1:]}/{lib}"] = f(f"{LIBS}/{lib}")
    e["lib64/ld-linux-x86-64.so.2"] = link(f"{LIBS}/ld-linux-x86-64.so.2")
    out = WORK / "cyclictest.initrd"
    out.write_bytes(gzip.compress(cpio(e), mtime=0))
    return out


def percentiles(hist, overflow, maxlat):
    """Rank rule over a {us: count} histogram; ranks in the overflow go to maxlat."""
    n = sum(hist.values()) + overflow
    res = []
    for p in (0.50, 0.90, 0.99):
        rank, cum, v = math.ceil(p * n), 0, maxlat
        for us in sorted(hist):
            cum += hist[us]
            if cum >= rank:
                v = us
                break
        res.append(float(v))
    return res


def run_cyclictest(kernel, rd, seed):
    wd = WORK / f"ct-{seed}"
    wd.mkdir(exist_ok=True)
    subprocess.run(
        ["qemu-system-x86_64", "-accel", "tcg,thread=single", "-icount", "shift=1,sleep=off,align=off",
         "-seed", str(seed), "-rtc", "base=2024-01-01T00:00:00,clock=vm", "-cpu", "max,-cx16",
         "-smp", "1", "-m", "1024M", "-nodefaults", "-display", "none", "-no-reboot",
         "-serial", f"file:{wd}/console.log", "-serial", f"file:{wd}/out.log",
         "-kernel", kernel, "-initrd", str(rd), "-append", "console=ttyS0 quiet panic=-1 8250.nr_uarts=3"],
        check=True, timeout=600, stdin=subprocess.DEVNULL)
    hist, meta = {}, {}
    for line in (wd / "out.log").read_text(errors="replace").splitlines():
        if m := re.fullmatch(r"(\d+) (\d+)", line.strip()):
            hist[int(m[1])] = int(m[2])
        elif m := re.match(r"# ([^:]+):\s*(\S+)", line):
            meta[m[1]] = m[2]
    if not hist:
        sys.exit(f"cyclictest seed {seed}: no histogram in {wd}/out.log")
    return percentiles(hist, int(meta.get("Histogram Overflows", 0)), int(meta.get("Max Latencies", 0)))


def run_eevdf(eevdf, kernel, seed):
    scn = WORK / "timer4hogs.scn"
    out = subprocess.run([eevdf, "kernel", "run", str(scn), "--kernel", kernel, "--seed", str(seed),
                          "--format", "json"], timeout=900, capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"eevdf seed {seed} failed:\n{out.stderr[-1500:]}")
    doc = json.loads(out.stdout)
    lat = doc["by_name"]["ct"]["latency_us"]
    return [float(lat[k]) for k in ("p50", "p90", "p99")], doc["source"]["guest_sha256"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernel", default=KERNEL)
    ap.add_argument("--eevdf", default=EEVDF)
    a = ap.parse_args()
    t0 = time.monotonic()
    WORK.mkdir(exist_ok=True)
    (WORK / "timer4hogs.scn").write_text(SCENARIO)
    rd = initrd(stage())
    pool = cf.ThreadPoolExecutor(2)  # each job is one QEMU
    try:
        evf = {s: pool.submit(run_eevdf, a.eevdf, a.kernel, s) for s in SEEDS}
        ctf = {s: pool.submit(run_cyclictest, a.kernel, rd, s) for s in SEEDS}
        ev = {s: f.result()[0] for s, f in evf.items()}
        guests = {f.result()[1][:16] for f in evf.values()}
        ct = {s: f.result() for s, f in ctf.items()}
    finally:
        pool.shutdown(cancel_futures=True)
    fmt = lambda v: " ".join(f"{x:7.1f}" for x in v)
    print(f"{'':>6} | {'cyclictest (us)':^23} | {'eevdf kernel run (us)':^23}")
    print(f"{'seed':>6} | {'p50     p90     p99':>23} | {'p50     p90     p99':>23}")
    for s in SEEDS:
        print(f"{s:>6} | {fmt(ct[s])} | {fmt(ev[s])}")
    mc = [statistics.median(ct[s][i] for s in SEEDS) for i in range(3)]
    me = [statistics.median(ev[s][i] for s in SEEDS) for i in range(3)]
    print(f"{'median':>6} | {fmt(mc)} | {fmt(me)}")
    checks = [("p50", abs(me[0] - mc[0]) <= 5, f"{me[0] - mc[0]:+.1f} us (bound 5 us)"),
              ("p90", abs(me[1] - mc[1]) <= 0.25 * mc[1], f"{(me[1] / mc[1] - 1) * 100:+.1f}% (bound 25%)"),
              ("p99", abs(me[2] - mc[2]) <= 0.25 * mc[2], f"{(me[2] / mc[2] - 1) * 100:+.1f}% (bound 25%)")]
    for name, ok, what in checks:
        print(f"{name} eevdf - cyclictest: {what}: {'ok' if ok else 'FAIL'}")
    print(f"kernel {a.kernel}; eevdf guest runner sha256 {', '.join(sorted(guests))}")
    print(f"wall time {time.monotonic() - t0:.0f} s")
    return 0 if all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
