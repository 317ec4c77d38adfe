//! The CLI's elicitor: scripted answers first, then the terminal, never a made-up answer.
//!
//! A script may decline or cancel a URL-mode request but never consent to
//! one: opening a page is for the person who sees its host, so a scripted
//! accept meeting a URL asks on the terminal, or without one is an error.
//!
//! A question asked again after its scripted answer was sent means the
//! server did not accept that answer; the same script would be sent again
//! until the round limit, so the call ends there, with the server's reason
//! ([`ClientError::AnswerRejected`]).

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use tessera_client::{
    BoxFuture, ClientError, Elicitor, InputKinds, ScriptedAnswer, ScriptedElicitor,
};
use tessera_protocol::{ElicitAction, ElicitFormParams, ElicitResult, ElicitUrlParams};

use crate::prompt_form;

/// Answers from the script when it has the key, else asks on the terminal when there is one.
pub struct CliElicitor {
    script: ScriptedElicitor,
    interactive: bool,
    has_script: bool,
    refused: AtomicBool,
    /// The keys a scripted answer was sent for.
    sent: Mutex<HashSet<String>>,
}

/// How a Tessera server says why it asks again (the question's message ends with it).
const NOT_ACCEPTED: &str = "(The previous answer was not accepted: ";

impl CliElicitor {
    /// An elicitor over `script`; `interactive` when stdin and stderr are a terminal.
    pub fn new(script: ScriptedElicitor, interactive: bool) -> Self {
        let has_script = !script.is_empty();
        Self {
            script,
            interactive,
            has_script,
            refused: AtomicBool::new(false),
            sent: Mutex::default(),
        }
    }

    /// Whether any form was declined or cancelled.
    pub fn refused(&self) -> bool {
        self.refused.load(Ordering::Relaxed)
    }

    /// The exit code of a request that completed: refused when a form was declined or cancelled.
    pub fn exit(&self) -> crate::exit::Exit {
        if self.refused() {
            crate::exit::Exit::Refused
        } else {
            crate::exit::Exit::Success
        }
    }

    fn note(&self, result: Result<ElicitResult, ClientError>) -> Result<ElicitResult, ClientError> {
        if let Ok(r) = &result
            && r.action != ElicitAction::Accept
        {
            self.refused.store(true, Ordering::Relaxed);
        }
        result
    }

    fn no_way_to_ask(key: &str, message: &str) -> ClientError {
        ClientError::Elicitation(format!(
            "no terminal to ask on and no scripted answer for input request '{key}' (\"{message}\"); pass --answer {key}.FIELD=VALUE or --answers FILE"
        ))
    }

    /// The script's answer to `key`, or the rejection of one already sent.
    fn scripted(&self, key: &str, message: &str) -> Option<Result<ElicitResult, ClientError>> {
        let answer = self.script.answer_for(key)?;
        let first = self
            .sent
            .lock()
            .map_or(true, |mut sent| sent.insert(key.to_owned()));
        if first {
            return Some(Ok(answer.to_result()));
        }
        let reason = match message.split_once(NOT_ACCEPTED) {
            Some((_, why)) => why.trim_end().trim_end_matches(')').to_owned(),
            None => format!("it asked again: {message:?}"),
        };
        Some(Err(ClientError::AnswerRejected {
            key: key.to_owned(),
            reason,
        }))
    }
}

impl Elicitor for CliElicitor {
    fn kinds(&self) -> InputKinds {
        let can_answer = self.interactive || self.has_script;
        InputKinds {
            form: can_answer,
            url: can_answer,
            sampling: false,
            roots: false,
        }
    }

    fn form<'a>(
        &'a self,
        server: &'a str,
        key: &'a str,
        params: &'a ElicitFormParams,
    ) -> BoxFuture<'a, Result<ElicitResult, ClientError>> {
        Box::pin(async move {
            let result = match self.scripted(key, &params.message) {
                Some(r) => r,
                None if self.interactive => prompt_form::ask_form(server, key, params),
                None => Err(Self::no_way_to_ask(key, &params.message)),
            };
            self.note(result)
        })
    }

    fn url<'a>(
        &'a self,
        server: &'a str,
        key: &'a str,
        params: &'a ElicitUrlParams,
    ) -> BoxFuture<'a, Result<ElicitResult, ClientError>> {
        Box::pin(async move {
            let result = match self.script.answer_for(key) {
                Some(refused @ (ScriptedAnswer::Decline | ScriptedAnswer::Cancel)) => {
                    Ok(refused.to_result())
                }
                Some(ScriptedAnswer::Accept(_)) | None if self.interactive => {
                    prompt_form::ask_url(server, key, params)
                }
                Some(ScriptedAnswer::Accept(_)) => Err(ClientError::Elicitation(format!(
                    "input request '{key}' asks to open a URL (\"{}\"); a scripted answer never consents to a URL, and there is no terminal to ask on; run on a terminal, or pass --answer {key}=decline",
                    params.message
                ))),
                None => Err(Self::no_way_to_ask(key, &params.message)),
            };
            self.note(result)
        })
    }
}
