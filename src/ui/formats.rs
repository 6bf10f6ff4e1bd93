//! What a person or a script asked to see: the report's format (`-o`) and
//! whose lines a drain writes (`--lines`). The command line offers them
//! (crate::cli); the screen and the report follow them.

/// `-o`: the report as a table, JSON or YAML.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Table,
    Json,
    Yaml,
}

/// `--lines`: whose lines a drain writes where.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LinesArg {
    Auto,
    Kubectl,
    Report,
}
