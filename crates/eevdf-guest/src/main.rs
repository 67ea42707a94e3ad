//! `eevdf-guest`: PID 1 of a real-kernel run (see the crate docs).

fn main() {
    std::process::exit(eevdf_guest::main_entry());
}
