//! The language server of mcp-resolve rules files (`mcp-resolve lsp`): the
//! diagnostics `check` reports, as the author types, over the Language
//! Server Protocol on stdio (rust-analyzer's `lsp-server` and `lsp-types`).
//!
//! Every open YAML rules file (`*.yaml`, `*.yml`) and `.rules` file is
//! checked on open and on each change, in two passes: the cheap checks
//! (syntax, schemas, the conservative bound, unknown arguments) are
//! published first, then the pattern analysis (unreachable variants,
//! non-exhaustive tools with their witnesses) — unless a newer message
//! arrived meanwhile, which cancels the analysis of the stale text. Edits
//! that arrive together are applied together, and the file checked once.
//! Codes, spans, related spans and help are `check`'s own.
//!
//! Architecture invariant: no protocol type leaves this crate, and no
//! check is written here — the compiler is asked, and its answer
//! translated.
#![deny(missing_docs)]
// No library function over 100 lines (clippy.toml); each exception says why
// it reads better whole. Tests may be longer.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

mod complete;
mod convert;
mod define;
mod hover;
mod policy;
mod siblings;

use std::collections::{BTreeSet, HashMap};

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, Notification as _,
    PublishDiagnostics,
};
use lsp_types::request::{
    CodeActionRequest, Completion, Formatting, GotoDefinition, HoverRequest, Request as _,
};
use lsp_types::{
    CodeActionProviderCapability, CompletionOptions, DidChangeTextDocumentParams,
    DidCloseTextDocumentParams, DidOpenTextDocumentParams, HoverProviderCapability,
    InitializeParams, PublishDiagnosticsParams, ServerCapabilities, ServerInfo,
    TextDocumentPositionParams, TextDocumentSyncCapability, TextDocumentSyncKind, Uri,
};

/// Why the server stopped other than by `shutdown` and `exit`.
#[derive(Debug)]
pub struct LspError(String);

impl std::fmt::Display for LspError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

// Not `std::error::Error` itself: any error converts into it with `?`.
impl<E: std::error::Error> From<E> for LspError {
    fn from(e: E) -> Self {
        LspError(e.to_string())
    }
}

/// An open document.
struct Document {
    text: String,
    version: i32,
    /// What the last text that compiled names (for completion).
    vocabulary: std::cell::RefCell<complete::Vocabulary>,
    /// The analyses of the last text's tools: an edit analyses again only
    /// the tools it changed.
    analyses: std::cell::RefCell<mcp_resolve::AnalysisCache>,
}

impl Document {
    fn new(text: String, version: i32) -> Document {
        Document {
            text,
            version,
            vocabulary: Default::default(),
            analyses: Default::default(),
        }
    }
}

/// Serves on this process's stdio until the client says `exit`.
pub fn stdio() -> Result<(), LspError> {
    let (connection, threads) = Connection::stdio();
    serve(&connection)?;
    drop(connection);
    threads.join()?;
    Ok(())
}

/// The server's capabilities: whole documents on each change (rules files
/// are small; the analysis is per tool).
fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
        code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(lsp_types::OneOf::Left(true)),
        document_formatting_provider: Some(lsp_types::OneOf::Left(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![" ".into(), "{".into(), "[".into(), ".".into()]),
            ..CompletionOptions::default()
        }),
        ..ServerCapabilities::default()
    }
}

/// Serves `connection` until the client says `exit`: the handshake, then
/// documents checked as they open and change.
pub fn serve(connection: &Connection) -> Result<(), LspError> {
    let result = serde_json::json!({
        "capabilities": capabilities(),
        "serverInfo": ServerInfo {
            name: "mcp-resolve".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        },
    });
    let (id, params) = connection.initialize_start()?;
    let params: InitializeParams = serde_json::from_value(params).unwrap_or_default();
    connection.initialize_finish(id, result)?;
    Server {
        connection,
        documents: HashMap::new(),
        siblings: siblings::Siblings::default(),
        roots: roots(&params),
        on_disk: policy::OnDisk::default(),
    }
    .run()
}

/// The workspace's folders (or its root), as paths.
fn roots(params: &InitializeParams) -> Vec<std::path::PathBuf> {
    #[allow(deprecated)] // `root_uri`: what clients without folders send
    let root = params.root_uri.iter();
    let folders = params.workspace_folders.iter().flatten().map(|f| &f.uri);
    folders
        .chain(root)
        .filter_map(convert::file_path)
        .map(std::path::PathBuf::from)
        .collect()
}

/// What a code action request is read for: only the document and the
/// range (the findings are computed again on the current text, whatever
/// the client sends as its context).
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Asked {
    text_document: lsp_types::TextDocumentIdentifier,
    range: lsp_types::Range,
}

struct Server<'c> {
    connection: &'c Connection,
    documents: HashMap<String, (Uri, Document)>,
    siblings: siblings::Siblings,
    /// The workspace's folders: where a policy's rules are looked for.
    roots: Vec<std::path::PathBuf>,
    /// The names of rules files on disk, for policies.
    on_disk: policy::OnDisk,
}

impl Server<'_> {
    fn run(&mut self) -> Result<(), LspError> {
        // Documents whose analysis a waiting message cut short: checked
        // again after it (a hover must not leave the findings unpublished).
        let mut unfinished = BTreeSet::new();
        while let Ok(message) = self.connection.receiver.recv() {
            // What arrived together is applied together; the documents it
            // changed are checked once, with their latest text.
            let mut changed: BTreeSet<String> = std::mem::take(&mut unfinished);
            let mut next = Some(message);
            while let Some(message) = next.take() {
                if self.handle(message, &mut changed)? {
                    return Ok(());
                }
                next = self.connection.receiver.try_recv().ok();
            }
            for key in changed {
                if !self.check(&key)? {
                    unfinished.insert(key);
                }
            }
        }
        Ok(())
    }

    /// Handles one message; `true` when the client asked to exit.
    fn handle(
        &mut self,
        message: Message,
        changed: &mut BTreeSet<String>,
    ) -> Result<bool, LspError> {
        match message {
            Message::Request(request) => {
                match request.method.as_str() {
                    "shutdown" => {
                        let done = Response::new_ok(request.id, serde_json::Value::Null);
                        self.connection.sender.send(Message::Response(done))?;
                        // Then `exit`; a client that closes the stream
                        // instead is gone all the same.
                        while let Ok(message) = self.connection.receiver.recv() {
                            if let Message::Notification(n) = message
                                && n.method == "exit"
                            {
                                break;
                            }
                        }
                        return Ok(true);
                    }
                    // Hover, definition and completion all read the
                    // document and the position (their own members, if
                    // any, are not needed).
                    CodeActionRequest::METHOD => self.serve(request, Self::code_actions)?,
                    HoverRequest::METHOD => self.serve(request, Self::hover)?,
                    GotoDefinition::METHOD => self.serve(request, Self::define)?,
                    Completion::METHOD => self.serve(request, Self::complete)?,
                    Formatting::METHOD => self.serve(request, Self::format)?,
                    _ => self.refuse(request)?,
                }
            }
            Message::Notification(notification) if notification.method == "exit" => {
                return Err(LspError("`exit` before `shutdown`".into()));
            }
            Message::Notification(notification) => self.notified(notification, changed)?,
            Message::Response(_) => {}
        }
        Ok(false)
    }

    /// Answers `request` with `handler`, its params read as `P` (or an
    /// `InvalidParams` answer when they are not).
    fn serve<P: serde::de::DeserializeOwned>(
        &self,
        request: Request,
        handler: fn(&Self, lsp_server::RequestId, P) -> Result<(), LspError>,
    ) -> Result<(), LspError> {
        match self.params(request)? {
            Some((id, params)) => handler(self, id, params),
            None => Ok(()),
        }
    }

    /// The request's params as `P`, or an `InvalidParams` answer (`None`).
    fn params<P: serde::de::DeserializeOwned>(
        &self,
        request: Request,
    ) -> Result<Option<(lsp_server::RequestId, P)>, LspError> {
        match serde_json::from_value(request.params) {
            Ok(params) => Ok(Some((request.id, params))),
            Err(e) => {
                let response =
                    Response::new_err(request.id, ErrorCode::InvalidParams as i32, e.to_string());
                self.connection.sender.send(Message::Response(response))?;
                Ok(None)
            }
        }
    }

    fn respond(
        &self,
        id: lsp_server::RequestId,
        result: impl serde::Serialize,
    ) -> Result<(), LspError> {
        let response = Response::new_ok(id, result);
        self.connection.sender.send(Message::Response(response))?;
        Ok(())
    }

    /// The open rules document `uri` names: its text and the path the
    /// compiler is given.
    fn document(&self, uri: &Uri) -> Option<(&Uri, &Document, String)> {
        let (uri, document) = self.documents.get(uri.as_str())?;
        let path = convert::rules_path(uri)?;
        convert::is_rules(&path, &document.text).then_some((uri, document, path))
    }

    /// The quick fixes the checks know for the findings in the range asked
    /// about, on the document's current text.
    fn code_actions(&self, id: lsp_server::RequestId, asked: Asked) -> Result<(), LspError> {
        let actions = match self.document(&asked.text_document.uri) {
            Some((uri, document, path)) => {
                convert::fixes(&self.analysed(&path, document), uri, asked.range)
            }
            None => Vec::new(),
        };
        self.respond(id, actions)
    }

    /// What the compiler knows of the name under the cursor.
    fn hover(
        &self,
        id: lsp_server::RequestId,
        at: TextDocumentPositionParams,
    ) -> Result<(), LspError> {
        let found = self
            .document(&at.text_document.uri)
            .and_then(|(_, document, path)| {
                let project = self.analysed(&path, document);
                hover::hover(&project, hover::offset(&document.text, at.position))
            });
        self.respond(id, found)
    }

    /// Where the schema file or the `$ref` under the cursor is defined.
    fn define(
        &self,
        id: lsp_server::RequestId,
        at: TextDocumentPositionParams,
    ) -> Result<(), LspError> {
        let found = self
            .document(&at.text_document.uri)
            .and_then(|(uri, document, path)| {
                let offset = hover::offset(&document.text, at.position);
                define::definition(uri, &path, &document.text, offset)
            });
        self.respond(id, found)
    }

    /// What the rules can name at the cursor.
    fn complete(
        &self,
        id: lsp_server::RequestId,
        at: TextDocumentPositionParams,
    ) -> Result<(), LspError> {
        let items = self
            .documents
            .get(at.text_document.uri.as_str())
            .map(|(uri, document)| {
                let offset = hover::offset(&document.text, at.position);
                match convert::rules_path(uri) {
                    Some(path)
                        if !convert::is_rules(&path, &document.text)
                            && policy::is_policy(&path, &document.text) =>
                    {
                        policy::items(&self.policy_names(&path), &document.text, offset)
                    }
                    _ => document.vocabulary.borrow().items(&document.text, offset),
                }
            })
            .unwrap_or_default();
        self.respond(id, items)
    }

    /// What the rules near the policy at `path` name: the open rules
    /// documents' (their unsaved text), then the files on disk not open.
    fn policy_names(&self, path: &str) -> policy::Names {
        let mut names = policy::Names::default();
        let mut open = BTreeSet::new();
        for (uri, document) in self.documents.values() {
            if let Some(path) = convert::rules_path(uri)
                && convert::is_rules(&path, &document.text)
            {
                names.add(&document.vocabulary.borrow());
                open.insert(std::path::PathBuf::from(path));
            }
        }
        let directories = policy::directories(std::path::Path::new(path), &self.roots);
        for (file, vocabulary) in self.on_disk.vocabularies(&directories) {
            if !open.contains(&file) {
                names.add(&vocabulary);
            }
        }
        names
    }

    /// The document in `fmt`'s canonical form: one edit of the whole text,
    /// none when it is canonical already; an error saying why when it does
    /// not parse.
    fn format(
        &self,
        id: lsp_server::RequestId,
        asked: lsp_types::DocumentFormattingParams,
    ) -> Result<(), LspError> {
        let Some((_, document, path)) = self.document(&asked.text_document.uri) else {
            return self.respond(id, serde_json::Value::Null);
        };
        let path = std::path::Path::new(&path);
        let syntax = mcp_resolve::format::Syntax::of(path);
        match mcp_resolve::format::format_file(path, &document.text, syntax) {
            Ok(formatted) if formatted == document.text => {
                self.respond(id, Vec::<lsp_types::TextEdit>::new())
            }
            Ok(formatted) => {
                let whole = lsp_types::Range::new(
                    lsp_types::Position::new(0, 0),
                    convert::end_of(&document.text),
                );
                self.respond(id, vec![lsp_types::TextEdit::new(whole, formatted)])
            }
            Err(
                mcp_resolve::format::FormatError::Invalid(why)
                | mcp_resolve::format::FormatError::Internal(why),
            ) => {
                let response = Response::new_err(
                    id,
                    ErrorCode::RequestFailed as i32,
                    format!("mcp-resolve fmt: {why}"),
                );
                self.connection.sender.send(Message::Response(response))?;
                Ok(())
            }
        }
    }

    /// A request this server does not serve (yet): said so.
    fn refuse(&self, request: Request) -> Result<(), LspError> {
        let response = Response::new_err(
            request.id,
            ErrorCode::MethodNotFound as i32,
            format!("mcp-resolve lsp does not serve `{}`", request.method),
        );
        self.connection.sender.send(Message::Response(response))?;
        Ok(())
    }

    fn notified(
        &mut self,
        notification: Notification,
        changed: &mut BTreeSet<String>,
    ) -> Result<(), LspError> {
        match notification.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let params: DidOpenTextDocumentParams =
                    serde_json::from_value(notification.params)?;
                let document = params.text_document;
                let key = document.uri.as_str().to_string();
                self.documents.insert(
                    key.clone(),
                    (document.uri, Document::new(document.text, document.version)),
                );
                changed.insert(key);
            }
            DidChangeTextDocument::METHOD => {
                let params: DidChangeTextDocumentParams =
                    serde_json::from_value(notification.params)?;
                let key = params.text_document.uri.as_str().to_string();
                // Whole documents (the sync kind this server asks for): the
                // last change is the text.
                if let (Some((_, document)), Some(change)) = (
                    self.documents.get_mut(&key),
                    params.content_changes.into_iter().last(),
                ) {
                    document.text = change.text;
                    document.version = params.text_document.version;
                    changed.insert(key);
                }
            }
            DidCloseTextDocument::METHOD => {
                let params: DidCloseTextDocumentParams =
                    serde_json::from_value(notification.params)?;
                let key = params.text_document.uri.as_str().to_string();
                changed.remove(&key);
                if let Some((uri, _)) = self.documents.remove(&key) {
                    self.publish(uri, Vec::new(), None)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Checks the document `key`: the cheap checks published at once, then
    /// the analysis, stopped by a newer message (it may change the text: the
    /// next round checks again).
    /// `false` when the analysis was left for later.
    fn check(&self, key: &str) -> Result<bool, LspError> {
        let Some((uri, document)) = self.documents.get(key) else {
            return Ok(true);
        };
        let Some(path) = convert::rules_path(uri) else {
            return Ok(true);
        };
        if !convert::is_rules(&path, &document.text) {
            // Not (or no longer) a rules file: nothing of this server's.
            self.publish(uri.clone(), Vec::new(), Some(document.version))?;
            return Ok(true);
        }
        let options = mcp_resolve::LoadOptions::default();
        let (mut project, others) = self.compile(&path, &document.text, &options);
        if let Some(vocabulary) = complete::Vocabulary::of(&project) {
            *document.vocabulary.borrow_mut() = vocabulary;
        }
        let diagnostics = convert::diagnostics(&project, uri, &others);
        self.publish(uri.clone(), diagnostics, Some(document.version))?;
        // A message that arrives meanwhile stops the analysis (before the
        // next tool; those finished are kept for the next run).
        let waiting = || !self.connection.receiver.is_empty();
        let mut analyses = document.analyses.borrow_mut();
        if !mcp_resolve::analyse_until(&mut project, &options, Some(&mut analyses), &waiting) {
            return Ok(false);
        }
        let diagnostics = convert::diagnostics(&project, uri, &others);
        self.publish(uri.clone(), diagnostics, Some(document.version))?;
        Ok(true)
    }

    /// The document compiled and analysed (the analysis of its unchanged
    /// tools taken from its cache): what a request about it is answered
    /// from.
    fn analysed(&self, path: &str, document: &Document) -> mcp_resolve::Project {
        let options = mcp_resolve::LoadOptions::default();
        let (mut project, _) = self.compile(path, &document.text, &options);
        mcp_resolve::analyse(
            &mut project,
            &options,
            Some(&mut document.analyses.borrow_mut()),
        );
        project
    }

    /// The document's text compiled, without the pattern analysis, with the
    /// other files of its server (first, so that its file is the project's
    /// first), and those files' paths.
    fn compile(
        &self,
        path: &str,
        text: &str,
        options: &mcp_resolve::LoadOptions,
    ) -> (mcp_resolve::Project, Vec<std::path::PathBuf>) {
        let alone = mcp_resolve::load_str_with(path, text, false, options);
        let own = std::path::Path::new(path);
        let siblings = match alone.servers.first() {
            Some(server) => {
                let open = |p: &std::path::Path| {
                    self.documents.values().find_map(|(uri, document)| {
                        (convert::rules_path(uri).as_deref() == p.to_str())
                            .then(|| document.text.clone())
                    })
                };
                self.siblings.of(own, &server.name, &open)
            }
            None => Vec::new(),
        };
        if siblings.is_empty() {
            return (alone, Vec::new());
        }
        let others: Vec<std::path::PathBuf> = siblings.iter().map(|(p, _)| p.clone()).collect();
        let mut files = vec![(own.to_path_buf(), text.to_string())];
        files.extend(siblings);
        (mcp_resolve::load_texts(files, false, options), others)
    }

    fn publish(
        &self,
        uri: Uri,
        diagnostics: Vec<lsp_types::Diagnostic>,
        version: Option<i32>,
    ) -> Result<(), LspError> {
        let params = PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        };
        let notification = Notification::new(PublishDiagnostics::METHOD.into(), params);
        self.connection
            .sender
            .send(Message::Notification(notification))?;
        Ok(())
    }
}
