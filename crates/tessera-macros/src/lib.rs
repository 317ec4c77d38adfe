//! The attribute macros of the `tessera` crate. Use them through it (feature
//! `macros`): `#[tessera::tool]`, `#[tessera::prompt]`,
//! `#[tessera::resource]`, `#[tessera::form]`, `#[tessera::arguments]` and
//! `#[tessera::output]`. The code they write calls `tessera`'s public API
//! only, so everything they do can be written by hand (see the guide's
//! "Without macros").

mod attributes;
mod derives;
mod form;
mod handler;

use proc_macro::TokenStream;

/// Makes an `async fn` a tool: the function stays as it is (callable in a
/// unit test), and `NAME_tool()` beside it returns its `ToolDef`.
///
/// The doc comment is the description; parameters of type `Context`,
/// `&Context` and `State<T>` come from the request and the server; every
/// other parameter is an argument (its doc comment, serde and schemars
/// attributes describe it), or `Arguments<T>` takes them all as one type.
/// Arguments: `name = "..."` (default: the function's name), `title = "..."`,
/// `on_refusal = EXPR` (the text when the user declines or cancels; an
/// answer that does not fit is asked for again), `refuse_invalid` (an answer
/// that does not fit ends the call with the `on_refusal` text instead),
/// `single_use` (each ticket redeemed once). A function that takes a
/// `Context` may ask, so its server needs a ticket codec to build
/// (`ToolDef::asks`).
///
/// ```
/// use tessera::Context;
///
/// #[tessera::form]
/// struct Confirmation { confirm: bool }
///
/// /// Deletes a file after asking
/// #[tessera::tool(name = "delete-file", on_refusal = "Nothing deleted.")]
/// async fn delete_file(ctx: Context, /** The file */ path: String) -> tessera::Result<String> {
///     let Confirmation { confirm } = ctx.ask(format!("Delete {path}?"))?;
///     Ok(if confirm { format!("Deleted {path}.") } else { "Nothing deleted.".into() })
/// }
///
/// let tool = delete_file_tool();
/// assert_eq!(tool.definition().name, "delete-file");
/// assert_eq!(tool.definition().input_schema["properties"]["path"]["description"], "The file");
/// ```
///
/// Arguments are owned, read from the request:
///
/// ```compile_fail
/// #[tessera::tool]
/// async fn shout(text: &str) -> String { text.to_uppercase() }
/// ```
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    handler::expand(handler::Kind::Tool, args.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Makes an `async fn` a prompt: the function stays as it is, and
/// `NAME_prompt()` beside it returns its `PromptDef`.
///
/// Parameters are the prompt's arguments (`String`, or `Option<String>` for
/// optional ones), described by their doc comments; `name = "..."` and
/// `title = "..."` as for tools.
///
/// ```
/// /// Asks for a summary
/// #[tessera::prompt]
/// async fn summarise(/** The text */ text: String, /** Words at most */ words: Option<String>) -> String {
///     format!("Summarise in {} words:\n{text}", words.as_deref().unwrap_or("50"))
/// }
///
/// let args = summarise_prompt().definition().arguments.clone().unwrap();
/// assert_eq!(args.iter().map(|a| a.required).collect::<Vec<_>>(), [Some(true), Some(false)]);
/// ```
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    handler::expand(handler::Kind::Prompt, args.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Makes an `async fn` a resource: the function stays as it is, and
/// `NAME_resource()` beside it returns its `ResourceDef` or, with
/// `{variables}` in its URI, a resource template (`ResourceTemplateDef`)
/// whose variables are its parameters.
///
/// Arguments: `uri = "..."` (required), `name = "..."`, `title = "..."`,
/// `mime_type = "..."`. `?` on `NotFound` answers "resource not found".
///
/// ```
/// use tessera::NotFound;
///
/// /// A user's profile
/// #[tessera::resource(uri = "users://{id}/profile", mime_type = "application/json")]
/// async fn profile(id: String) -> tessera::Result<String> {
///     let known = (id == "ada").then(|| r#"{"name":"Ada"}"#.to_owned());
///     Ok(known.ok_or(NotFound)?)
/// }
///
/// assert!(profile_resource().matches("users://ada/profile").is_some());
/// ```
///
/// Template variables arrive as text, and each parameter names one:
///
/// ```compile_fail
/// #[tessera::resource(uri = "users://{id}/profile")]
/// async fn profile(id: u64) -> String { id.to_string() }
/// ```
///
/// ```compile_fail
/// #[tessera::resource(uri = "users://{id}/profile")]
/// async fn profile(user_id: String) -> String { user_id }
/// ```
#[proc_macro_attribute]
pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    handler::expand(handler::Kind::Resource, args.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Declares a flat struct as a form (key: the type's name in snake case, or
/// `key = "..."`), or an enum of unit variants as a choice a form field holds.
///
/// Each field must be a `FormValue`: a nested struct does not compile.
///
/// Both derive what an answer is used for besides reading it: a form is
/// `Deserialize`, `Serialize`, `JsonSchema`, `Debug` and `Clone`; a choice is
/// those and `Copy`, `PartialEq` and `Eq`, so it can go into an
/// `#[tessera::output]` type as it came out of the form. More derives go in
/// a `#[derive(..)]` *below* the macro, where it sees them: one it would add
/// itself (`#[derive(Debug, Clone, Hash)]`) is then not added twice. (A
/// derive above the macro runs before it, unseen, and conflicts.)
///
/// ```
/// use tessera::Form;
///
/// #[tessera::form]
/// enum Colour { Red, Blue }
///
/// /// What the tool reports back, the choice in it.
/// #[tessera::output]
/// struct Chosen { colour: Colour }
///
/// assert_eq!(Colour::Red, Colour::Red.clone());
/// assert_eq!(tessera::serde_json::to_value(Chosen { colour: Colour::Blue }).unwrap()["colour"], "Blue");
///
/// /// Your details
/// #[tessera::form]
/// struct UserDetails {
///     /// What we call you
///     #[schemars(title = "Name", length(min = 1))]
///     name: String,
///     colour: Option<Colour>,
/// }
///
/// assert_eq!(UserDetails::KEY, "user_details");
///
/// #[tessera::form]
/// #[derive(Debug, Clone, Hash)]
/// enum Size { Small, Large }
/// ```
///
/// A choice is a field of a form, not a question of its own; asked as one,
/// the compiler says so:
///
/// ```compile_fail
/// #[tessera::form]
/// enum YesNo { Yes, No }
///
/// async fn confirm(ctx: &tessera::Context) -> tessera::Result<()> {
///     let _: YesNo = ctx.ask("Go ahead?")?; // error: `YesNo` is not a form
///     Ok(())
/// }
/// ```
///
/// A nested struct is not a form field:
///
/// ```compile_fail
/// #[tessera::arguments]
/// struct Address { street: String }
///
/// #[tessera::form]
/// struct Person { name: String, address: Address }
/// ```
#[proc_macro_attribute]
pub fn form(args: TokenStream, item: TokenStream) -> TokenStream {
    form::expand(args.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Derives what an arguments type needs (`Deserialize`, `JsonSchema`) through
/// `tessera`'s re-exports, for `Arguments<T>` and `ToolDef::new`.
///
/// ```
/// /// What to search for.
/// #[tessera::arguments]
/// struct Search {
///     /// Words to look for
///     query: String,
/// }
///
/// #[tessera::tool]
/// async fn search(tessera::Arguments(s): tessera::Arguments<Search>) -> String {
///     format!("searching {}", s.query)
/// }
/// assert_eq!(search_tool().definition().input_schema["description"], "What to search for.");
/// ```
#[proc_macro_attribute]
pub fn arguments(args: TokenStream, item: TokenStream) -> TokenStream {
    derives::expand(derives::Role::Arguments, args.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Derives what structured output needs (`Serialize`, `JsonSchema`) through
/// `tessera`'s re-exports, for `Json<T>` results.
///
/// ```
/// #[tessera::output]
/// struct Weather { celsius: f64 }
///
/// #[tessera::tool]
/// async fn weather() -> tessera::Json<Weather> {
///     tessera::Json(Weather { celsius: 21.5 })
/// }
/// assert!(weather_tool().definition().output_schema.is_some());
/// ```
#[proc_macro_attribute]
pub fn output(args: TokenStream, item: TokenStream) -> TokenStream {
    derives::expand(derives::Role::Output, args.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
