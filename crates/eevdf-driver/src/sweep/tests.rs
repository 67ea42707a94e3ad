//! Sweeps: the grid's order, shards that partition it, merge equal to
//! the unsharded output byte for byte, skipped cells, the summary.

use super::*;

fn base() -> Scenario {
    let text = "eevdf-scenario v1\nmachine smp2\nduration 200ms\n\
                task ct kind=timer period=1ms\ntask hog kind=hog count=2\nend\n";
    Scenario::parse(text).unwrap()
}

fn grid(axes: Vec<Axis>) -> Grid {
    Grid::new(base(), axes).unwrap()
}

fn axes() -> Vec<Axis> {
    vec![
        Axis::Set {
            key: "task.hog.slice".into(),
            values: vec!["1ms".into(), "8ms".into()],
        },
        Axis::Features(vec!["PREEMPT_SHORT".into(), "NO_PREEMPT_SHORT".into()]),
        Axis::Seeds(vec![1, 2, 3]),
    ]
}

fn run_all(g: &Grid, cells: &[usize]) -> String {
    cells.iter().map(|&i| g.run_cell(i, &mut |_| {})).collect()
}

#[test]
fn cells_are_every_combination_last_axis_fastest() {
    let g = grid(axes());
    assert_eq!(g.cells(), 12);
    let v = |i| g.values(i).into_iter().map(|(_, v)| v).collect::<Vec<_>>();
    assert_eq!(v(0), ["1ms", "PREEMPT_SHORT", "1"]);
    assert_eq!(v(1), ["1ms", "PREEMPT_SHORT", "2"]);
    assert_eq!(v(3), ["1ms", "NO_PREEMPT_SHORT", "1"]);
    assert_eq!(v(11), ["8ms", "NO_PREEMPT_SHORT", "3"]);
    let sc = g.scenario(11).unwrap();
    assert_eq!(sc.sim.seed, 3);
    assert_eq!(sc.sim.tasks[1].slice_ns, Some(8_000_000));
    assert!(!sc.features.features.preempt_short);
}

#[test]
fn shards_partition_the_grid() {
    let g = grid(axes());
    for n in 1..=13 {
        let mut all: Vec<usize> = (0..n).flat_map(|i| g.shard(i, n)).collect();
        all.sort_unstable();
        assert_eq!(all, (0..12).collect::<Vec<_>>(), "{n} shards");
    }
}

#[test]
fn merged_shards_are_the_unsharded_output_byte_for_byte() {
    let g = grid(axes());
    let whole = run_all(&g, &g.shard(0, 1));
    let shards: Vec<String> = (0..3).rev().map(|i| run_all(&g, &g.shard(i, 3))).collect();
    assert_eq!(merge(&shards).unwrap(), whole);
    // Every line reads back, in cell order, with its result.
    for (n, l) in whole.lines().enumerate() {
        let l = read_line(n + 1, l).unwrap();
        assert_eq!((l.cell, l.cells, l.grid.as_str()), (n, 12, g.id()));
        assert!(l.result.is_some() && l.skipped.is_none());
    }
    let missing = merge(&shards[..2]).unwrap_err();
    assert!(missing.contains("4 of 12 cells missing"), "{missing}");
    let twice = merge(&[shards[0].clone(), shards[0].clone()]).unwrap_err();
    assert!(twice.contains("appears twice"), "{twice}");
    let other = grid(axes()[1..].to_vec());
    let mixed = merge(&[whole, run_all(&other, &[0])]).unwrap_err();
    assert!(mixed.contains("merge the shards of one sweep"), "{mixed}");
}

#[test]
fn a_combination_that_cannot_run_is_marked_not_dropped() {
    let g = grid(vec![
        Axis::Machine(vec!["smp2".into(), "smp4".into()]),
        Axis::Set {
            key: "task.ct.cpus".into(),
            values: vec!["1".into(), "3".into()],
        },
    ]);
    let out = run_all(&g, &g.shard(0, 1));
    let lines: Vec<Line> = out
        .lines()
        .enumerate()
        .map(|(n, l)| read_line(n + 1, l).unwrap())
        .collect();
    let skipped: Vec<usize> = lines
        .iter()
        .filter(|l| l.skipped.is_some())
        .map(|l| l.cell)
        .collect();
    assert_eq!(skipped, [1], "smp2 has no CPU 3");
    assert!(summary(&lines, "p99").contains("1 cells skipped"));
}

#[test]
fn kernel_cells_go_to_the_kernel_runner_and_sim_cells_do_not() {
    let g = grid(vec![
        Axis::Kernel(vec![SIM.into(), "7.2".into()]),
        Axis::Seeds(vec![1, 2]),
    ]);
    let engines: Vec<Engine> = (0..4).map(|i| g.engine(i)).collect();
    let k = Engine::Kernel("7.2");
    assert_eq!(engines, [Engine::Sim, Engine::Sim, k, k]);
    // The simulator's cells are the grid's without the kernel axis.
    let plain = grid(vec![Axis::Seeds(vec![1, 2])]);
    let result = |line: &str| read_line(1, line.trim_end()).unwrap().result;
    for i in 0..2 {
        assert_eq!(
            result(&g.run_cell(i, &mut |_| {})),
            result(&plain.run_cell(i, &mut |_| {}))
        );
    }
    // A kernel cell gets the cell's scenario and the kernel's name.
    let fake = |sc: &Scenario, k: &str| match sc.sim.seed {
        1 => Ok(format!("{{\"kernel\":\"{k}\",\"seed\":1}}\n")),
        s => Err(format!("kernel {k}: seed {s} refused")),
    };
    let ran = read_line(1, g.run_cell_on(2, &mut |_| {}, &fake).trim_end()).unwrap();
    assert_eq!(ran.axes[0], ("kernel".into(), "7.2".into()));
    assert_eq!(ran.result.unwrap()["kernel"], "7.2");
    let refused = read_line(1, g.run_cell_on(3, &mut |_| {}, &fake).trim_end()).unwrap();
    assert_eq!(
        refused.skipped.as_deref(),
        Some("kernel 7.2: seed 2 refused")
    );
    // Without a runner (the page) a kernel cell is marked, not dropped.
    let page = read_line(1, g.run_cell(2, &mut |_| {}).trim_end()).unwrap();
    assert!(page.skipped.unwrap().contains("only the CLI boots kernels"));
    // The budget counts kernel boots and their guest time apart.
    let b = g.budget(&g.shard(0, 1)).unwrap();
    // Two boots of 200 ms on two CPUs.
    assert_eq!((b.kernel_runs, b.guest_ns), (2, 2 * 2 * 200_000_000));
    assert!(b.events > 0);
    let long =
        Scenario::parse("eevdf-scenario v1\nmachine up\nduration 1000s\ntask h kind=hog\nend\n");
    let g = Grid::new(long.unwrap(), vec![Axis::Kernel(vec!["7.2".into(); 4])]).unwrap();
    let e = g.budget(&g.shard(0, 1)).unwrap_err();
    assert!(e.contains("4000 s of guest time"), "{e}");
    assert_eq!(g.budget(&g.shard(0, 2)).unwrap().kernel_runs, 2);
}

#[test]
fn a_live_runs_rows_summarise_as_its_json_line_does() {
    let g = grid(axes());
    let mut from_json = Vec::new();
    let mut from_rows = Vec::new();
    for i in 0..g.cells() {
        from_json.push(read_line(i + 1, g.run_cell(i, &mut |_| {}).trim_end()).unwrap());
        let text = g.scenario(i).unwrap().to_text();
        let done = crate::live::LiveRun::new(&text).unwrap().finish();
        let line = g.line_of_rows(i, Ok(&done.live.rows));
        assert_eq!(
            (&line.axes, line.cell, &line.grid),
            (&from_json[i].axes, i, &from_json[i].grid)
        );
        from_rows.push(line);
    }
    for p in PERCENTILES {
        assert_eq!(summary(&from_rows, p), summary(&from_json, p), "{p}");
        assert_eq!(
            series(&from_rows, "ct", p),
            series(&from_json, "ct", p),
            "{p}"
        );
    }
    assert_eq!(tasks(&from_rows), tasks(&from_json));
    let skipped = g.line_of_rows(0, Err("why"));
    assert_eq!(
        (skipped.result, skipped.skipped.as_deref()),
        (None, Some("why"))
    );
}

#[test]
fn bad_grids_are_refused_before_running() {
    let too_big = Grid::new(base(), vec![Axis::Seeds((0..5000).collect())]).unwrap_err();
    assert!(too_big.contains("over 4096"), "{too_big}");
    let bad = Grid::new(
        base(),
        vec![Axis::Set {
            key: "task.hog.slice".into(),
            values: vec!["1ms".into(), "8".into()],
        }],
    )
    .unwrap_err();
    assert!(bad.starts_with("task.hog.slice = 8:"), "{bad}");
    let twice = Grid::new(base(), vec![Axis::Seeds(vec![1]), Axis::Seeds(vec![2])]);
    assert!(twice.unwrap_err().contains("given twice"));
    // Each cell is within a scenario's bounds; the grid's sum is not.
    let long = Scenario::parse(
        "eevdf-scenario v1\nmachine smp8\nduration 3600s\ntask h kind=hog count=64\nend\n",
    )
    .unwrap();
    let g = Grid::new(long, vec![Axis::Seeds((0..2000).collect())]).unwrap();
    let e = g.budget(&g.shard(0, 1)).unwrap_err();
    assert!(e.contains("--shard"), "{e}");
    assert!(g.budget(&g.shard(0, 400)).is_ok());
    assert_eq!(parse_seeds("1..3").unwrap(), [1, 2, 3]);
    assert_eq!(parse_seeds("4,2").unwrap(), [4, 2]);
    assert!(parse_seeds("3..1").is_err() && parse_seeds("x").is_err());
    assert!(parse_values("a,,b").is_err());
}

#[test]
fn the_summary_gives_medians_and_ranges_over_seeds() {
    let g = grid(axes());
    let out = run_all(&g, &g.shard(0, 1));
    let lines: Vec<Line> = out
        .lines()
        .enumerate()
        .map(|(n, l)| read_line(n + 1, l).unwrap())
        .collect();
    let t = summary(&lines, "p99");
    let rows: Vec<&str> = t.lines().collect();
    assert!(rows[0].starts_with("task.hog.slice  features"), "{t}");
    assert_eq!(rows.len(), 1 + 4, "{t}");
    // Each row's median lies within its range, from three runs.
    for r in &rows[1..] {
        let cols: Vec<&str> = r.split_whitespace().collect();
        let n: Vec<f64> = cols[cols.len() - 3..]
            .iter()
            .map(|c| c.parse().unwrap())
            .collect();
        assert_eq!(cols[cols.len() - 4], "3", "{r}");
        assert!(n[1] <= n[0] && n[0] <= n[2], "{r}");
    }
    let (x, s) = series(&lines, "ct", "p99").unwrap();
    assert_eq!(x, "task.hog.slice (ms)");
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].label, "features=PREEMPT_SHORT");
    let xs: Vec<f64> = s[0].points.iter().map(|p| p.x).collect();
    assert_eq!(xs, [1.0, 8.0]);
}

mod hostile {
    use super::*;
    use proptest::prelude::*;

    fn a_line() -> String {
        let g = grid(vec![Axis::Seeds(vec![1, 2])]);
        g.run_cell(0, &mut |_| {})
    }

    /// A line's `cells` sizes merge's table: a forged count is refused,
    /// not allocated.
    #[test]
    fn a_forged_cell_count_is_refused() {
        let line = a_line().replace("\"cells\":2", "\"cells\":18446744073709551615");
        let e = merge(&[line]).unwrap_err();
        assert!(e.contains("at most 4096"), "{e}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Merge reads shards from anywhere: any text is lines or an
        /// error, never a panic.
        #[test]
        fn merge_never_panics_on_arbitrary_text(t in "\\PC{0,400}") {
            let _ = merge(&[t]);
        }

        /// A real line cut, spliced or with a byte changed is read or
        /// refused, never a panic, and a cell index is always in range.
        #[test]
        fn damaged_lines_are_read_or_refused(cut in 0usize..4000, at in 0usize..4000, b in any::<u8>()) {
            let line = a_line();
            let mut bytes = line.into_bytes();
            let at = at % bytes.len();
            bytes[at] = b;
            bytes.truncate(cut.max(1).min(bytes.len()));
            let text = String::from_utf8_lossy(&bytes).into_owned();
            if let Ok(l) = read_line(1, text.trim_end()) {
                prop_assert!(l.cell < l.cells);
            }
            let _ = merge(&[text]);
        }
    }
}
