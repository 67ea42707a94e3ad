//! A sweep's output: one JSON line per cell (`eevdf.sweep.v1`), with the
//! grid's id, the cell's index and axis values, and its
//! `eevdf.result.v1` object or why it was skipped; and the merge of
//! shards' lines back into the whole grid's.

/// The `schema` of a sweep line.
pub const LINE_SCHEMA: &str = "eevdf.sweep.v1";

fn head(grid: &str, cell: usize, cells: usize, values: &[(String, String)]) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    let axes: Vec<String> = values
        .iter()
        .map(|(k, v)| format!("[{},{}]", q(k), q(v)))
        .collect();
    format!(
        "{{\"schema\":\"{LINE_SCHEMA}\",\"grid\":\"{grid}\",\"cell\":{cell},\"cells\":{cells},\"axes\":[{}]",
        axes.join(",")
    )
}

/// A run cell's line; `result` is its `eevdf.result.v1` JSON.
pub(super) fn result_line(
    grid: &str,
    cell: usize,
    cells: usize,
    values: &[(String, String)],
    result: &str,
) -> String {
    format!(
        "{},\"result\":{result}}}\n",
        head(grid, cell, cells, values)
    )
}

/// A cell whose combination of values cannot run, and why: marked, not
/// dropped.
pub(super) fn skipped_line(
    grid: &str,
    cell: usize,
    cells: usize,
    values: &[(String, String)],
    why: &str,
) -> String {
    let why = serde_json::to_string(why).unwrap_or_else(|_| "\"\"".into());
    format!("{},\"skipped\":{why}}}\n", head(grid, cell, cells, values))
}

/// A sweep line read back.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub grid: String,
    pub cell: usize,
    pub cells: usize,
    pub axes: Vec<(String, String)>,
    /// The `eevdf.result.v1` object, `None` for a skipped cell.
    pub result: Option<serde_json::Value>,
    pub skipped: Option<String>,
}

/// Reads one sweep line (`n` is its 1-based line number, for errors).
pub fn read_line(n: usize, text: &str) -> Result<Line, String> {
    let bad = |what: &str| format!("line {n}: {what}");
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| bad(&format!("not JSON ({e})")))?;
    if v.get("schema").and_then(|s| s.as_str()) != Some(LINE_SCHEMA) {
        return Err(bad(&format!("not an {LINE_SCHEMA} line")));
    }
    let int = |k: &str| {
        v.get(k)
            .and_then(serde_json::Value::as_u64)
            .and_then(|x| usize::try_from(x).ok())
            .ok_or_else(|| bad(&format!("no `{k}`")))
    };
    let (cell, cells) = (int("cell")?, int("cells")?);
    if cells > super::MAX_CELLS {
        return Err(bad(&format!(
            "a {cells}-cell grid; a sweep has at most {}",
            super::MAX_CELLS
        )));
    }
    if cell >= cells {
        return Err(bad(&format!("cell {cell} of a {cells}-cell grid")));
    }
    let axes = v
        .get("axes")
        .and_then(|a| a.as_array())
        .ok_or_else(|| bad("no `axes`"))?
        .iter()
        .map(|p| match p.as_array().map(Vec::as_slice) {
            Some([k, v]) => Some((k.as_str()?.to_string(), v.as_str()?.to_string())),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| bad("`axes` is not [[name, value], ...]"))?;
    Ok(Line {
        grid: v
            .get("grid")
            .and_then(|g| g.as_str())
            .ok_or_else(|| bad("no `grid`"))?
            .to_string(),
        cell,
        cells,
        axes,
        result: v.get("result").cloned(),
        skipped: v
            .get("skipped")
            .and_then(|s| s.as_str())
            .map(str::to_string),
    })
}

/// Joins shards' lines (in any order) into the grid's, in cell order:
/// the unsharded run's output, byte for byte. Refuses lines of two
/// grids, a cell twice, or a cell missing.
pub fn merge(texts: &[String]) -> Result<String, String> {
    let mut cells: Vec<Option<&str>> = Vec::new();
    let mut grid: Option<(String, usize)> = None;
    let mut n = 0;
    for text in texts {
        for raw in text.lines().filter(|l| !l.trim().is_empty()) {
            n += 1;
            let l = read_line(n, raw)?;
            match &grid {
                None => {
                    grid = Some((l.grid.clone(), l.cells));
                    cells = vec![None; l.cells];
                }
                Some((g, c)) if *g != l.grid || *c != l.cells => {
                    return Err(format!(
                        "line {n}: grid {} ({} cells) is not grid {g} ({c} cells); \
                         merge the shards of one sweep",
                        l.grid, l.cells
                    ))
                }
                Some(_) => {}
            }
            if cells[l.cell].replace(raw).is_some() {
                return Err(format!(
                    "line {n}: cell {} appears twice (a shard merged twice?)",
                    l.cell
                ));
            }
        }
    }
    if grid.is_none() {
        return Err("no sweep lines to merge".into());
    }
    let missing: Vec<String> = cells
        .iter()
        .enumerate()
        .filter(|(_, c)| c.is_none())
        .map(|(i, _)| i.to_string())
        .collect();
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(8).map(String::as_str).collect();
        return Err(format!(
            "{} of {} cells missing ({}{}): a shard did not run or was left out",
            missing.len(),
            cells.len(),
            shown.join(", "),
            if missing.len() > 8 { ", ..." } else { "" }
        ));
    }
    let mut out = String::new();
    for l in cells.into_iter().flatten() {
        out.push_str(l);
        out.push('\n');
    }
    Ok(out)
}
