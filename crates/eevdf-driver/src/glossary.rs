//! Teaching mode's glossary: the words of EEVDF for a student who knows
//! round-robin, and the split of a caption into plain text and the
//! terms it uses, so every tour caption can link into the glossary (a
//! test holds each caption to at least one term).

/// One glossary entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Term {
    /// The anchor (`glossary-ID`).
    pub id: &'static str,
    /// The term as the entry names it.
    pub name: &'static str,
    /// The spellings a caption uses for it, matched as whole words.
    pub words: &'static [&'static str],
    pub text: &'static str,
}

/// The entries, in the order a student meets them.
pub static GLOSSARY: &[Term] = &[
    Term {
        id: "weight",
        name: "weight (nice)",
        words: &["weight", "weights", "nice"],
        text: "How much CPU a task is entitled to, relative to the others: nice 0 is \
               1024, each nice step is about 10 % apart. Round-robin gives every \
               task the same turn; EEVDF gives each a share proportional to its weight.",
    },
    Term {
        id: "vruntime",
        name: "vruntime",
        words: &["vruntime", "virtual clock"],
        text: "A task's virtual run time: the time it ran, times 1024 / its weight. \
               A heavy task's virtual clock runs slowly, a light one's fast, so equal \
               vruntimes mean fair shares.",
    },
    Term {
        id: "v",
        name: "V (avg_vruntime)",
        words: &["V"],
        text: "The weighted average vruntime of the queue: where every task would be \
               if the CPU had been shared perfectly. The picture centres it at 0.",
    },
    Term {
        id: "lag",
        name: "lag",
        words: &["lag", "Lag"],
        text: "V - vruntime (times the weight in the kernel): the service a task is \
               owed (positive) or has had too much of (negative). PLACE_LAG keeps it \
               over a sleep, so sleeping neither earns nor loses CPU.",
    },
    Term {
        id: "eligible",
        name: "eligible",
        words: &["eligible", "eligibility"],
        text: "A task whose vruntime is not after V (lag at least 0): it has not run \
               ahead of its share. Only eligible tasks may be picked; in the picture \
               they sit left of the V line.",
    },
    Term {
        id: "slice",
        name: "slice (request)",
        words: &["slice", "slices", "request"],
        text: "How long a task asks to run at a time (sched_setattr's sched_runtime; \
               base_slice_ns by default). Shorter slices mean earlier deadlines: \
               more frequent, shorter turns.",
    },
    Term {
        id: "deadline",
        name: "virtual deadline",
        words: &["deadline", "deadlines", "virtual deadline"],
        text: "vruntime + slice x 1024 / weight: when the task's current request would \
               end in virtual time. Among eligible tasks EEVDF runs the one with the \
               earliest virtual deadline (pick_eevdf): the bars in the picture end there.",
    },
    Term {
        id: "pick",
        name: "pick",
        words: &["pick", "picked", "pick_eevdf"],
        text: "The scheduler's choice of the next task to run on a CPU: the eligible \
               entity with the earliest deadline, unless a buddy or protection keeps \
               another.",
    },
    Term {
        id: "protection",
        name: "protection (RUN_TO_PARITY, vprot)",
        words: &["protection", "protected", "vprot", "RUN_TO_PARITY"],
        text: "The running task keeps the CPU until its vruntime reaches vprot, set \
               when it was picked (its deadline, or a minimum slice later), even if a \
               waking task has an earlier deadline. It stops tasks near V from \
               swapping at every tick.",
    },
    Term {
        id: "preempt-short",
        name: "PREEMPT_SHORT",
        words: &["PREEMPT_SHORT"],
        text: "A waking task with a shorter slice than the running one cancels the \
               running task's protection, so latency-sensitive tasks with short \
               slices preempt at once.",
    },
    Term {
        id: "buddy",
        name: "next buddy (NEXT_BUDDY, PICK_BUDDY)",
        words: &[
            "buddy",
            "buddies",
            "NEXT_BUDDY",
            "PICK_BUDDY",
            "cfs_rq->next",
        ],
        text: "A task the scheduler remembers to run next (cfs_rq->next), such as a \
               wakee that preempted. With PICK_BUDDY an eligible buddy is picked ahead \
               of the earliest deadline, which keeps cache-warm pairs together.",
    },
    Term {
        id: "wakeup",
        name: "wakeup (preemption)",
        words: &[
            "wakes",
            "wake",
            "wakeup",
            "wakee",
            "preempts",
            "preempt",
            "preempted",
        ],
        text: "A sleeping task becomes runnable. The scheduler then asks whether it \
               should run now instead of the current task (wakeup_preempt): it does if \
               a pick now would choose it.",
    },
    Term {
        id: "cgroup",
        name: "group (cgroup)",
        words: &["cgroups", "cgroup", "group"],
        text: "Tasks in a cgroup share one entity on the queue above them, with the \
               group's weight; the group's own queue shares that among its tasks.",
    },
];

/// A piece of a caption: text, or a glossary term as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    Text(&'a str),
    Term(&'a str, &'static Term),
}

/// Whether `b` is a word character (a term never starts or ends inside
/// a word: `V` is not the V of `vprot`).
fn word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The first whole-word spelling of any term at or after `from`:
/// `(start, spelling, term)`, the longest at the earliest position.
fn next_term(text: &str, from: usize) -> Option<(usize, &'static str, &'static Term)> {
    let mut best: Option<(usize, &'static str, &'static Term)> = None;
    for t in GLOSSARY {
        for w in t.words {
            let mut at = from;
            while let Some(i) = text[at..].find(w).map(|i| i + at) {
                let before = text[..i].chars().next_back();
                let after = text[i + w.len()..].chars().next();
                if !before.is_some_and(word_char) && !after.is_some_and(word_char) {
                    let better = match best {
                        None => true,
                        Some((j, bw, _)) => i < j || (i == j && w.len() > bw.len()),
                    };
                    if better {
                        best = Some((i, w, t));
                    }
                    break;
                }
                at = i + w.len();
            }
        }
    }
    best
}

/// `text` cut into plain text and the first use of each term.
pub fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    let mut at = 0;
    let mut from = 0;
    while let Some((i, w, t)) = next_term(text, from) {
        from = i + w.len();
        if seen.contains(&t.id) {
            continue;
        }
        seen.push(t.id);
        if i > at {
            out.push(Piece::Text(&text[at..i]));
        }
        out.push(Piece::Term(&text[i..i + w.len()], t));
        at = i + w.len();
    }
    if at < text.len() {
        out.push(Piece::Text(&text[at..]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caption_splits_into_text_and_its_terms_once() {
        let p =
            pieces("The pick takes the eligible entity left of V, not the vprot; eligible again.");
        let terms: Vec<&str> = p
            .iter()
            .filter_map(|x| match x {
                Piece::Term(_, t) => Some(t.id),
                Piece::Text(_) => None,
            })
            .collect();
        assert_eq!(terms, ["pick", "eligible", "v", "protection"]);
        let back: String = p
            .iter()
            .map(|x| match x {
                Piece::Text(s) | Piece::Term(s, _) => *s,
            })
            .collect();
        assert!(back.starts_with("The pick takes") && back.ends_with("eligible again."));
        // `V` inside a word is not V.
        assert!(pieces("Vincent")
            .iter()
            .all(|x| matches!(x, Piece::Text(_))));
    }

    #[test]
    fn every_tour_caption_links_into_the_glossary() {
        for tour in crate::tours::TOURS {
            for (i, s) in tour.steps.iter().enumerate() {
                let n = pieces(s.caption)
                    .iter()
                    .filter(|p| matches!(p, Piece::Term(..)))
                    .count();
                assert!(
                    n >= 1,
                    "tour {} step {}: no glossary term in {:?}",
                    tour.id,
                    i + 1,
                    s.caption
                );
            }
        }
        let mut ids: Vec<&str> = GLOSSARY.iter().map(|t| t.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), GLOSSARY.len(), "glossary ids are unique");
    }
}
