//! Building a [`Scenario`] from its lines: the parser state, one
//! method per directive, and the checks that need the whole text.

use super::*;

/// Where a task's keys were, for checks at the end of the text.
#[derive(Clone, Copy, Debug)]
pub(super) struct TaskPos {
    pub(super) line: usize,
    pub(super) cpus_col: usize,
    pub(super) group_col: usize,
}

/// Parser state: the scenario so far plus positions for late checks.
pub(super) struct Builder {
    pub(super) sc: Scenario,
    /// `--set` mode: directives replace instead of being duplicates.
    pub(super) set_mode: bool,
    /// Single-use directives and keys, with the line that set them.
    pub(super) seen: Vec<(String, usize)>,
    pub(super) tasks: Vec<TaskPos>,
    pub(super) group_lines: Vec<usize>,
    /// `costs` keys given explicitly (switch, wake, migrate, sleep,
    /// tick); the others are the machine's defaults, applied in `finish`
    /// (`machine` may come after `costs`).
    pub(super) explicit_costs: [Option<Nanos>; 5],
}

impl Builder {
    pub(super) fn new(sc: Scenario, set_mode: bool) -> Self {
        // A key that differs from the machine's default is explicit, as
        // the canonical text prints exactly those keys.
        let (c, d) = (&sc.sim.costs, sc.machine.default_costs());
        let explicit = |v: Nanos, dv: Nanos| (v != dv).then_some(v);
        let explicit_costs = [
            explicit(c.switch_ns, d.switch_ns),
            explicit(c.wake_ns, d.wake_ns),
            explicit(c.migrate_ns, d.migrate_ns),
            explicit(c.sleep_ns, d.sleep_ns),
            explicit(c.tick_ns, d.tick_ns),
        ];
        Builder {
            sc,
            set_mode,
            seen: Vec::new(),
            tasks: Vec::new(),
            group_lines: Vec::new(),
            explicit_costs,
        }
    }

    /// Records a single-use directive or key; errors on a second use.
    pub(super) fn once(&mut self, line: usize, col: usize, what: &str) -> Result<(), ParseError> {
        if self.set_mode {
            return Ok(());
        }
        if let Some((_, first)) = self.seen.iter().find(|(w, _)| w == what) {
            return Err(ParseError::new(
                line,
                col,
                format!("duplicate `{what}`"),
                format!("`{what}` is already set on line {first}; keep one"),
            ));
        }
        self.seen.push((what.to_string(), line));
        Ok(())
    }

    /// A directive that is set once and takes one duration of at least
    /// `lo` (`duration`, `warmup`).
    pub(super) fn duration_line(
        &mut self,
        line: usize,
        col: usize,
        toks: &[Tok<'_>],
        key: &'static str,
        example: &str,
        lo: Nanos,
    ) -> Result<Nanos, ParseError> {
        self.once(line, col, key)?;
        let v = single(line, toks, example)?;
        let kv = Kv {
            key,
            val: v.s,
            kcol: col,
            vcol: v.col,
        };
        dur_val(line, &kv, lo, MAX_DURATION_NS)
    }

    /// One directive line, read by its [`DIRECTIVES`] entry.
    pub(super) fn directive(&mut self, line: usize, toks: &[Tok<'_>]) -> Result<(), ParseError> {
        let Some(&d) = toks.first() else {
            return Ok(());
        };
        if d.s == "eevdf-scenario" {
            return Err(ParseError::new(
                line,
                d.col,
                "second header",
                "the header `eevdf-scenario v1` is the first line only",
            ));
        }
        let Some(entry) = directive(d.s) else {
            let names = directive_names();
            return Err(ParseError::new(
                line,
                d.col,
                format!("unknown directive {}", quote(d.s)),
                with_suggestion(d.s, &names, format!("directives: {}", names.join(", "))),
            ));
        };
        if self.set_mode && !entry.settable {
            let names = settable_names();
            return Err(ParseError::new(
                line,
                d.col,
                format!("{} cannot be set", quote(d.s)),
                format!("settable keys: {}", names.join(", ")),
            ));
        }
        (entry.read)(self, line, toks)
    }

    pub(super) fn features(&mut self, line: usize, toks: &[Tok<'_>]) -> Result<(), ParseError> {
        let rest = toks.get(1..).unwrap_or_default();
        let mut any = false;
        for t in rest {
            for (col, tok) in feature_tokens(t.s, t.col) {
                self.sc
                    .features
                    .apply(tok)
                    .map_err(|e| feature_error(line, col, &e))?;
                any = true;
            }
        }
        if !any {
            let d = toks.first().map_or(1, |d| d.end_col() + 1);
            return Err(ParseError::new(
                line,
                d,
                "`features` needs at least one token",
                "e.g. `features NO_RUN_TO_PARITY PREEMPT_SHORT`",
            ));
        }
        Ok(())
    }

    /// The `key=value` tokens after a directive, at least one.
    pub(super) fn kvs<'a>(
        line: usize,
        toks: &[Tok<'a>],
        keys: &[&str],
        example: &str,
    ) -> Result<Vec<Kv<'a>>, ParseError> {
        let Some((d, rest)) = toks.split_first() else {
            return Ok(Vec::new());
        };
        if rest.is_empty() {
            return Err(ParseError::new(
                line,
                d.end_col() + 1,
                format!("`{}` needs key=value pairs", d.s),
                format!("e.g. `{} {example}`", d.s),
            ));
        }
        let mut out = Vec::new();
        for t in rest {
            let kv = split_kv(line, *t, example)?;
            if !keys.contains(&kv.key) {
                return Err(ParseError::new(
                    line,
                    kv.kcol,
                    format!("unknown {} key {}", d.s, quote(kv.key)),
                    with_suggestion(kv.key, keys, format!("{} keys: {}", d.s, keys.join(", "))),
                ));
            }
            out.push(kv);
        }
        Ok(out)
    }

    /// A `sysctl` or `costs` line: each key read by its entry in `keys`,
    /// once per text.
    pub(super) fn sub_keys(
        &mut self,
        line: usize,
        toks: &[Tok<'_>],
        keys: &[SubKey],
        example: &str,
    ) -> Result<(), ParseError> {
        let names: Vec<&str> = keys.iter().map(|k| k.name).collect();
        let d = toks.first().map_or("", |d| d.s);
        for kv in Self::kvs(line, toks, &names, example)? {
            self.once(line, kv.kcol, &format!("{d} {}", kv.key))?;
            // `kvs` checked the key against the same names.
            if let Some(k) = keys.iter().find(|k| k.name == kv.key) {
                (k.read)(self, line, &kv)?;
            }
        }
        Ok(())
    }

    pub(super) fn group(&mut self, line: usize, toks: &[Tok<'_>]) -> Result<(), ParseError> {
        let example = "`group /test-B weight=100`";
        let p = match toks {
            [_, p, ..] => *p,
            [d] => {
                return Err(ParseError::new(
                    line,
                    d.end_col() + 1,
                    "`group` needs a path",
                    format!("e.g. {example}"),
                ))
            }
            [] => return Ok(()),
        };
        let Some(name) = p.s.strip_prefix('/') else {
            return Err(ParseError::new(
                line,
                p.col,
                format!(
                    "expected a group path such as /test-B, found {}",
                    quote(p.s)
                ),
                format!("group paths start with `/`, e.g. {example}"),
            ));
        };
        if let Some(i) = name.find('/') {
            let col = p.col + 1 + name.get(..i).unwrap_or_default().chars().count();
            return Err(ParseError::new(
                line,
                col,
                format!("group path {} has more than one level", quote(p.s)),
                "one level of groups is modelled: write a path like `/name`",
            ));
        }
        check_name(line, p.col + 1, name, "group")?;
        if let Some(i) = self.sc.sim.groups.iter().position(|g| g.path == p.s) {
            let first = self.group_lines.get(i).copied().unwrap_or(0);
            return Err(ParseError::new(
                line,
                p.col,
                format!("duplicate group {}", quote(p.s)),
                format!("{} is already declared on line {first}", quote(p.s)),
            ));
        }
        let (mut weight, mut idle): (Option<u32>, Option<bool>) = (None, None);
        let keys_hint = "group keys: weight=1..10000, idle (or idle=0, idle=1)";
        let dup = |col: usize, key: &str| {
            ParseError::new(
                line,
                col,
                format!("duplicate key `{key}`"),
                format!("give `{key}` once"),
            )
        };
        for t in toks.get(2..).unwrap_or_default() {
            if t.s == "idle" {
                if idle.is_some() {
                    return Err(dup(t.col, "idle"));
                }
                idle = Some(true);
                continue;
            }
            let kv = split_kv(line, *t, "weight=100")?;
            match kv.key {
                "weight" => {
                    if weight.is_some() {
                        return Err(dup(kv.kcol, "weight"));
                    }
                    weight = Some(u32_val(line, &kv, 1, 10_000)?);
                }
                "idle" => {
                    if idle.is_some() {
                        return Err(dup(kv.kcol, "idle"));
                    }
                    idle = Some(match kv.val {
                        "1" => true,
                        "0" => false,
                        _ => {
                            return Err(ParseError::new(
                                line,
                                kv.vcol,
                                format!("expected 0 or 1 for `idle`, found {}", quote(kv.val)),
                                keys_hint,
                            ))
                        }
                    });
                }
                other => {
                    return Err(ParseError::new(
                        line,
                        kv.kcol,
                        format!("unknown group key {}", quote(other)),
                        with_suggestion(other, &["weight", "idle"], keys_hint.to_string()),
                    ))
                }
            }
        }
        self.sc.sim.groups.push(GroupSpec {
            path: p.s.to_string(),
            weight: weight.unwrap_or(DEFAULT_GROUP_WEIGHT),
            idle: idle.unwrap_or(false),
        });
        self.group_lines.push(line);
        Ok(())
    }

    pub(super) fn task(&mut self, line: usize, toks: &[Tok<'_>]) -> Result<(), ParseError> {
        let kinds = KINDS.join(", ");
        let name = match toks {
            [_, n, ..] => *n,
            [d] => {
                return Err(ParseError::new(
                    line,
                    d.end_col() + 1,
                    "`task` needs a name",
                    "e.g. `task ct kind=timer period=1ms`",
                ))
            }
            [] => return Ok(()),
        };
        check_name(line, name.col, name.s, "task")?;
        if let Some(i) = self.sc.sim.tasks.iter().position(|t| t.name == name.s) {
            let first = self.tasks.get(i).map_or(0, |p| p.line);
            return Err(ParseError::new(
                line,
                name.col,
                format!("duplicate task name {}", quote(name.s)),
                format!(
                    "task {} is already declared on line {first}; pick another name \
                     or use count=",
                    quote(name.s)
                ),
            ));
        }
        let mut kvs: Vec<Kv<'_>> = Vec::new();
        for t in toks.get(2..).unwrap_or_default() {
            let kv = split_kv(line, *t, "kind=hog")?;
            if let Some(prev) = kvs.iter().find(|p| p.key == kv.key) {
                return Err(ParseError::new(
                    line,
                    kv.kcol,
                    format!("duplicate key `{}`", kv.key),
                    format!("`{}` is already given at column {}", kv.key, prev.kcol),
                ));
            }
            kvs.push(kv);
        }
        let Some(kind_kv) = kvs.iter().find(|k| k.key == "kind") else {
            return Err(ParseError::new(
                line,
                name.col,
                format!("task {} has no `kind`", quote(name.s)),
                format!("add kind=KIND with KIND one of {kinds}"),
            ));
        };
        let kind = choice_val(line, kind_kv, KINDS)?;
        let valid: Vec<&str> = keys_for(kind).map(|k| k.name).collect();
        if let Some(bad) = kvs.iter().find(|k| !valid.contains(&k.key)) {
            return Err(ParseError::new(
                line,
                bad.kcol,
                format!("unknown key {} for a {kind} task", quote(bad.key)),
                with_suggestion(
                    bad.key,
                    &valid,
                    format!("valid keys for kind={kind}: {}", valid.join(", ")),
                ),
            ));
        }
        let spec = read_task(line, &name, kind, &kvs)?;
        check_width(line, &name, &spec)?;
        let get = |key: &str| kvs.iter().find(|k| k.key == key);
        self.tasks.push(TaskPos {
            line,
            cpus_col: get("cpus").map_or(name.col, |kv| kv.vcol),
            group_col: get("group").map_or(name.col, |kv| kv.vcol),
        });
        self.sc.sim.tasks.push(spec);
        Ok(())
    }

    /// Syncs `sim` and checks what needs the whole text: CPU numbers
    /// against the machine and group names against the declared groups.
    /// `at` is the position for tasks without one (`--set`).
    pub(super) fn finish(mut self, at: Option<(usize, usize)>) -> Result<Scenario, ParseError> {
        // Engine 0.1 ran every scenario without a `preempt` line under
        // `full`; such a link keeps it.
        if self.sc.preempt.is_none() && engine_before(&self.sc.engine, (0, 2)) {
            self.sc.preempt = Some(PreemptModel::Full);
        }
        let d = self.sc.machine.default_costs();
        let [switch, wake, migrate, sleep, tick] = self.explicit_costs;
        self.sc.sim.costs = Costs {
            switch_ns: switch.unwrap_or(d.switch_ns),
            wake_ns: wake.unwrap_or(d.wake_ns),
            migrate_ns: migrate.unwrap_or(d.migrate_ns),
            sleep_ns: sleep.unwrap_or(d.sleep_ns),
            tick_ns: tick.unwrap_or(d.tick_ns),
        };
        let sim = &self.sc.sim;
        if sim.warmup_ns >= sim.duration_ns {
            let line = self
                .seen
                .iter()
                .find(|(k, _)| k == "warmup")
                .map_or(at.map_or(0, |a| a.0), |(_, l)| *l);
            return Err(ParseError::new(
                line,
                1,
                format!(
                    "warmup {} leaves nothing of duration {} to measure",
                    fmt_duration(sim.warmup_ns),
                    fmt_duration(sim.duration_ns)
                ),
                "make `warmup` shorter than `duration`",
            ));
        }
        let nr = self.sc.machine.nr_cpus();
        for (i, t) in self.sc.sim.tasks.iter().enumerate() {
            let pos = self.tasks.get(i);
            if let Some(bad) = t.cpus.iter().flatten().find(|&&c| c >= nr) {
                let (line, col) = pos.map_or(at.unwrap_or((0, 1)), |p| (p.line, p.cpus_col));
                let has = if nr == 1 {
                    "only CPU 0".to_string()
                } else {
                    format!("CPUs 0-{}", nr - 1)
                };
                return Err(ParseError::new(
                    line,
                    col,
                    format!(
                        "task {} uses CPU {bad}, but machine {} has {has}",
                        quote(&t.name),
                        self.sc.machine
                    ),
                    "use CPUs that exist or a bigger machine, e.g. `machine smp8`",
                ));
            }
            if let Some(g) = &t.group {
                if !self.sc.sim.groups.iter().any(|s| &s.path == g) {
                    let (line, col) = pos.map_or(at.unwrap_or((0, 1)), |p| (p.line, p.group_col));
                    let declared: Vec<&str> =
                        self.sc.sim.groups.iter().map(|g| g.path.as_str()).collect();
                    let hint = if declared.is_empty() {
                        format!("declare it with `group {g} weight=100`")
                    } else {
                        with_suggestion(
                            g,
                            &declared,
                            format!(
                                "declared groups: {}; or declare it with `group {g} weight=100`",
                                declared.join(", ")
                            ),
                        )
                    };
                    return Err(ParseError::new(
                        line,
                        col,
                        format!("unknown group {}", quote(g)),
                        hint,
                    ));
                }
            }
        }
        self.check_cost(at)?;
        Ok(self.sc)
    }

    /// Refuses a scenario over the cost model's limits
    /// (`eevdf_sim::cost`): too many threads, or too many events to
    /// simulate in about a minute.
    pub(super) fn check_cost(&self, at: Option<(usize, usize)>) -> Result<(), ParseError> {
        let nr = self.sc.machine.nr_cpus();
        let mut threads = 0u64;
        for (i, t) in self.sc.sim.tasks.iter().enumerate() {
            threads = threads.saturating_add(t.nr_threads());
            if threads > MAX_THREADS {
                let line = self.tasks.get(i).map_or(at.map_or(0, |a| a.0), |p| p.line);
                return Err(ParseError::new(
                    line,
                    1,
                    format!(
                        "the scenario has {threads} threads by task {}, over the limit of {MAX_THREADS}",
                        quote(&t.name)
                    ),
                    "use fewer groups, fds, workers or a smaller count (hackbench makes \
                     groups x fds x 2 threads, schbench messages x (workers + 1))",
                ));
            }
        }
        let cost = Cost::of(&self.sc.sim_config(), nr);
        if cost.events > MAX_EVENTS {
            let line = self
                .seen
                .iter()
                .find(|(k, _)| k == "duration")
                .map_or(at.map_or(0, |a| a.0), |(_, l)| *l);
            return Err(ParseError::new(
                line,
                1,
                format!(
                    "the scenario is estimated at {} events ({} per simulated second on {nr} CPUs), \
                     over the limit of {MAX_EVENTS}",
                    cost.events, cost.events_per_sec
                ),
                "shorten `duration`, or use fewer tasks, longer periods or fewer CPUs",
            ));
        }
        Ok(())
    }
}

/// Parses the keys of `machine custom ...` (after `custom`).
pub(super) fn parse_custom_machine(line: usize, toks: &[Tok]) -> Result<Machine, ParseError> {
    let mut c = CustomMachine {
        nodes: 1,
        packages_per_node: 1,
        llcs_per_package: 1,
        clusters_per_llc: 1,
        cores_per_cluster: 1,
        smt: 1,
        capacities: Vec::new(),
        remote_distance: 20,
    };
    let mut seen: Vec<&str> = Vec::new();
    for t in toks {
        let Some((k, v)) = t.s.split_once('=') else {
            return Err(ParseError::new(
                line,
                t.col,
                format!("expected KEY=VALUE, found {}", quote(t.s)),
                format!("machine custom keys: {}", CUSTOM_KEYS.join(", ")),
            ));
        };
        if !CUSTOM_KEYS.contains(&k) {
            return Err(ParseError::new(
                line,
                t.col,
                format!("unknown machine key {}", quote(k)),
                format!("machine custom keys: {}", CUSTOM_KEYS.join(", ")),
            ));
        }
        if seen.contains(&k) {
            return Err(ParseError::new(
                line,
                t.col,
                format!("duplicate key {}", quote(k)),
                "give each key once",
            ));
        }
        seen.push(k);
        let vcol = t.col + k.chars().count() + 1;
        let bad = |what: &str| {
            ParseError::new(
                line,
                vcol,
                format!("bad {k} {}", quote(v)),
                what.to_string(),
            )
        };
        let num = |lo: u64, hi: u64| -> Result<u32, ParseError> {
            parse_uint(v)
                .filter(|n| (lo..=hi).contains(n))
                .map(|n| n as u32)
                .ok_or_else(|| bad(&format!("{k} is an integer from {lo} to {hi}")))
        };
        match k {
            "nodes" => c.nodes = num(1, 64)?,
            "packages" => c.packages_per_node = num(1, 64)?,
            "llcs" => c.llcs_per_package = num(1, 256)?,
            "clusters" => c.clusters_per_llc = num(1, 64)?,
            "cores" => c.cores_per_cluster = num(1, 512)?,
            "smt" => c.smt = num(1, 8)?,
            "distance" => c.remote_distance = num(11, 255)?,
            _ => {
                let mut caps = Vec::new();
                for part in v.split(',') {
                    let (n, cap) = match part.split_once('x') {
                        Some((n, cap)) => (parse_uint(n), parse_uint(cap)),
                        None => (Some(1), parse_uint(part)),
                    };
                    match (n, cap) {
                        (Some(n), Some(cap))
                            if (1..=4096).contains(&n) && (1..=1024).contains(&cap) =>
                        {
                            caps.extend(std::iter::repeat_n(cap as u32, n as usize));
                        }
                        _ => {
                            return Err(bad(
                                "capacity is a list like 4x448,3x871,1x1024 (1 to 1024 each)",
                            ))
                        }
                    }
                }
                c.capacities = caps;
            }
        }
    }
    let m = Machine::Custom(c);
    if let Err(e) = Topology::build(&m.spec()) {
        let col = toks.first().map_or(1, |t| t.col);
        return Err(ParseError::new(
            line,
            col,
            format!("invalid machine: {e}"),
            "check the counts",
        ));
    }
    Ok(m)
}

/// Refuses a task whose canonical line would be over [`MAX_COLUMNS`].
pub(super) fn check_width(line: usize, name: &Tok<'_>, spec: &TaskSpec) -> Result<(), ParseError> {
    let width = task_line(spec).chars().count();
    if width <= MAX_COLUMNS {
        return Ok(());
    }
    Err(ParseError::new(
        line,
        name.col,
        format!(
            "task {} would print as {width} columns, over {MAX_COLUMNS}",
            quote(name.s)
        ),
        "durations print in whole units (2.8ms as 2800us); shorten the name \
         or leave out default keys",
    ))
}
