use super::table::kernel_features_h;
use super::*;

const V7_1_LINE: &str = "PLACE_LAG PLACE_DEADLINE_INITIAL PLACE_REL_DEADLINE RUN_TO_PARITY PREEMPT_SHORT NO_NEXT_BUDDY PICK_BUDDY CACHE_HOT_BUDDY DELAY_DEQUEUE DELAY_ZERO NO_PARANOID_AVG WAKEUP_PREEMPTION NO_HRTICK NO_HRTICK_DL NONTASK_CAPACITY TTWU_QUEUE SIS_UTIL NO_WARN_DOUBLE_CLOCK NO_RT_PUSH_IPI NO_RT_RUNTIME_SHARE NO_LB_MIN ATTACH_AGE_LOAD WA_IDLE WA_WEIGHT WA_BIAS UTIL_EST NO_LATENCY_WARN NI_RANDOM NI_RATE ";

fn set(p: Profile, tokens: &[&str]) -> FeatureSet {
    let mut s = FeatureSet::new(p);
    for t in tokens {
        s.apply(t).unwrap_or_else(|e| panic!("{t}: {e}"));
    }
    s
}

#[test]
fn table_is_consistent() {
    let mut names: Vec<&str> = FEATURES
        .iter()
        .map(|i| i.name)
        .chain(ALIASES.iter().map(|a| a.name))
        .collect();
    let n = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), n, "duplicate names");
    let f = Features::for_profile(Profile::V7_1);
    let mut nbool = 0;
    for i in FEATURES {
        assert!(
            !i.name.starts_with("NO_") && !i.doc.is_empty(),
            "{}",
            i.name
        );
        match (i.kind, i.status) {
            (FeatureKind::Bool, Status::NotModelled) => {
                assert_eq!(f.get_bool(i.name), None, "{}", i.name)
            }
            (FeatureKind::Bool, _) => {
                nbool += 1;
                assert!(f.get_bool(i.name).is_some(), "{} has no field", i.name);
            }
            (FeatureKind::Enum(values), status) => {
                assert_eq!(status, Status::Engine);
                assert!(values.contains(&f.get_enum(i.name).unwrap()), "{}", i.name);
            }
        }
    }
    assert_eq!(nbool, 31);
    for a in ALIASES {
        let Some(FeatureKind::Enum(values)) = feature_info(a.target).map(|i| i.kind) else {
            panic!("{} targets {}", a.name, a.target)
        };
        assert!(
            values.contains(&a.value) && values.contains(&"MAINLINE"),
            "{}",
            a.name
        );
    }
    // Kernel names in features.h order: modelled defaults agree with v7.1.
    for (name, default) in kernel_features_h() {
        let info = feature_info(name).unwrap_or_else(|| panic!("{name} not in FEATURES"));
        assert_eq!(info.kind, FeatureKind::Bool);
        if info.status != Status::NotModelled {
            assert_eq!(f.get_bool(name), Some(default), "{name}");
        }
    }
    let sim: Vec<&str> = FEATURES
        .iter()
        .filter(|i| i.status == Status::Simulator)
        .map(|i| i.name)
        .collect();
    assert_eq!(
        sim,
        [
            "CACHE_HOT_BUDDY",
            "HRTICK",
            "SIS_UTIL",
            "WA_IDLE",
            "WA_WEIGHT",
            "WA_BIAS",
            "NI_RANDOM",
            "NI_RATE",
            "WA_SLICE",
            "SIS_SLICE",
            "MINSLICE_PERCPU"
        ]
    );
    assert_eq!(
        feature_info("START_DEBIT").unwrap().doc,
        "removed from the kernel"
    );
}

#[test]
fn v7_1_debugfs_line_is_the_kernel_line() {
    assert_eq!(FeatureSet::new(Profile::V7_1).debugfs_line(), V7_1_LINE);
    // The seed toggles never appear; not-modelled values follow the user.
    let s = set(
        Profile::V7_1,
        &[
            "NO_PLACE_LAG",
            "NO_TTWU_QUEUE",
            "PARANOID_AVG",
            "WA_SLICE",
            "START_DEBIT",
        ],
    );
    let line = s.debugfs_line();
    assert!(line.starts_with("NO_PLACE_LAG PLACE_DEADLINE_INITIAL "));
    assert!(line.contains(" DELAY_ZERO PARANOID_AVG WAKEUP_PREEMPTION "));
    assert!(line.contains(" NONTASK_CAPACITY NO_TTWU_QUEUE SIS_UTIL "));
    assert!(!line.contains("SLICE") && !line.contains("PS_") && !line.contains("START_DEBIT"));
    assert!(FeatureSet::new(Profile::V6_12)
        .debugfs_line()
        .ends_with(" NI_RANDOM NO_NI_RATE "));
    assert!(FeatureSet::new(Profile::V6_19Rc1)
        .debugfs_line()
        .contains(" NEXT_BUDDY PICK_BUDDY "));
}

#[test]
fn debugfs_line_round_trips() {
    let src = set(
        Profile::V7_1,
        &["NO_RUN_TO_PARITY", "HRTICK", "NO_UTIL_EST", "NO_NI_RATE"],
    );
    let mut dst = FeatureSet::new(Profile::V6_12);
    assert_eq!(dst.apply_debugfs_line(&src.debugfs_line()), vec![]);
    assert_eq!(dst.debugfs_line(), src.debugfs_line());
    assert!(dst.features.hrtick && !dst.features.run_to_parity && dst.features.ni_random);
    // Profile parameters are not part of the line.
    assert_eq!(dst.features.prot_set, ProtSet::Stash);
}

#[test]
fn apply_booleans_and_enums() {
    let mut s = FeatureSet::new(Profile::V7_1);
    assert_eq!(s.apply("NO_RUN_TO_PARITY"), Ok(Applied::Modelled));
    assert!(!s.features.run_to_parity);
    assert_eq!(s.apply(" RUN_TO_PARITY "), Ok(Applied::Modelled));
    assert!(s.features.run_to_parity);
    s.apply("NB_MODE=mel_v5").unwrap();
    assert_eq!(s.features.nb_mode, NbMode::MelV5);
    s.apply("NB_MODE=LEGACY").unwrap();
    assert_eq!(s.features.nb_mode, NbMode::Legacy);
    s.apply("PROT_SET=ineligible").unwrap();
    assert_eq!(s.features.prot_set, ProtSet::Ineligible);
    s.apply("PROT_UPDATE = pz_runtime").unwrap();
    assert_eq!(s.features.prot_update, ProtUpdate::PzRuntime);
    s.apply("LAG_CLAMP=2SLICE_TICK").unwrap();
    assert_eq!(s.features.lag_clamp, LagClamp::TwoSliceTick);
    s.apply("DELAY_LAG=V6.12").unwrap();
    assert_eq!(s.features.delay_lag, DelayLag::V6_12);
    s.apply("NB_SYNC_DELTA=Stint_Runtime").unwrap();
    assert_eq!(s.features.nb_sync_delta, NbSyncDelta::StintRuntime);
    s.apply("NB_RESCHED_INELIGIBLE_WAKER").unwrap();
    assert!(s.features.nb_resched_ineligible_waker);
    assert_eq!(s.tokens().len(), 10);
}

#[test]
fn apply_errors() {
    let mut s = FeatureSet::new(Profile::V7_1);
    let before = s.clone();
    assert_eq!(
        s.apply("nb_mode=MEL_V5"),
        Err(FeatureError::Unknown {
            name: "nb_mode".into(),
            suggestion: Some("NB_MODE")
        })
    );
    assert_eq!(
        s.apply("PREEMPT_SHORT=1"),
        Err(FeatureError::UnexpectedValue {
            name: "PREEMPT_SHORT".into()
        })
    );
    assert_eq!(
        s.apply("PROT_INELIGIBLE=1"),
        Err(FeatureError::UnexpectedValue {
            name: "PROT_INELIGIBLE".into()
        })
    );
    assert_eq!(
        s.apply("NO_PROT_SET"),
        Err(FeatureError::NoPrefixOnEnum { name: "PROT_SET" })
    );
    assert_eq!(
        s.apply("NO_PROT_SET=STASH"),
        Err(FeatureError::NoPrefixOnEnum { name: "PROT_SET" })
    );
    assert_eq!(
        s.apply("PROT_SET"),
        Err(FeatureError::MissingValue { name: "PROT_SET" })
    );
    assert_eq!(
        s.apply("PROT_SET="),
        Err(FeatureError::MissingValue { name: "PROT_SET" })
    );
    assert_eq!(
        s.apply("PROT_SET=bogus"),
        Err(FeatureError::BadValue {
            name: "PROT_SET",
            value: "bogus".into(),
            expected: ProtSet::VALUES
        })
    );
    assert_eq!(
        s.apply("PREEMT_SHORT"),
        Err(FeatureError::Unknown {
            name: "PREEMT_SHORT".into(),
            suggestion: Some("PREEMPT_SHORT")
        })
    );
    assert_eq!(
        s.apply("place_lag"),
        Err(FeatureError::Unknown {
            name: "place_lag".into(),
            suggestion: Some("PLACE_LAG")
        })
    );
    assert_eq!(
        s.apply("FOO_BAR"),
        Err(FeatureError::Unknown {
            name: "FOO_BAR".into(),
            suggestion: None
        })
    );
    assert_eq!(
        s.apply(""),
        Err(FeatureError::Unknown {
            name: String::new(),
            suggestion: None
        })
    );
    assert_eq!(
        s.apply("NO_"),
        Err(FeatureError::Unknown {
            name: "NO_".into(),
            suggestion: None
        })
    );
    let lb = s.apply("NO_LB_MNI").unwrap_err();
    assert!(lb.to_string().ends_with("did you mean NO_LB_MIN?"), "{lb}");
    let long = "X".repeat(10_000);
    assert!(matches!(
        s.apply(&long),
        Err(FeatureError::Unknown {
            suggestion: None,
            ..
        })
    ));
    assert_eq!(s, before, "errors change nothing");
}

#[test]
fn error_messages_carry_hints() {
    let mut s = FeatureSet::default();
    let msg = |s: &mut FeatureSet, t: &str| s.apply(t).unwrap_err().to_string();
    assert!(msg(&mut s, "PREEMT_SHORT").ends_with("did you mean PREEMPT_SHORT?"));
    assert!(msg(&mut s, "NO_PREEMT_SHORT").ends_with("did you mean NO_PREEMPT_SHORT?"));
    assert!(msg(&mut s, "no_next_buddy").ends_with("did you mean NO_NEXT_BUDDY?"));
    assert!(msg(&mut s, "nb_mode=x").ends_with("did you mean NB_MODE?"));
    assert!(!msg(&mut s, "FOO_BAR").contains("did you mean"));
    assert!(msg(&mut s, "NB_MODE=v5").contains("expected one of legacy, mel_v5, mainline"));
    assert!(msg(&mut s, "LAG_CLAMP")
        .contains("LAG_CLAMP=VALUE with VALUE one of 2slice_tick, maxslice_tick"));
    assert!(msg(&mut s, "NO_PREEMPT_SHORT=0").contains("write PREEMPT_SHORT or NO_PREEMPT_SHORT"));
    assert!(msg(&mut s, "NO_DELAY_LAG").contains("DELAY_LAG=VALUE"));
    let e: Box<dyn std::error::Error> = Box::new(FeatureError::MissingValue { name: "NB_MODE" });
    assert!(e.to_string().starts_with("NB_MODE needs a value"));
}

#[test]
fn not_modelled_names_are_kept() {
    let mut s = FeatureSet::new(Profile::V7_1);
    let before = s.features;
    assert_eq!(s.apply("TTWU_QUEUE"), Ok(Applied::NotModelled));
    assert_eq!(s.apply("UTIL_EST"), Ok(Applied::NotModelled));
    assert_eq!(s.apply("NO_TTWU_QUEUE"), Ok(Applied::NotModelled));
    assert_eq!(s.apply("NO_GENTLE_FAIR_SLEEPERS"), Ok(Applied::NotModelled));
    assert_eq!(s.features, before);
    let expect = [
        ("TTWU_QUEUE", false),
        ("UTIL_EST", true),
        ("GENTLE_FAIR_SLEEPERS", false),
    ];
    assert_eq!(s.not_modelled, expect.map(|(n, v)| (n.to_string(), v)));
    assert_eq!(
        s.canonical_tokens(),
        ["NO_TTWU_QUEUE", "UTIL_EST", "NO_GENTLE_FAIR_SLEEPERS"]
    );
    assert_eq!(
        s.apply("TTWU_QUEUE=1"),
        Err(FeatureError::UnexpectedValue {
            name: "TTWU_QUEUE".into()
        })
    );
}

#[test]
fn aliases_set_and_reset_the_enum() {
    let mut s = FeatureSet::new(Profile::V7_1);
    s.apply("PROT_INELIGIBLE").unwrap();
    assert_eq!(s.features.prot_set, ProtSet::Ineligible);
    assert_eq!(s.canonical_tokens(), ["PROT_SET=INELIGIBLE"]);
    s.apply("NO_PROT_STASH").unwrap(); // other value: no-op
    assert_eq!(s.features.prot_set, ProtSet::Ineligible);
    s.apply("NO_PROT_INELIGIBLE").unwrap();
    assert_eq!(s.features.prot_set, ProtSet::Mainline);
    assert!(s.canonical_tokens().is_empty());
    s.apply("PROT_ALIGN_UPDATE").unwrap();
    s.apply("PROT_CAP_MIN_SLICE").unwrap();
    assert_eq!(
        s.canonical_tokens(),
        ["PROT_SET=CAP_MIN_SLICE", "PROT_UPDATE=ALIGN"]
    );
    s.apply("NO_PROT_PZ_RUNTIME").unwrap();
    assert_eq!(s.features.prot_update, ProtUpdate::Align);
    s.apply("NO_PROT_ALIGN_UPDATE").unwrap();
    assert_eq!(s.features.prot_update, ProtUpdate::Mainline);
    // On v6.12 (default STASH) NO_PROT_STASH resets to MAINLINE.
    let s = set(Profile::V6_12, &["NO_PROT_STASH"]);
    assert_eq!(s.canonical_tokens(), ["PROT_SET=MAINLINE"]);
    for a in ["NB_LEGACY", "NB_MEL_V5"] {
        assert!(matches!(
            FeatureSet::default().apply(a),
            Err(FeatureError::Unknown { .. })
        ));
    }
}

#[test]
fn canonical_tokens_and_rebase() {
    assert!(FeatureSet::default().canonical_tokens().is_empty());
    for p in Profile::ALL {
        assert!(FeatureSet::new(p).canonical_tokens().is_empty(), "{p}");
    }
    let mut s = set(
        Profile::V7_1,
        &[
            "NEXT_BUDDY",
            "NO_RUN_TO_PARITY",
            "NB_MODE=MAINLINE",
            "LAG_CLAMP=2slice_tick",
        ],
    );
    assert_eq!(
        s.canonical_tokens(),
        ["NO_RUN_TO_PARITY", "NEXT_BUDDY", "LAG_CLAMP=2slice_tick"]
    );
    s.set_profile(Profile::V6_19Rc1);
    assert_eq!(s.profile, Profile::V6_19Rc1);
    assert!(s.features.next_buddy && !s.features.run_to_parity);
    // NB_MODE=MAINLINE now differs from 6.19's mel_v5; LAG_CLAMP matches.
    assert_eq!(
        s.canonical_tokens(),
        ["NO_RUN_TO_PARITY", "NB_MODE=mainline"]
    );
    assert_eq!(s.tokens().len(), 4);
    let mut s = set(
        Profile::V7_1,
        &["NEXT_BUDDY", "NO_RUN_TO_PARITY", "TTWU_QUEUE"],
    );
    s.set_profile(Profile::V6_19Rc1);
    assert_eq!(s.canonical_tokens(), ["NO_RUN_TO_PARITY", "TTWU_QUEUE"]);
    s.set_profile(Profile::V7_1);
    assert_eq!(
        s.canonical_tokens(),
        ["NO_RUN_TO_PARITY", "NEXT_BUDDY", "TTWU_QUEUE"]
    );
    // Replay order matters: a later token wins.
    let mut s = set(Profile::V6_19Rc1, &["NO_NEXT_BUDDY", "NEXT_BUDDY"]);
    s.set_profile(Profile::V6_18);
    assert_eq!(s.canonical_tokens(), ["NEXT_BUDDY"]);
}

#[test]
fn profile_defaults() {
    let d = |p| Features::for_profile(p);
    assert_eq!(Features::default(), d(Profile::V7_2));
    // 7.2.13 differs from 7.1 only in HRTICK (features.h under
    // CONFIG_HRTIMER_REARM_DEFERRED) and how it is armed.
    assert_eq!(
        d(Profile::V7_2),
        Features {
            hrtick: true,
            hrtick_arm: HrtickArm::Deadline,
            ..d(Profile::V7_1)
        }
    );
    let m = d(Profile::V7_1);
    assert!(m.place_lag && m.run_to_parity && m.preempt_short && !m.next_buddy && m.ps_clear_buddy);
    assert!(!m.hrtick && m.ni_random && m.ni_rate && !m.prot_lag_aware && !m.wa_slice);
    assert_eq!(
        (m.lag_clamp, m.delay_lag, m.nb_mode),
        (LagClamp::MaxSliceTick, DelayLag::V7_1, NbMode::Mainline)
    );
    assert_eq!(m.normalized_base_slice_ns, 700_000);

    let a = d(Profile::V6_12);
    assert_eq!(
        (a.prot_set, a.nb_mode, a.normalized_base_slice_ns),
        (ProtSet::Stash, NbMode::Legacy, 700_000)
    );
    assert_eq!(
        (a.lag_clamp, a.delay_lag),
        (LagClamp::TwoSliceTick, DelayLag::V6_12)
    );
    assert!(!a.ps_clear_buddy && a.ni_random && !a.ni_rate && !a.next_buddy);

    let b = d(Profile::V6_18);
    assert_eq!(
        (b.prot_set, b.nb_mode, b.normalized_base_slice_ns),
        (ProtSet::Mainline, NbMode::Legacy, 700_000)
    );
    assert!(!b.ps_clear_buddy && !b.ni_random && !b.ni_rate);

    let c = d(Profile::V6_19Rc1);
    assert_eq!(
        (c.nb_mode, c.lag_clamp, c.delay_lag),
        (NbMode::MelV5, LagClamp::TwoSliceTick, DelayLag::V6_12)
    );
    assert!(
        c.next_buddy
            && c.nb_resched_ineligible_waker
            && c.ni_random
            && !c.ni_rate
            && !c.ps_clear_buddy
    );

    let t = d(Profile::Tip2026_09);
    assert!(
        t.ps_ignore_need_resched
            && t.ps_cancel_if_eligible
            && t.prot_always_update
            && t.prot_lag_aware
    );
    assert!(t.ps_short_buddy_tie && t.ps_clear_buddy && !t.lag_decay_sleep && !t.next_buddy);
    assert_eq!(
        (t.prot_set, t.prot_update),
        (ProtSet::CapMinSlice, ProtUpdate::Align)
    );
    assert_eq!(
        FeatureSet::new(Profile::Tip2026_09).debugfs_line(),
        V7_1_LINE
    );

    for (i, p) in Profile::ALL.into_iter().enumerate() {
        for q in &Profile::ALL[..i] {
            assert_ne!(d(p), d(*q), "{p} == {q}");
        }
    }
}

#[test]
fn profile_names() {
    for p in Profile::ALL {
        assert_eq!(Profile::parse(p.name()), Some(p));
        assert_eq!(p.to_string(), p.name());
    }
    assert_eq!(Profile::default(), Profile::V7_2);
    assert_eq!(Profile::parse("6.18"), Some(Profile::V6_18));
    assert_eq!(Profile::parse(" V6.19-RC1 "), Some(Profile::V6_19Rc1));
    assert_eq!(Profile::parse("TIP-2026-09"), Some(Profile::Tip2026_09));
    assert_eq!(Profile::parse("v6.6"), None);
    assert_eq!(Profile::parse(""), None);
    assert_eq!(NbMode::parse("MEL_V5"), Some(NbMode::MelV5));
    assert_eq!(LagClamp::MaxSliceTick.to_string(), "maxslice_tick");
    assert_eq!(DelayLag::VALUES, ["v6.12", "v7.1"]);
}

#[test]
fn pasted_old_line_warns_only_on_unknown_names() {
    let old = "GENTLE_FAIR_SLEEPERS START_DEBIT NO_NEXT_BUDDY LAST_BUDDY CACHE_HOT_BUDDY WAKEUP_PREEMPTION \
               NO_HRTICK NO_HRTICK_DL NO_DOUBLE_TICK NONTASK_CAPACITY TTWU_QUEUE NO_SIS_PROP SIS_UTIL \
               NO_WARN_DOUBLE_CLOCK RT_PUSH_IPI NO_RT_RUNTIME_SHARE NO_LB_MIN ATTACH_AGE_LOAD NO_WA_IDLE \
               WA_WEIGHT WA_BIAS UTIL_EST UTIL_EST_FASTUP NO_LATENCY_WARN ALT_PERIOD BASE_SLICE FOO_BAR \n";
    let mut s = FeatureSet::new(Profile::V6_18);
    let w = s.apply_debugfs_line(old);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].token, "FOO_BAR");
    assert!(w[0].message.contains("unknown sched feature `FOO_BAR`"));
    assert!(w[0].to_string().starts_with("ignored `FOO_BAR`"));
    assert!(!s.features.wa_idle && s.features.wa_bias);
    let nm = |n: &str| s.not_modelled.iter().find(|(m, _)| m == n).map(|e| e.1);
    assert_eq!(nm("START_DEBIT"), Some(true));
    assert_eq!(nm("SIS_PROP"), Some(false));
    assert_eq!(nm("RT_PUSH_IPI"), Some(true));
    assert_eq!(s.not_modelled.len(), 18);
    assert_eq!(s.canonical_tokens()[0], "NO_WA_IDLE");
    assert!(s
        .debugfs_line()
        .contains(" NO_WARN_DOUBLE_CLOCK RT_PUSH_IPI NO_RT_RUNTIME_SHARE "));
    // Commas work too.
    let mut s = FeatureSet::default();
    assert_eq!(
        s.apply_debugfs_line("NO_PLACE_LAG,,NB_MODE=legacy, PROT_SET=nope")
            .len(),
        1
    );
    assert!(!s.features.place_lag && s.features.nb_mode == NbMode::Legacy);
}

#[test]
fn base_slice_scales_with_cpus() {
    let f = Features::default();
    let got: Vec<u64> = [0, 1, 2, 3, 4, 7, 8, 64]
        .map(|n| f.base_slice_ns(n))
        .to_vec();
    assert_eq!(
        got,
        [700_000, 700_000, 1_400_000, 1_400_000, 2_100_000, 2_100_000, 2_800_000, 2_800_000]
    );
    assert_eq!(
        Features::for_profile(Profile::V6_12).base_slice_ns(8),
        2_800_000
    );
    assert_eq!(Features::default().base_slice_ns(u32::MAX), 2_800_000);
}

#[test]
fn canonical_tokens_round_trip() {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut rand = move |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    for p in Profile::ALL {
        for _ in 0..200 {
            let mut s = FeatureSet::new(p);
            for _ in 0..rand(12) {
                let t = if rand(5) == 0 {
                    let a = &ALIASES[rand(ALIASES.len())];
                    format!("{}{}", ["", "NO_"][rand(2)], a.name)
                } else {
                    let i = &FEATURES[rand(FEATURES.len())];
                    match i.kind {
                        FeatureKind::Bool => format!("{}{}", ["", "NO_"][rand(2)], i.name),
                        FeatureKind::Enum(v) => {
                            let v = v[rand(v.len())];
                            let v = if rand(2) == 0 {
                                v.to_ascii_lowercase()
                            } else {
                                v.to_ascii_uppercase()
                            };
                            format!("{}={v}", i.name)
                        }
                    }
                };
                s.apply(&t).unwrap_or_else(|e| panic!("{t}: {e}"));
            }
            let canon = s.canonical_tokens();
            let mut r = FeatureSet::new(p);
            for t in &canon {
                r.apply(t).unwrap();
            }
            assert_eq!(r.features, s.features, "{p} {canon:?}");
            assert_eq!(r.not_modelled, s.not_modelled);
            assert_eq!(r.canonical_tokens(), canon);
            assert!(canon
                .iter()
                .all(|t| alias_info(t.trim_start_matches("NO_")).is_none()));
            // Re-basing onto the same profile is the identity.
            let mut same = s.clone();
            same.set_profile(p);
            assert_eq!(same, s);
        }
    }
}
