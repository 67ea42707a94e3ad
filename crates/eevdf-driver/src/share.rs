//! What the page shares and reads back: links and mail blocks with or
//! without a pinned baseline, and the split of a text that carries a
//! `baseline` block into the page's scenario (B) and its pin (A). The
//! bytes are the CLI's (`eevdf run --format mail`, `eevdf url`), so a
//! block copied here pastes into `eevdf run -` and back unchanged.

use eevdf_scenario::baseline::Pair;
use eevdf_scenario::report::{self, PipeRow};
use eevdf_scenario::scenario::Scenario;

/// The page's scenario as B and the pinned text, if it parses, as A.
pub fn pair_of(b: &Scenario, pinned: Option<&str>) -> Pair {
    Pair {
        b: b.clone(),
        a: pinned.and_then(|t| Scenario::parse(t).ok()),
    }
}

/// The fragment (without `#`) of the page's state: B's text with the
/// pin's `baseline` block.
pub fn fragment(b: &Scenario, pinned: Option<&str>) -> String {
    eevdf_scenario::link::pair_fragment(&pair_of(b, pinned))
}

/// The page's state beyond the scenario and its pin, carried by a link
/// as `&KEY=VALUE` sections after the payload (older pages and the CLI's
/// `run` skip them): `&sweep=` the sweep's flags, `&tour=ID&step=K` a
/// guided tour after its K-th step. A new key is one more field here.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkState {
    /// The sweep's `eevdf sweep` axis flags, canonical.
    pub sweep: Option<String>,
    pub tour: Option<TourAt>,
}

/// A guided tour and how many of its steps have been taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TourAt {
    pub id: &'static str,
    pub step: usize,
}

/// The link section key of the page's sweep.
pub const SWEEP_SECTION: &str = "sweep";

/// `fragment` with the page's state as sections after the scenario.
pub fn with_state(fragment: String, state: &LinkState) -> String {
    let mut out = fragment;
    if let Some(args) = &state.sweep {
        out.push_str(&format!(
            "&{SWEEP_SECTION}={}",
            eevdf_scenario::link::encode_section(args)
        ));
    }
    if let Some(t) = &state.tour {
        out.push_str(&format!("&tour={}&step={}", t.id, t.step));
    }
    out
}

/// The state a link carries, and what of it could not be read (a
/// sentence; the rest still opens).
pub fn state_of(link: &str) -> (LinkState, Option<String>) {
    let mut state = LinkState::default();
    let mut errors = Vec::new();
    match sweep_of(link) {
        Some(Ok(s)) => state.sweep = Some(s),
        Some(Err(e)) => errors.push(e),
        None => {}
    }
    match tour_of(link) {
        Some(Ok(t)) => state.tour = Some(t),
        Some(Err(e)) => errors.push(e),
        None => {}
    }
    let error = (!errors.is_empty()).then(|| errors.join("; "));
    (state, error)
}

/// The tour a link carries (`&tour=ID&step=K`; no step is step 0), its
/// step clamped to the tour's length.
pub fn tour_of(link: &str) -> Option<Result<TourAt, String>> {
    let sections = eevdf_scenario::link::state_sections(link);
    let get = |k: &str| sections.iter().find(|(key, _)| key == k).map(|(_, v)| v);
    let id = get("tour")?;
    let Some(tour) = crate::tours::TOURS.iter().find(|t| t.id == id) else {
        let known: Vec<&str> = crate::tours::TOURS.iter().map(|t| t.id).collect();
        return Some(Err(format!(
            "the link's tour `{}` is not one of {}",
            eevdf_scenario::display::escape_controls(id),
            known.join(", ")
        )));
    };
    let step = match get("step").map(|s| s.parse::<usize>()) {
        None => 0,
        Some(Ok(k)) => k.min(tour.steps.len()),
        Some(Err(_)) => return Some(Err("the link's tour step is not a number".into())),
    };
    Some(Ok(TourAt { id: tour.id, step }))
}

/// The sweep a link carries, as flags checked by
/// [`crate::sweep::Spec`] and printed canonically (`None`: the link has
/// no sweep section).
pub fn sweep_of(link: &str) -> Option<Result<String, String>> {
    let (_, value) = eevdf_scenario::link::state_sections(link)
        .into_iter()
        .find(|(k, _)| k == SWEEP_SECTION)?;
    let read = eevdf_scenario::link::decode_section(&value)
        .map_err(|e| format!("the link's sweep: {}", e.message))
        .and_then(|t| crate::sweep::Spec::parse(&t).map_err(|e| format!("the link's sweep: {e}")))
        .map(|spec| spec.to_args());
    Some(read)
}

/// A text the page opens: the scenario and, when it has a `baseline`
/// block, the pin. A text that parses as neither stays whole (the
/// editor shows its error).
pub fn split_pin(text: String) -> (String, Option<String>) {
    if Scenario::parse(&text).is_ok() {
        return (text, None);
    }
    match Pair::parse(&text) {
        Ok(p) => (p.b.to_text(), p.a.map(|a| a.to_text())),
        Err(_) => (text, None),
    }
}

/// The A/B mail block, exactly as `eevdf run --format mail` prints it
/// for the same pair: the pair's text, the provenance line, the
/// comparison table labelled by what differs, and the link.
pub fn ab_mail(pair: &Pair, a: &[PipeRow], b: &[PipeRow], base: &str) -> String {
    let (la, lb) = pair.labels();
    let a_warmup = pair.a.as_ref().map_or(0, |a| a.sim.warmup_ns);
    let title = report::ab_title(a_warmup, pair.b.sim.warmup_ns);
    let table = report::compare_rows(a, &la, b, &lb, &title);
    report::mail(
        &pair.to_text(),
        report::SIMULATED_BY,
        &table,
        &eevdf_scenario::link::pair_url(pair, base),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: &str =
        "eevdf-scenario v1\nmachine up\nduration 1s\ntask ct kind=timer period=1ms\nend\n";

    #[test]
    fn split_takes_the_block_as_the_pin() {
        let pair = format!(
            "{}baseline\nhz 1000\nend\n",
            B.strip_suffix("end\n").unwrap()
        );
        let (b, a) = split_pin(pair);
        assert_eq!(b, Scenario::parse(B).unwrap().to_text());
        let a = Scenario::parse(&a.expect("a pin")).unwrap();
        assert_eq!(a.sim.hz, 1000);
    }

    #[test]
    fn split_leaves_plain_and_bad_texts_whole() {
        assert_eq!(split_pin(B.to_string()), (B.to_string(), None));
        let bad = "eevdf-scenario v1\nbogus\nend\n".to_string();
        assert_eq!(split_pin(bad.clone()), (bad, None));
    }

    #[test]
    fn a_sweep_travels_in_its_section_and_old_readers_skip_it() {
        let b = Scenario::parse(B).unwrap();
        let args = "--vary task.ct.period=1ms,2ms --features-axis PREEMPT_SHORT,NO_PREEMPT_SHORT+NEXT_BUDDY";
        let sweep = LinkState {
            sweep: Some(args.to_string()),
            ..LinkState::default()
        };
        let frag = with_state(fragment(&b, None), &sweep);
        assert!(frag.ends_with(
            "&sweep=--vary+task.ct.period=1ms,2ms+--features-axis+PREEMPT_SHORT,NO_PREEMPT_SHORT%2BNEXT_BUDDY"
        ), "{frag}");
        assert_eq!(sweep_of(&format!("#{frag}")), Some(Ok(args.to_string())));
        // The scenario reads as before: the CLI and older pages ignore it.
        assert_eq!(eevdf_scenario::link::decode(&frag).unwrap(), b);
        assert_eq!(
            with_state(fragment(&b, None), &LinkState::default()),
            fragment(&b, None)
        );
        assert_eq!(sweep_of(&fragment(&b, None)), None);
        let bad = sweep_of(&format!("{}&sweep=--jobs+2", fragment(&b, None))).unwrap();
        assert!(bad.unwrap_err().contains("unknown flag `--jobs`"));
        let cut = sweep_of(&format!("{}&sweep=--seeds+1%2", fragment(&b, None))).unwrap();
        assert!(cut.unwrap_err().contains("percent-escape"));
    }

    #[test]
    fn a_tour_and_its_step_travel_with_a_sweep() {
        let b = Scenario::parse(B).unwrap();
        let tour = TourAt {
            id: crate::tours::TOURS[1].id,
            step: 2,
        };
        let state = LinkState {
            sweep: Some("--seeds 1..2".into()),
            tour: Some(tour.clone()),
        };
        let frag = with_state(fragment(&b, None), &state);
        assert!(
            frag.ends_with(&format!("&sweep=--seeds+1..2&tour={}&step=2", tour.id)),
            "{frag}"
        );
        assert_eq!(state_of(&frag), (state, None));
        assert_eq!(eevdf_scenario::link::decode(&frag).unwrap(), b);
        // No step is the tour's start; a step past its end is its end.
        let base = fragment(&b, None);
        let start = tour_of(&format!("{base}&tour={}", tour.id))
            .unwrap()
            .unwrap();
        assert_eq!(start.step, 0);
        let end = tour_of(&format!("{base}&tour={}&step=999", tour.id))
            .unwrap()
            .unwrap();
        assert_eq!(end.step, crate::tours::TOURS[1].steps.len());
        let (s, e) = state_of(&format!("{base}&tour=nope&step=x&sweep=--seeds+1"));
        assert_eq!(s.sweep.as_deref(), Some("--seeds 1"));
        assert!(s.tour.is_none() && e.unwrap().contains("tour `nope` is not one of"));
        assert_eq!(state_of(&base), (LinkState::default(), None));
    }

    #[test]
    fn fragment_with_a_pin_round_trips_through_the_cli_decoder() {
        let b = Scenario::parse(B).unwrap();
        let a = B.replace("duration 1s", "duration 2s");
        let frag = fragment(&b, Some(&a));
        let p = eevdf_scenario::link::decode_pair(&frag).unwrap();
        assert_eq!(p.b, b);
        assert_eq!(p.a, Some(Scenario::parse(&a).unwrap()));
        // Without a pin the fragment is the plain scenario's.
        assert_eq!(fragment(&b, None), eevdf_scenario::link::fragment(&b));
    }
}
