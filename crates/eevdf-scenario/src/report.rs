//! Reports: text, JSON (eevdf.result.v1) and LKML tables.
