//! Loading: paths to sources, ASTs and checked servers.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::ast::RulesFile;
use crate::check::check_server;
use crate::diagnostic::{self, Code, Diagnostic, Severity};
use crate::ir::Server;
use crate::parse::yaml::{self, MAX_FILE_BYTES};
use crate::parse::{decode, dsl};
use crate::source::{FileId, SourceMap, Span};

/// Extensions of rules files picked up from directories.
pub const RULES_EXTENSIONS: &[&str] = &["yaml", "yml", "rules"];

/// Whether a path is in the `.rules` syntax (anything else is read as YAML).
pub fn is_dsl(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()) == Some("rules")
}

/// A compiled set of rules files.
#[derive(Debug)]
pub struct Project {
    /// The text of every file, for diagnostics.
    pub sources: SourceMap,
    /// The decoded files (none when loaded [`LoadOptions::without_files`]).
    pub files: Vec<RulesFile>,
    /// The servers they declare, lowered and checked.
    pub servers: Vec<Server>,
    /// Every finding, sorted.
    pub diagnostics: Vec<Diagnostic>,
    /// Every file read (rules and schema files), for `rerun-if-changed`.
    pub inputs: Vec<PathBuf>,
    /// The pattern analysis of each server's tools (by server, then tool),
    /// where it ran: what `explain` reports.
    pub(crate) analyses: Vec<Vec<Option<crate::analysis::ToolAnalysis>>>,
}

/// Why a project does not declare exactly one server.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ServerCountError {
    /// No file declares a server.
    #[error("no server found in the given rules files")]
    None,
    /// The files declare several servers (their names).
    #[error(
        "the given rules files declare {} servers ({}); give the files of one server",
        .0.len(),
        .0.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
    )]
    Many(Vec<String>),
}

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// Over the file-size limit ([`LoadOptions::max_file_bytes`]).
    #[error("file is {size} bytes, over the limit of {limit} bytes{RAISE_FILE_LIMIT}")]
    TooLarge {
        /// The file's size (or what was read of it).
        size: u64,
        /// The limit.
        limit: usize,
    },
    /// Not UTF-8.
    #[error("file is not valid UTF-8")]
    NotUtf8,
    /// Over the file-size limit, and not text either (a NUL byte, or bytes
    /// that are no UTF-8, near its start): no limit would make it a rules
    /// file.
    #[error(
        "file is not text (byte {offset} {what}): rules files are UTF-8 text (YAML or `.rules`)"
    )]
    NotText {
        /// Where the first byte that is not text is.
        offset: usize,
        /// What it is.
        what: &'static str,
    },
    /// A directory, device, FIFO or socket.
    #[error("not a regular file")]
    NotAFile,
    /// The operating system's error.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// A path that cannot be read at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// A directory that cannot be listed.
    #[error("cannot read `{}`: {source}", path.display())]
    Directory {
        /// The directory.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The paths name no rules file.
    #[error("cannot read `{}`: no rules files (`*.yaml`, `*.yml`, `*.rules`) found", path.display())]
    NoRulesFiles {
        /// The first path given.
        path: PathBuf,
    },
    /// A rules file that cannot be read.
    #[error("cannot read `{}`: {source}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: ReadError,
    },
}

impl LoadError {
    /// The path that cannot be read.
    pub fn path(&self) -> &Path {
        match self {
            LoadError::Directory { path, .. }
            | LoadError::NoRulesFiles { path }
            | LoadError::File { path, .. } => path,
        }
    }
}

impl Project {
    /// A project of nothing yet: what loading starts from.
    fn empty() -> Project {
        Project {
            sources: SourceMap::new(),
            files: Vec::new(),
            servers: Vec::new(),
            diagnostics: Vec::new(),
            inputs: Vec::new(),
            analyses: Vec::new(),
        }
    }

    /// Whether any finding is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
    }

    /// The single server of the project, or why there is not one.
    pub fn single_server(&self) -> Result<&Server, ServerCountError> {
        match self.servers.as_slice() {
            [one] => Ok(one),
            [] => Err(ServerCountError::None),
            many => Err(ServerCountError::Many(
                many.iter().map(|s| s.name.clone()).collect(),
            )),
        }
    }
}

/// Expands directories (their rules files, sorted by name, not recursive).
pub fn expand_paths(paths: &[PathBuf]) -> Result<Vec<PathBuf>, LoadError> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries = std::fs::read_dir(path).map_err(|source| LoadError::Directory {
                path: path.clone(),
                source,
            })?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.is_file()
                        && p.extension()
                            .and_then(|e| e.to_str())
                            .is_some_and(|e| RULES_EXTENSIONS.contains(&e))
                })
                .collect();
            found.sort();
            out.extend(found);
        } else {
            out.push(path.clone());
        }
    }
    Ok(out)
}

/// The message of a YAML reading error: the parser's, or for a document
/// over the size limit, the loader's (naming the setting that raises it).
fn yaml_message(e: &yaml::YamlError) -> String {
    match e.too_large {
        Some((size, limit)) => ReadError::TooLarge {
            size: size as u64,
            limit,
        }
        .to_string(),
        None => e.message.clone(),
    }
}

/// What a refused file's message says raises the limit.
pub(crate) const RAISE_FILE_LIMIT: &str =
    " (raise it with `--max-file-bytes`, or `Builder::max_file_bytes` in a build script)";

/// What loading may spend: the file-size limit and the pattern analysis's
/// budgets. The defaults are the limits documented in docs/performance.md.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct LoadOptions {
    /// The largest rules or schema file read, in bytes.
    pub max_file_bytes: usize,
    /// The bounds on each tool's pattern analysis and on the whole run.
    pub analysis: crate::analysis::Limits,
    /// Threads for per-file and per-tool work; 0 (the default) uses every
    /// core. Results never depend on it.
    pub jobs: usize,
    /// Told when loading enters each [`Stage`] (the command's progress
    /// indicator); never told anything that changes a result.
    pub progress: Option<fn(Stage)>,
    /// Whether [`Project::files`] keeps the decoded files once they are
    /// lowered (the default). A caller that only reads the servers turns
    /// it off: at 10,000 tools the decoded files are 200 MB that the later
    /// stages can use instead.
    pub keep_files: bool,
}

/// A stage of loading, as [`LoadOptions::progress`] is told it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stage {
    /// Reading and parsing this many rules files.
    Parsing {
        /// The number of files.
        files: usize,
    },
    /// Checking the tools of every server.
    Checking {
        /// The number of tools.
        tools: usize,
    },
    /// The pattern analysis of every tool.
    Analysing {
        /// The number of tools.
        tools: usize,
    },
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            max_file_bytes: MAX_FILE_BYTES,
            analysis: crate::analysis::Limits::default(),
            jobs: 0,
            progress: None,
            keep_files: true,
        }
    }
}

impl LoadOptions {
    /// These options with another file-size limit.
    pub fn with_max_file_bytes(mut self, bytes: usize) -> Self {
        self.max_file_bytes = bytes;
        self
    }

    /// These options with `jobs` threads (0: every core).
    pub fn with_jobs(mut self, jobs: usize) -> Self {
        self.jobs = jobs;
        self
    }

    /// These options telling `progress` each [`Stage`] loading enters.
    pub fn with_progress(mut self, progress: fn(Stage)) -> Self {
        self.progress = Some(progress);
        self
    }

    /// These options leaving [`Project::files`] empty once the files are
    /// lowered: for a caller that reads only the servers.
    pub fn without_files(mut self) -> Self {
        self.keep_files = false;
        self
    }

    /// These options with other analysis limits.
    pub fn with_analysis(mut self, limits: crate::analysis::Limits) -> Self {
        self.analysis = limits;
        self
    }
}

/// Reads a file, refusing anything over [`MAX_FILE_BYTES`]; see
/// [`read_within`].
pub fn read_limited(path: &Path) -> Result<String, ReadError> {
    read_within(path, MAX_FILE_BYTES)
}

/// Reads a file, refusing anything over `limit` bytes. Only regular files
/// are read — a device (`/dev/zero`) would never end and a FIFO would block
/// on opening — and the read itself is bounded by the bytes actually read,
/// not by the size the file claims.
pub fn read_within(path: &Path, limit: usize) -> Result<String, ReadError> {
    use std::io::Read;

    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(ReadError::NotAFile);
    }
    if meta.len() > limit as u64 {
        // Raising the limit is advice for a large text file only.
        if let Some((offset, what)) = not_text_near_start(path)? {
            return Err(ReadError::NotText { offset, what });
        }
        return Err(ReadError::TooLarge {
            size: meta.len(),
            limit,
        });
    }
    let file = std::fs::File::open(path)?;
    // The path may have changed between the two looks: check what was opened.
    if !file.metadata()?.is_file() {
        return Err(ReadError::NotAFile);
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit as u64 + 1).read_to_end(&mut bytes)?;
    if bytes.len() > limit {
        return Err(ReadError::TooLarge {
            size: bytes.len() as u64,
            limit,
        });
    }
    String::from_utf8(bytes).map_err(|_| ReadError::NotUtf8)
}

/// Where the first 8 KiB of the file at `path` stop being text, and what is
/// there: a NUL byte, or bytes that are no UTF-8 (a sequence cut at the end
/// of the 8 KiB is not counted).
fn not_text_near_start(path: &Path) -> Result<Option<(usize, &'static str)>, ReadError> {
    use std::io::Read;

    let mut prefix = Vec::with_capacity(8192);
    std::fs::File::open(path)?
        .take(8192)
        .read_to_end(&mut prefix)?;
    if let Some(offset) = prefix.iter().position(|&b| b == 0) {
        return Ok(Some((offset, "is NUL")));
    }
    Ok(match std::str::from_utf8(&prefix) {
        Err(e) if e.error_len().is_some() => Some((e.valid_up_to(), "begins no UTF-8 character")),
        _ => None,
    })
}

/// Loads, decodes, lowers and checks the rules files at `paths`.
pub fn load(paths: &[PathBuf]) -> Result<Project, LoadError> {
    load_with(paths, &LoadOptions::default())
}

/// [`load`] within `options`' limits.
pub fn load_with(paths: &[PathBuf], options: &LoadOptions) -> Result<Project, LoadError> {
    let files = expand_paths(paths)?;
    let mut project = Project::empty();
    if files.is_empty() {
        return Err(LoadError::NoRulesFiles {
            path: paths.first().cloned().unwrap_or_default(),
        });
    }
    if let Some(progress) = options.progress {
        progress(Stage::Parsing { files: files.len() });
    }
    let mut ids = Vec::with_capacity(files.len());
    for path in files {
        let text =
            read_within(&path, options.max_file_bytes).map_err(|source| LoadError::File {
                path: path.clone(),
                source,
            })?;
        project.inputs.push(path.clone());
        ids.push(project.sources.add(path, text));
    }
    parse_sources(&mut project, &ids, options);
    finish_to(&mut project, Until::Analysed, options);
    Ok(project)
}

/// Compiles in-memory rules text (as if read from `path`): for tests and tools.
pub fn load_str(path: &str, text: &str) -> Project {
    load_str_to(path, text, Until::Analysed, &LoadOptions::default())
}

/// [`load_str`] within `options`' limits, and without the pattern analysis
/// when `analysed` is false: the cheap checks an editor shows first.
pub fn load_str_with(path: &str, text: &str, analysed: bool, options: &LoadOptions) -> Project {
    let until = if analysed {
        Until::Analysed
    } else {
        Until::Checked
    };
    load_str_to(path, text, until, options)
}

/// Compiles in-memory files together, each as if read from its path: an
/// editor's document with the other files of its server. Without the
/// pattern analysis when `analysed` is false.
pub fn load_texts(files: Vec<(PathBuf, String)>, analysed: bool, options: &LoadOptions) -> Project {
    let mut project = Project::empty();
    let ids: Vec<FileId> = files
        .into_iter()
        .map(|(path, text)| project.sources.add(path, text))
        .collect();
    parse_sources(&mut project, &ids, options);
    let until = if analysed {
        Until::Analysed
    } else {
        Until::Checked
    };
    finish_to(&mut project, until, options);
    project
}

/// How far [`load_str_to`] takes a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Until {
    /// Lowered and checked: the rules as written, without pattern analysis
    /// (nor the static annotations it derives). Two files with the same
    /// checked rules analyse alike, so this is what comparing rules needs
    /// (`fmt` and `convert`).
    Checked,
    /// Analysed as well: everything [`load_str`] does.
    Analysed,
}

/// [`load_str`], stopping after `until`.
pub(crate) fn load_str_to(path: &str, text: &str, until: Until, options: &LoadOptions) -> Project {
    let mut project = Project::empty();
    let id = project.sources.add(PathBuf::from(path), text.to_string());
    parse_sources(&mut project, &[id], options);
    finish_to(&mut project, until, options);
    project
}

/// Stack for the front end's threads: the grammar is recursive descent, and
/// unoptimized builds need several megabytes at the nesting limits. Only the
/// pages used are ever committed.
const PARSE_STACK: usize = 64 * 1024 * 1024;

/// What parsing one file gives.
#[derive(Default)]
struct Parsed {
    files: Vec<RulesFile>,
    diagnostics: Vec<Diagnostic>,
    /// Schema files it referred to.
    inputs: Vec<PathBuf>,
}

/// Parses and decodes the sources `ids`, on the machine's cores, and adds
/// what they declare to `project` in the order of `ids`.
fn parse_sources(project: &mut Project, ids: &[FileId], options: &LoadOptions) {
    let sources = &project.sources;
    let threads = crate::par::threads(options.jobs);
    // Cores the files do not take read within a file.
    let within = (threads / ids.len().max(1)).max(1);
    let parsed = crate::par::map(ids, threads, Some(PARSE_STACK), |_, &id| {
        parse_source(sources, id, options, within)
    });
    for (result, &id) in parsed.into_iter().zip(ids) {
        match result {
            Ok(parsed) => {
                project.diagnostics.extend(parsed.diagnostics);
                project.inputs.extend(parsed.inputs);
                project.files.extend(parsed.files);
            }
            Err(_) => {
                let path = sources.get(id).map(|s| s.path.display().to_string());
                project.diagnostics.push(Diagnostic::new(
                    Code::Io,
                    format!(
                        "internal error while reading `{}`",
                        path.unwrap_or_default()
                    ),
                ));
            }
        }
    }
}

fn parse_source(
    sources: &SourceMap,
    file: FileId,
    options: &LoadOptions,
    threads: usize,
) -> Parsed {
    let mut out = Parsed::default();
    let Some(source) = sources.get(file) else {
        return out;
    };
    let base = source
        .path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut schema_files = Vec::new();
    let mut loader = |rel: &Path| -> Result<Value, String> {
        let full = base.join(rel);
        let text = read_within(&full, options.max_file_bytes).map_err(|e| e.to_string())?;
        schema_files.push(full.clone());
        let node =
            yaml::parse_within(&text, options.max_file_bytes).map_err(|e| yaml_message(&e))?;
        Ok(node.to_json())
    };
    if is_dsl(&source.path) {
        out.files.extend(dsl::parse(
            &source.text,
            file,
            &mut loader,
            &mut out.diagnostics,
        ));
        out.inputs = schema_files;
        return out;
    }
    match yaml::parse_within_on(&source.text, options.max_file_bytes, threads) {
        Ok(root) => {
            let rules =
                decode::decode(&root, file, &source.text, &mut loader, &mut out.diagnostics);
            out.inputs = schema_files;
            // A document that is not a mapping has been reported; it declares nothing.
            if matches!(root.value, yaml::YValue::Map(_)) {
                out.files.push(rules);
            }
        }
        Err(e) => {
            let offset = e
                .offset
                .or_else(|| e.line_col.map(|(l, c)| source.offset_of(l, c)))
                .unwrap_or(0);
            out.diagnostics.push(
                Diagnostic::new(Code::Syntax, yaml_message(&e)).at(Span::new(file, offset, offset)),
            );
        }
    }
    out
}

fn finish_to(project: &mut Project, until: Until, options: &LoadOptions) {
    project.servers = crate::lower::lower(&project.files, &mut project.diagnostics);
    if !options.keep_files {
        project.files = Vec::new();
    }
    let tools = project.servers.iter().map(|s| s.tools.len()).sum();
    if let Some(progress) = options.progress {
        progress(Stage::Checking { tools });
    }
    for server in &project.servers {
        check_server(server, options.jobs, &mut project.diagnostics);
    }
    diagnostic::sort(&mut project.diagnostics);
    if until == Until::Analysed {
        analyse(project, options, None);
    }
}

/// The pattern analysis of a project loaded without it
/// ([`load_str_with`] or [`load_texts`] with `analysed` false): its
/// findings added to the diagnostics, and the static annotations it derives
/// filled in. Taking the analyses of tools unchanged since the last run
/// from `cache`, when given (an editor's), with the same results.
///
/// Like rustc's match checking, the analysis runs only on rules that check:
/// a project with errors is left as it is. A project analysed already is
/// not analysed again.
pub fn analyse(
    project: &mut Project,
    options: &LoadOptions,
    cache: Option<&mut crate::analysis::AnalysisCache>,
) {
    analyse_until(project, options, cache, &|| false);
}

/// [`analyse`], stopped as soon as `stop` says so (it is asked before each
/// tool): then `false`, and the project left as it was — the analyses
/// finished before the stop are kept in `cache` all the same. An editor
/// stops the analysis of a text a newer edit replaced.
pub fn analyse_until(
    project: &mut Project,
    options: &LoadOptions,
    mut cache: Option<&mut crate::analysis::AnalysisCache>,
    stop: crate::analysis::Stop<'_>,
) -> bool {
    if !project.analyses.is_empty() || !crate::analysis::should_run(&project.diagnostics) {
        return true;
    }
    if let Some(progress) = options.progress {
        let tools = project.servers.iter().map(|s| s.tools.len()).sum();
        progress(Stage::Analysing { tools });
    }
    // Every server's facts first: a stop leaves the project untouched.
    let mut diagnostics = Vec::new();
    let mut analyses = Vec::with_capacity(project.servers.len());
    for server in &project.servers {
        let Some(facts) = crate::analysis::analyze_server_until(
            server,
            options.analysis,
            options.jobs,
            &mut diagnostics,
            cache.as_deref_mut(),
            Some(stop),
        ) else {
            return false;
        };
        analyses.push(facts);
    }
    for (server, facts) in project.servers.iter_mut().zip(&analyses) {
        crate::analysis::derive_annotations(server, facts);
    }
    project.analyses = analyses;
    project.diagnostics.extend(diagnostics);
    if let Some(cache) = cache {
        let names: Vec<&str> = project.servers.iter().map(|s| s.name.as_str()).collect();
        cache.retain(&names);
    }
    diagnostic::sort(&mut project.diagnostics);
    true
}
