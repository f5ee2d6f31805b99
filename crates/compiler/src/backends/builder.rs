//! The build.rs entry point (SPEC §9), in the style of `prost-build`:
//!
//! ```no_run
//! // build.rs, in `fn main()`:
//! mcp_resolve::Builder::new()
//!     .rules("rules/server.yaml")
//!     .compile()
//!     .unwrap_or_else(|e| {
//!         e.emit_cargo_errors();
//!         std::process::exit(1)
//!     });
//! ```
//!
//! and in the crate: `mod resolve { include!(concat!(env!("OUT_DIR"), "/server_resolve.rs")); }`.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::codegen::{self, Options};
use crate::diagnostic::{self, Severity};
use crate::project::{self, Project};

/// Generates a resolver from rules files at build time.
#[derive(Clone, Debug)]
pub struct Builder {
    rules: Vec<PathBuf>,
    out_dir: Option<PathBuf>,
    out_file: Option<PathBuf>,
    runtime_path: String,
    cargo_instructions: bool,
    load: project::LoadOptions,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

/// One problem, located when it comes from a rules file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// `file:line:column`, when known.
    pub location: Option<String>,
    /// What is wrong, on one line (`error[code]: message` for diagnostics).
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Some(at) => write!(f, "{at}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// Why [`Builder::compile`] failed: every problem found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The problems, in file order.
    pub problems: Vec<Problem>,
}

impl Error {
    fn one(message: impl Into<String>) -> Self {
        Error {
            problems: vec![Problem {
                location: None,
                message: message.into(),
            }],
        }
    }

    /// Prints each problem as a `cargo::error=` line (`file:line:col: message`),
    /// which Cargo shows as a build error.
    pub fn emit_cargo_errors(&self) {
        for p in &self.problems {
            println!("cargo::error={}", one_line(&p.to_string()));
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// Cargo instructions are one line each.
fn one_line(s: &str) -> String {
    s.replace(['\r', '\n'], " ")
}

impl Builder {
    /// A builder with no rules, writing to `$OUT_DIR`.
    pub fn new() -> Self {
        Builder {
            rules: Vec::new(),
            out_dir: None,
            out_file: None,
            runtime_path: codegen::Options::default().runtime_path,
            cargo_instructions: true,
            load: project::LoadOptions::default().without_files(),
        }
    }

    /// Adds a rules file, or a directory of them. Relative paths are relative
    /// to the working directory (the crate's root in a build script).
    pub fn rules(mut self, path: impl AsRef<Path>) -> Self {
        self.rules.push(path.as_ref().to_path_buf());
        self
    }

    /// Where to write (default: `$OUT_DIR`).
    pub fn out_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// The file to write, relative to the output directory unless absolute
    /// (default: `<stem>_resolve.rs`, `<stem>` being the first rules file's
    /// name without its extension).
    pub fn out_file(mut self, file: impl AsRef<Path>) -> Self {
        self.out_file = Some(file.as_ref().to_path_buf());
        self
    }

    /// The path generated code uses for the runtime crate (default
    /// `::mcp_resolve_runtime`), for crates that re-export it.
    pub fn runtime_path(mut self, path: impl Into<String>) -> Self {
        self.runtime_path = path.into();
        self
    }

    /// Whether to print `cargo:rerun-if-changed` and `cargo::warning` lines
    /// (default `true`; turn off outside build scripts).
    pub fn cargo_instructions(mut self, on: bool) -> Self {
        self.cargo_instructions = on;
        self
    }

    /// The largest rules or schema file read, in bytes (default 8 MiB, as
    /// the CLI's `--max-file-bytes`).
    pub fn max_file_bytes(mut self, bytes: usize) -> Self {
        self.load = self.load.with_max_file_bytes(bytes);
        self
    }

    /// The pattern analysis's limits (default [`crate::AnalysisLimits::default`],
    /// as the CLI's `--analysis-*` options).
    pub fn analysis_limits(mut self, limits: crate::AnalysisLimits) -> Self {
        self.load = self.load.with_analysis(limits);
        self
    }

    /// Threads for parsing, checking and analysing (default 0: every core,
    /// as the CLI's `-j`). The generated file is the same for any value; a
    /// build that wants to leave cores to cargo's other jobs sets 1.
    pub fn jobs(mut self, jobs: usize) -> Self {
        self.load = self.load.with_jobs(jobs);
        self
    }

    /// The path [`Builder::compile`] writes to.
    pub fn output_path(&self) -> Result<PathBuf, Error> {
        let file = match &self.out_file {
            Some(f) => f.clone(),
            None => {
                let stem = self
                    .rules
                    .first()
                    .and_then(|p| p.file_stem())
                    .and_then(|s| s.to_str())
                    .ok_or_else(|| Error::one("no rules files given to the builder"))?;
                PathBuf::from(format!("{stem}_resolve.rs"))
            }
        };
        if file.is_absolute() {
            return Ok(file);
        }
        let dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or_else(|| {
                    Error::one("OUT_DIR is not set: call the builder from build.rs, or set out_dir")
                })?,
        };
        Ok(dir.join(file))
    }

    /// Compiles the rules and returns the generated code without writing it.
    pub fn generate(&self) -> Result<String, Error> {
        Ok(self.generate_parts()?.concat())
    }

    fn generate_parts(&self) -> Result<Vec<String>, Error> {
        if self.rules.is_empty() {
            return Err(Error::one("no rules files given to the builder"));
        }
        if self.cargo_instructions {
            for path in &self.rules {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
        let project =
            project::load_with(&self.rules, &self.load).map_err(|e| Error::one(e.to_string()))?;
        if self.cargo_instructions {
            for path in &project.inputs {
                if !self.rules.contains(path) {
                    println!("cargo:rerun-if-changed={}", path.display());
                }
            }
            for d in &project.diagnostics {
                if d.severity == Severity::Warning {
                    println!(
                        "cargo::warning={}",
                        one_line(&problem(&project, d).to_string())
                    );
                }
            }
        }
        if project.has_errors() {
            return Err(Error {
                problems: project
                    .diagnostics
                    .iter()
                    .filter(|d| d.severity == Severity::Error)
                    .map(|d| problem(&project, d))
                    .collect(),
            });
        }
        self.generate_project_parts(&project)
    }

    /// Generates the resolver of a project loaded without errors.
    pub fn generate_project(&self, project: &Project) -> Result<String, Error> {
        Ok(self.generate_project_parts(project)?.concat())
    }

    /// [`Builder::generate_project`]'s file in parts, to be written one after
    /// the other with [`write_parts_if_changed`] rather than joined (the
    /// CLI's `generate` comes through here, so both write the same file).
    pub fn generate_project_parts(&self, project: &Project) -> Result<Vec<String>, Error> {
        let server = project
            .single_server()
            .map_err(|e| Error::one(e.to_string()))?;
        let options = Options {
            runtime_path: self.runtime_path.clone(),
            sources: project.inputs.iter().map(|p| display_source(p)).collect(),
            jobs: self.load.jobs,
        };
        codegen::generate_parts(server, &options).map_err(|e| Error::one(e.to_string()))
    }

    /// Compiles the rules and writes the resolver (only when its content
    /// changed, so dependent code is not rebuilt needlessly). Returns the path.
    pub fn compile(&self) -> Result<PathBuf, Error> {
        let out = self.output_path()?;
        let code = self.generate_parts()?;
        write_parts_if_changed(&out, &code)
            .map_err(|e| Error::one(format!("cannot write `{}`: {e}", out.display())))?;
        Ok(out)
    }
}

fn problem(project: &Project, d: &diagnostic::Diagnostic) -> Problem {
    let location = diagnostic::position(&project.sources, d)
        .map(|p| format!("{}:{}:{}", p.file, p.line, p.column));
    let mut message = format!(
        "{}[{}]: {}",
        d.severity.as_str(),
        d.code.as_str(),
        d.message
    );
    if let Some(help) = &d.help {
        message.push_str(&format!(" (help: {help})"));
    }
    Problem { location, message }
}

/// How an input is named in the generated header: by its file name, so the
/// output is the same whichever directory the rules are given from.
pub fn display_source(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Whether `path` is a regular file holding exactly `parts`, one after the
/// other: compared by length first, then a block at a time, so a large
/// output is never read into memory whole (and a device or FIFO is never
/// opened).
fn holds_exactly<P: AsRef<[u8]>>(path: &Path, parts: &[P]) -> bool {
    use std::io::Read;
    let len: u64 = parts.iter().map(|p| p.as_ref().len() as u64).sum();
    let same_size = std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == len);
    if !same_size {
        return false;
    }
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    let mut block = vec![0u8; 1 << 16];
    for part in parts {
        let mut rest = part.as_ref();
        while !rest.is_empty() {
            let want = rest.len().min(block.len());
            if file.read_exact(&mut block[..want]).is_err() || block[..want] != rest[..want] {
                return false;
            }
            rest = &rest[want..];
        }
    }
    // Nothing after the parts (the file may have grown since its length was read).
    matches!(file.read(&mut block[..1]), Ok(0))
}

/// Writes through a temporary file and a rename; leaves an identical file alone.
pub fn write_if_changed(path: &Path, text: &str) -> std::io::Result<()> {
    write_parts_if_changed(path, &[text])
}

/// [`write_if_changed`] for a text in parts (as
/// [`Builder::generate_project_parts`] returns it), written one after the
/// other without being joined first.
pub fn write_parts_if_changed<P: AsRef<[u8]>>(path: &Path, parts: &[P]) -> std::io::Result<()> {
    use std::io::Write;
    if holds_exactly(path, parts) {
        return Ok(());
    }
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!(
        "{}.tmp{}",
        path.extension().and_then(|e| e.to_str()).unwrap_or(""),
        std::process::id()
    ));
    let written = std::fs::File::create(&tmp)
        .and_then(|file| {
            let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
            for part in parts {
                out.write_all(part.as_ref())?;
            }
            out.into_inner().map(drop).map_err(|e| e.into_error())
        })
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_file_holds_exactly_its_bytes_and_nothing_else_does() {
        let dir = std::env::temp_dir().join(format!("mcp-resolve-holds-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("out.rs");
        // Longer than one block, so the comparison crosses blocks.
        let text: String = (0..200_000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        std::fs::write(&file, &text).unwrap();
        let bytes = text.as_bytes();
        assert!(holds_exactly(&file, &[bytes]));
        // In parts, split anywhere (inside a block, at its edge, empty parts).
        for cut in [0, 1, 65_535, 65_536, 65_537, 150_000, bytes.len()] {
            let (a, b) = bytes.split_at(cut);
            assert!(holds_exactly(&file, &[a, b]), "{cut}");
            assert!(holds_exactly(&file, &[a, &[], b]), "{cut}");
        }
        let mut changed = text.clone().into_bytes();
        changed[150_000] = b'!';
        assert!(!holds_exactly(&file, &[&changed]));
        let (a, b) = changed.split_at(100_000);
        assert!(!holds_exactly(&file, &[a, b]));
        assert!(!holds_exactly(&file, &[&bytes[..1000]]));
        assert!(!holds_exactly(&dir.join("missing"), &[b""]));
        assert!(!holds_exactly(&dir, &[b""]));
        assert!(!holds_exactly(Path::new("/dev/null"), &[b""]));
        // Written in parts, read back whole; an identical file is left alone.
        let out = dir.join("parts.rs");
        write_parts_if_changed(&out, &["ab", "", "cd"]).unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "abcd");
        let before = std::fs::metadata(&out).unwrap().modified().unwrap();
        write_parts_if_changed(&out, &["a", "bcd"]).unwrap();
        assert_eq!(std::fs::metadata(&out).unwrap().modified().unwrap(), before);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
