//! The `eevdf` command: run eevdf-playground scenarios headless from a terminal or CI.
//!
//! Exit codes are a contract (README "CLI"): 0 success, 1 a run failed,
//! 2 bad command line or bad input (with `line:column: message (hint)`).

#![forbid(unsafe_code)]

use std::io::Read;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Exit code for bad input (matches clap's own usage-error code).
const EXIT_BAD_INPUT: u8 = 2;

#[derive(Debug, Parser)]
#[command(
    name = "eevdf",
    version,
    about = "EEVDF scheduler playground, headless"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Apply a pasted debugfs features line (or tokens) over a kernel
    /// profile; print the effective debugfs line and the canonical tokens.
    Features {
        /// The line, e.g. "PLACE_LAG NO_NEXT_BUDDY"; `-` reads stdin.
        line: String,
        /// Kernel profile: v6.12, v6.18, v6.19-rc1, v7.1, tip-2026-09.
        #[arg(long, default_value = "v7.1")]
        profile: String,
    },
    /// Ideal long-run CPU shares of always-runnable tasks at the given nice levels.
    Shares {
        /// Nice levels, -20..=19.
        #[arg(required = true, allow_negative_numbers = true, value_parser = clap::value_parser!(i32).range(-20..=19))]
        nice: Vec<i32>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Features { line, profile } => {
            let Some(profile) = eevdf_core::Profile::parse(&profile) else {
                eprintln!("eevdf: unknown profile `{profile}` (hint: v6.12, v6.18, v6.19-rc1, v7.1, tip-2026-09)");
                return ExitCode::from(EXIT_BAD_INPUT);
            };
            let text = if line == "-" {
                let mut s = String::new();
                if let Err(e) = std::io::stdin().read_to_string(&mut s) {
                    eprintln!("eevdf: reading stdin: {e}");
                    return ExitCode::from(EXIT_BAD_INPUT);
                }
                s
            } else {
                line
            };
            if let Err(e) = eevdf_scenario::parse_features_line(&text) {
                eprintln!("eevdf: features: {e}");
                return ExitCode::from(EXIT_BAD_INPUT);
            }
            let mut set = eevdf_core::FeatureSet::new(profile);
            for w in set.apply_debugfs_line(&text) {
                eprintln!("eevdf: warning: {w}");
            }
            println!("profile   {}", set.profile.name());
            println!("debugfs   {}", set.debugfs_line().trim_end());
            println!("canonical {}", set.canonical_tokens().join(" "));
            for (name, on) in &set.not_modelled {
                let prefix = if *on { "" } else { "NO_" };
                println!("not modelled: {prefix}{name}");
            }
            ExitCode::SUCCESS
        }
        Command::Shares { nice } => {
            let shares = eevdf_sim::shares::ideal_shares_ppm(&nice);
            println!("{:>5} {:>7} {:>8}", "nice", "weight", "share");
            for (n, s) in nice.iter().zip(shares) {
                let w = eevdf_core::nice_to_weight(*n);
                println!("{n:>5} {w:>7} {:>7.3}%", s as f64 / 10_000.0);
            }
            ExitCode::SUCCESS
        }
    }
}
