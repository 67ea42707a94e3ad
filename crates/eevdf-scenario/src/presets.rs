//! Built-in scenarios (presets).
