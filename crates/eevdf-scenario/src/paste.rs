//! Pasting a scenario back from a mail: the text block is the
//! authoritative form. Quoting (`> `, `>> `, `> > `) is removed, prose
//! around the block is skipped, and a share link on its own is accepted
//! too. Errors point at the line of the original paste.

use crate::baseline::Pair;
use crate::link;
use crate::scenario::{Scenario, HEADER};
use crate::ParseError;

/// Removes mail quoting from one line.
fn unquote(line: &str) -> &str {
    let mut l = line;
    loop {
        let t = l.trim_start_matches(' ');
        match t.strip_prefix('>') {
            Some(rest) => l = rest.strip_prefix(' ').unwrap_or(rest),
            None => return l,
        }
    }
}

/// Finds the scenario block (or a link) in pasted text and parses it.
pub fn parse_pasted(text: &str) -> Result<Scenario, ParseError> {
    find_block(text, Scenario::parse, link::decode)
}

/// [`parse_pasted`] keeping the block's pinned baseline, if any.
pub fn parse_pasted_pair(text: &str) -> Result<Pair, ParseError> {
    find_block(text, Pair::parse, link::decode_pair)
}

// Generic so that the page, which reads only scenarios, links no A/B
// parser (its wasm budget).
fn find_block<T>(
    text: &str,
    parse: impl Fn(&str) -> Result<T, ParseError>,
    decode: impl Fn(&str) -> Result<T, ParseError>,
) -> Result<T, ParseError> {
    let lines: Vec<&str> = text.lines().map(unquote).collect();
    let start = lines.iter().position(|l| l.trim_end() == HEADER);
    let Some(start) = start else {
        // No block: a link alone still works.
        if let Some(l) = lines.iter().find(|l| link::looks_like_link(l.trim())) {
            return decode(l.trim());
        }
        return Err(ParseError::new(
            1,
            1,
            format!("no `{HEADER}` line found"),
            "paste the scenario block from the mail (quoting is fine) or a share link",
        ));
    };
    let end = lines[start..]
        .iter()
        .position(|l| l.trim_end() == "end")
        .map_or(lines.len(), |e| start + e + 1);
    let mut block = lines[start..end].join("\n");
    block.push('\n');
    parse(&block).map_err(|mut e| {
        e.line += start;
        e
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_blocks_with_prose_parse() {
        let mail = "On Mon, Vincent wrote:\n> > Here is the setup:\n> > eevdf-scenario v1\n> > machine rb5\n> > task ct kind=timer period=3777us slice=8ms\n> > end\n> > and the numbers below.\n";
        let sc = parse_pasted(mail).unwrap();
        assert_eq!(sc.sim.tasks[0].name, "ct");
        let bad = "> eevdf-scenario v1\n> hz 7\n> end\n";
        assert_eq!(parse_pasted(bad).unwrap_err().line, 2);
        assert!(parse_pasted("no scenario here").is_err());
        assert!(parse_pasted("see https://x/play/#v1;machine+up;task+a+kind=hog").is_ok());
        let ab = "> eevdf-scenario v1\n> task a kind=hog\n> baseline\n> hz 1000\n> end\n";
        let p = parse_pasted_pair(ab).unwrap();
        assert_eq!(p.a.unwrap().sim.hz, 1000);
        let e = parse_pasted_pair("> eevdf-scenario v1\n> baseline\n> hz 7\n> end\n").unwrap_err();
        assert_eq!(e.line, 3);
    }
}
