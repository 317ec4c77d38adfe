//! What the four definition builders share ([`ToolDef`](crate::ToolDef),
//! [`PromptDef`](crate::PromptDef), [`ResourceDef`](crate::ResourceDef),
//! [`ResourceTemplateDef`](crate::ResourceTemplateDef)): the setters of the
//! fields every listed definition has (title, description, icons, `_meta`)
//! and of what a caller and the server must bring (scopes, state). Written
//! once here, as inherent methods, so each builder keeps its plain
//! `.title(..)` with nothing to import.

/// The shared setters, inside a builder's `impl` block: `$field` is the
/// builder's wire definition (with `title`, `description`, `icons`, `meta`),
/// `$what` what it is called in prose. The builder has `scopes:
/// Vec<String>`, `needs: Vec<NeededState>` and `asks: bool`.
macro_rules! shared_setters {
    ($field:ident, $what:literal) => {
        /// Human-readable name.
        pub fn title(mut self, title: impl Into<String>) -> Self {
            self.$field.title = Some(title.into());
            self
        }

        #[doc = concat!("What the ", $what, " is for: shown to people and models.")]
        pub fn description(mut self, description: impl Into<String>) -> Self {
            self.$field.description = Some(description.into());
            self
        }

        #[doc = concat!("An icon a client may show for the ", $what, " (`https:` or `data:`; checked at build).")]
        pub fn icon(mut self, icon: tessera_protocol::Icon) -> Self {
            self.$field.icons.get_or_insert_with(Vec::new).push(icon);
            self
        }

        /// Extension metadata on the definition (`_meta`; its keys are checked at build).
        pub fn meta(mut self, meta: tessera_protocol::JsonObject) -> Self {
            self.$field.meta = Some(meta);
            self
        }

        #[doc = concat!("Requires these OAuth scopes for the ", $what, ": a caller whose verified")]
        /// token lacks one gets 403 `insufficient_scope` naming them (so its
        /// client can step up). Checked only where the transport verified a
        /// token (`RequestFacts::auth`): over stdio, or behind another
        /// authentication hook, there is nothing to check.
        pub fn scopes<I, S>(mut self, scopes: I) -> Self
        where
            I: IntoIterator<Item = S>,
            S: Into<String>,
        {
            self.scopes.extend(scopes.into_iter().map(Into::into));
            self
        }

        #[doc = concat!("The OAuth scopes a caller's token must grant for this ", $what, ".")]
        pub fn required_scopes(&self) -> &[String] {
            &self.scopes
        }

        /// Declares that the handler reads application state of type `T`; the
        /// server fails to build without it ([`with_state`](crate::McpServerBuilder::with_state)).
        pub fn needs_state<T: Send + Sync + 'static>(mut self) -> Self {
            self.needs.push(crate::app_state::NeededState::of::<T>());
            self
        }

        #[doc = concat!("Declares that the ", $what, "'s handler may ask for input (`ctx.ask(..)`):")]
        /// the server fails to build without a ticket codec
        /// ([`request_state`](crate::McpServerBuilder::request_state)), instead
        /// of failing the first call that asks. `#[tessera::tool]`,
        /// `#[tessera::prompt]` and `#[tessera::resource]` declare it for a
        /// function that takes a `Context`.
        pub fn asks(mut self) -> Self {
            self.asks = true;
            self
        }
    };
}

pub(crate) use shared_setters;
