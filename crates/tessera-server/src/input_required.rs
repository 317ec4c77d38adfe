//! Asking the client for input: the builder a handler returns.

use indexmap::IndexMap;
use tessera_protocol::{
    CreateMessageRequestParams, ELICITATION_CREATE, ElicitFormParams, ElicitRequestParams,
    ElicitUrlParams, FormMode, InputRequest, ROOTS_LIST, SAMPLING_CREATE_MESSAGE,
};

use crate::ElicitForm;

/// Input a handler needs before it can finish, and the state to resume with.
///
/// Keys are unique by construction: asking again under a key replaces the
/// earlier request. The state is sealed into the `requestState` ticket,
/// together with the forms asked and every answer accepted so far.
///
/// ```
/// use tessera_server::{ElicitForm, FormField, InputRequired};
/// let ask: InputRequired<u32> = InputRequired::new()
///     .elicit("confirmation", ElicitForm::new("Sure?").required("confirm", FormField::boolean()))
///     .state(7);
/// assert_eq!(ask.keys().collect::<Vec<_>>(), ["confirmation"]);
/// ```
#[derive(Debug, Clone)]
pub struct InputRequired<S = ()> {
    pub(crate) requests: IndexMap<String, Pending>,
    pub(crate) state: Option<S>,
}

/// One input request as the handler built it.
#[derive(Debug, Clone)]
pub(crate) enum Pending {
    Form(ElicitForm),
    Url { message: String, url: String },
    Sample(Box<CreateMessageRequestParams>),
    Roots,
}

impl Pending {
    /// The wire request, built from the handler's parts without copying them.
    pub(crate) fn into_wire(self) -> InputRequest {
        match self {
            Self::Form(form) => InputRequest::Elicit(ElicitRequestParams::Form(ElicitFormParams {
                mode: Some(FormMode),
                message: form.message,
                requested_schema: form.schema,
            })),
            Self::Url { message, url } => {
                InputRequest::Elicit(ElicitRequestParams::Url(ElicitUrlParams {
                    message,
                    url,
                    elicitation_id: None,
                }))
            }
            Self::Sample(params) => InputRequest::Sample(*params),
            Self::Roots => InputRequest::ListRoots(None),
        }
    }

    /// The method the wire request names.
    pub(crate) fn method(&self) -> &'static str {
        match self {
            Self::Form(_) | Self::Url { .. } => ELICITATION_CREATE,
            Self::Sample(_) => SAMPLING_CREATE_MESSAGE,
            Self::Roots => ROOTS_LIST,
        }
    }
}

impl<S> Default for InputRequired<S> {
    fn default() -> Self {
        Self {
            requests: IndexMap::new(),
            state: None,
        }
    }
}

impl<S> InputRequired<S> {
    /// Nothing asked yet, no state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks the user to fill in `form`.
    pub fn elicit(mut self, key: impl Into<String>, form: ElicitForm) -> Self {
        self.requests.insert(key.into(), Pending::Form(form));
        self
    }

    /// Asks the user to open `url` (URL-mode elicitation).
    pub fn elicit_url(
        mut self,
        key: impl Into<String>,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Self {
        self.requests.insert(
            key.into(),
            Pending::Url {
                message: message.into(),
                url: url.into(),
            },
        );
        self
    }

    /// Asks the client's model for a completion.
    pub fn sample(mut self, key: impl Into<String>, params: CreateMessageRequestParams) -> Self {
        self.requests
            .insert(key.into(), Pending::Sample(Box::new(params)));
        self
    }

    /// Asks for the client's roots.
    pub fn list_roots(mut self, key: impl Into<String>) -> Self {
        self.requests.insert(key.into(), Pending::Roots);
        self
    }

    /// The state to resume with on retry.
    pub fn state(mut self, state: S) -> Self {
        self.state = Some(state);
        self
    }

    /// The keys asked, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.requests.keys().map(String::as_str)
    }

    /// Whether nothing is asked (a state-only round).
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }
}
