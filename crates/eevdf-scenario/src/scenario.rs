//! Scenario text format v1.
