//! Scenario edits behind the page's gestures: add a task from a template
//! where it was dropped, re-pin it, delete it, change its keys in the
//! editor. Pure functions over [`Scenario`] (tested natively); every
//! result is re-parsed from its canonical text, so the page can only
//! produce scenarios the CLI accepts.

use eevdf_scenario::scenario::{key_of, keys_for, task_kvs, Scenario};
use eevdf_scenario::ParseError;
use eevdf_sim::{TaskSpec, Workload};

/// A palette entry: a workload with typical keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Template {
    Cyclictest,
    RtApp,
    Hackbench,
    Schbench,
    Hog,
    Custom,
}

impl Template {
    pub const ALL: [Template; 6] = [
        Template::Cyclictest,
        Template::RtApp,
        Template::Hackbench,
        Template::Schbench,
        Template::Hog,
        Template::Custom,
    ];

    /// What the palette shows.
    pub fn label(self) -> &'static str {
        match self {
            Template::Cyclictest => "cyclictest",
            Template::RtApp => "rt-app periodic",
            Template::Hackbench => "hackbench group",
            Template::Schbench => "schbench",
            Template::Hog => "CPU hog",
            Template::Custom => "custom",
        }
    }

    /// Stable id (`data-template` in the page, used by tests).
    pub fn id(self) -> &'static str {
        match self {
            Template::Cyclictest => "cyclictest",
            Template::RtApp => "rtapp",
            Template::Hackbench => "hackbench",
            Template::Schbench => "schbench",
            Template::Hog => "hog",
            Template::Custom => "custom",
        }
    }

    pub fn from_id(id: &str) -> Option<Template> {
        Template::ALL.into_iter().find(|t| t.id() == id)
    }

    /// The task name the first copy gets.
    fn base_name(self) -> &'static str {
        match self {
            Template::Cyclictest => "ct",
            Template::RtApp => "rt",
            Template::Hackbench => "hb",
            Template::Schbench => "sb",
            Template::Hog => "hog",
            Template::Custom => "task",
        }
    }

    /// Its keys as a task line has them, read by the scenario's key
    /// table: cyclictest with a 1 ms interval and a short slice, rt-app
    /// 3 ms every 10 ms, one hackbench group of 4 pairs, schbench with 4
    /// workers, a hog, and a custom periodic task to edit.
    pub fn keys(self) -> &'static str {
        match self {
            Template::Cyclictest => "kind=timer period=1ms run=20us slice=1ms",
            Template::RtApp => "kind=periodic run=3ms sleep=7ms",
            Template::Hackbench => "kind=hackbench fds=4",
            Template::Schbench => "kind=schbench workers=4",
            Template::Hog => "kind=hog",
            Template::Custom => "kind=periodic run=1ms sleep=1ms",
        }
    }

    /// The task it adds, named `name` (a checked name).
    pub fn spec(self, name: &str) -> TaskSpec {
        let spec = Scenario::parse_task(&format!("task {name} {}", self.keys()));
        debug_assert!(spec.is_ok(), "template {self:?}: {spec:?}");
        spec.unwrap_or_else(|_| TaskSpec::new(name, Workload::Hog))
    }
}

/// Where something was dropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Anywhere: no affinity.
    Machine,
    /// These CPUs (one CPU pins).
    Cpus(Vec<u32>),
}

impl Target {
    /// The drop zone's attribute: `machine` or `cpus:0,1,2`.
    pub fn attr(&self) -> String {
        match self {
            Target::Machine => "machine".into(),
            Target::Cpus(c) => format!(
                "cpus:{}",
                c.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
            ),
        }
    }

    pub fn parse(s: &str) -> Option<Target> {
        if s == "machine" {
            return Some(Target::Machine);
        }
        let list = s.strip_prefix("cpus:")?;
        let cpus: Option<Vec<u32>> = list.split(',').map(|c| c.parse().ok()).collect();
        cpus.filter(|c| !c.is_empty()).map(Target::Cpus)
    }

    fn affinity(&self, nr_cpus: u32) -> Option<Vec<u32>> {
        match self {
            Target::Cpus(c) if c.len() < nr_cpus as usize => {
                let mut c = c.clone();
                c.sort_unstable();
                c.dedup();
                Some(c)
            }
            _ => None,
        }
    }
}

/// Re-reads `sc` from its canonical text: the page keeps only what parses.
fn reparse(sc: &Scenario) -> Result<Scenario, ParseError> {
    Scenario::parse(&sc.to_text())
}

/// A name no task uses: `base`, `base2`, `base3`, ...
fn fresh_name(sc: &Scenario, base: &str) -> String {
    let taken = |n: &str| sc.sim.tasks.iter().any(|t| t.name == n);
    if !taken(base) {
        return base.to_string();
    }
    (2..)
        .map(|i| format!("{base}{i}"))
        .find(|n| !taken(n))
        .expect("some suffix is free")
}

/// Adds a task from `t` with the affinity of `target`; returns the new
/// scenario and the task's index.
pub fn add_task(
    sc: &Scenario,
    t: Template,
    target: &Target,
) -> Result<(Scenario, usize), ParseError> {
    let mut out = sc.clone();
    let mut spec = t.spec(&fresh_name(sc, t.base_name()));
    spec.cpus = target.affinity(sc.machine.nr_cpus());
    out.sim.tasks.push(spec);
    let i = out.sim.tasks.len() - 1;
    Ok((reparse(&out)?, i))
}

/// Gives task `i` the affinity of `target`.
pub fn move_task(sc: &Scenario, i: usize, target: &Target) -> Result<Scenario, ParseError> {
    let mut out = sc.clone();
    if let Some(t) = out.sim.tasks.get_mut(i) {
        t.cpus = target.affinity(sc.machine.nr_cpus());
    }
    reparse(&out)
}

/// Removes task `i`.
pub fn delete_task(sc: &Scenario, i: usize) -> Result<Scenario, ParseError> {
    let mut out = sc.clone();
    if i < out.sim.tasks.len() {
        out.sim.tasks.remove(i);
    }
    reparse(&out)
}

/// The editor's fields for a task of `kind`: `name`, then the keys
/// the scenario's key table marks for the editor, in canonical order.
pub fn fields_for(kind: &str) -> Vec<&'static str> {
    std::iter::once("name")
        .chain(keys_for(kind).filter(|k| k.editor).map(|k| k.name))
        .collect()
}

/// Help for an editor field: the key's value, default and meaning.
pub fn field_help(kind: &str, field: &str) -> Option<String> {
    let k = key_of(kind, field)?;
    Some(format!("{} ({}; default {})", k.help, k.value, k.default))
}

/// What an empty editor field means: the key's default.
pub fn field_default(kind: &str, field: &str) -> &'static str {
    key_of(kind, field).map_or("", |k| k.default)
}

/// `(key, value)` pairs of task `i` as its canonical line has them,
/// `name` first.
pub fn task_fields(sc: &Scenario, i: usize) -> Vec<(String, String)> {
    let Some(t) = sc.sim.tasks.get(i) else {
        return Vec::new();
    };
    std::iter::once(("name".to_string(), t.name.clone()))
        .chain(task_kvs(t).into_iter().map(|(k, v)| (k.to_string(), v)))
        .collect()
}

/// Sets task `i`'s keys from the editor (`""` removes a key, `name`
/// renames): the fields become a task line the scenario's key table
/// reads, that task replaces task `i`, and the whole scenario is checked
/// again (names, groups, CPUs).
pub fn set_task_fields(
    sc: &Scenario,
    i: usize,
    edits: &[(String, String)],
) -> Result<Scenario, ParseError> {
    let mut fields = task_fields(sc, i);
    if fields.is_empty() {
        return Ok(sc.clone());
    }
    for (k, v) in edits {
        let v = v.trim();
        match fields.iter().position(|(fk, _)| fk == k) {
            Some(p) if v.is_empty() && k != "name" => {
                fields.remove(p);
            }
            Some(p) => fields[p].1 = v.to_string(),
            None if !v.is_empty() => fields.push((k.clone(), v.to_string())),
            None => {}
        }
    }
    let mut line = format!("task {}", fields[0].1);
    for (k, v) in &fields[1..] {
        line.push_str(&format!(" {k}={v}"));
    }
    let mut out = sc.clone();
    out.sim.tasks[i] = Scenario::parse_task(&line)?;
    reparse(&out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Scenario {
        Scenario::parse(eevdf_scenario::presets::preset("smp4-hogs").unwrap().text).unwrap()
    }

    #[test]
    fn dropping_a_template_on_a_cpu_pins_a_fresh_task() {
        let (sc, i) = add_task(&base(), Template::Cyclictest, &Target::Cpus(vec![1])).unwrap();
        let t = &sc.sim.tasks[i];
        assert_eq!(t.name, "ct2", "`ct` is taken by the preset");
        assert_eq!(t.cpus.as_deref(), Some(&[1][..]));
        assert!(sc
            .to_text()
            .contains("task ct2 kind=timer period=1ms slice=1ms cpus=1\n"));
    }

    #[test]
    fn the_whole_machine_means_no_affinity() {
        let (sc, i) = add_task(&base(), Template::Hog, &Target::Cpus(vec![0, 1, 2, 3])).unwrap();
        assert_eq!(sc.sim.tasks[i].cpus, None, "all four CPUs of smp4");
        let sc = move_task(&sc, i, &Target::Cpus(vec![3, 2])).unwrap();
        assert_eq!(sc.sim.tasks[i].cpus.as_deref(), Some(&[2, 3][..]));
        let sc = move_task(&sc, i, &Target::Machine).unwrap();
        assert_eq!(sc.sim.tasks[i].cpus, None);
    }

    #[test]
    fn every_template_makes_a_valid_task() {
        let mut sc = base();
        for t in Template::ALL {
            let (next, _) = add_task(&sc, t, &Target::Machine).unwrap();
            sc = next;
            assert_eq!(Template::from_id(t.id()), Some(t));
        }
        assert_eq!(sc.sim.tasks.len(), 2 + Template::ALL.len());
    }

    #[test]
    fn deleting_removes_only_that_task() {
        let sc = delete_task(&base(), 0).unwrap();
        assert_eq!(sc.sim.tasks.len(), 1);
        assert_eq!(sc.sim.tasks[0].name, "hog");
    }

    #[test]
    fn the_editor_sets_renames_and_clears_keys() {
        let f = task_fields(&base(), 1);
        assert_eq!(f[0], ("name".into(), "hog".into()));
        assert!(f.contains(&("count".into(), "4".into())));
        let edits = [
            ("name".to_string(), "burn".to_string()),
            ("count".to_string(), "2".to_string()),
            ("slice".to_string(), String::new()),
            ("nice".to_string(), "-5".to_string()),
        ];
        let sc = set_task_fields(&base(), 1, &edits).unwrap();
        let t = &sc.sim.tasks[1];
        assert_eq!(
            (t.name.as_str(), t.count, t.nice, t.slice_ns),
            ("burn", 2, -5, None)
        );
    }

    #[test]
    fn bad_editor_values_are_parse_errors_with_a_hint() {
        let edits = [("slice".to_string(), "3".to_string())];
        let e = set_task_fields(&base(), 1, &edits).unwrap_err();
        assert!(e.hint.contains("unit"), "{e}");
    }

    /// The edited task is checked with the rest of the scenario: its
    /// name against the others', its CPUs against the machine's.
    #[test]
    fn editor_edits_are_checked_against_the_whole_scenario() {
        let set = |k: &str, v: &str| set_task_fields(&base(), 1, &[(k.into(), v.into())]);
        let e = set("name", "ct").unwrap_err();
        assert!(e.message.contains("duplicate task name"), "{e}");
        let e = set("cpus", "9").unwrap_err();
        assert!(e.message.contains('9'), "{e}");
        let e = set("group", "/nowhere").unwrap_err();
        assert!(e.message.contains("/nowhere"), "{e}");
        assert_eq!(set("cpus", "3").unwrap().sim.tasks[1].cpus, Some(vec![3]));
    }

    #[test]
    fn targets_round_trip_through_their_attribute() {
        for t in [
            Target::Machine,
            Target::Cpus(vec![3]),
            Target::Cpus(vec![0, 1, 5]),
        ] {
            assert_eq!(Target::parse(&t.attr()), Some(t));
        }
        assert_eq!(Target::parse("cpus:"), None);
        assert_eq!(Target::parse("cpus:x"), None);
        assert_eq!(
            fields_for("hog"),
            ["name", "count", "nice", "policy", "slice", "group"]
        );
    }
}
