//! The attribute macros of the `tessera` crate; use them through it
//! (`#[tessera::tool]`, `#[tessera::prompt]`, `#[tessera::resource]`,
//! `#[tessera::form]`), whose documentation shows each one.

mod attributes;
mod derives;
mod form;
mod handler;

use proc_macro::TokenStream;

/// Turns an `async fn` into a tool: see `tessera::tool`.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    handler::expand(handler::Kind::Tool, args.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Turns an `async fn` into a prompt: see `tessera::prompt`.
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    handler::expand(handler::Kind::Prompt, args.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Turns an `async fn` into a resource or resource template: see `tessera::resource`.
#[proc_macro_attribute]
pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    handler::expand(handler::Kind::Resource, args.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Declares a flat struct as a form: see `tessera::form`.
#[proc_macro_attribute]
pub fn form(args: TokenStream, item: TokenStream) -> TokenStream {
    form::expand(args.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Derives what a tool's or prompt's arguments type needs: see `tessera::arguments`.
#[proc_macro_attribute]
pub fn arguments(args: TokenStream, item: TokenStream) -> TokenStream {
    derives::expand(derives::Role::Arguments, args.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Derives what structured output needs: see `tessera::output`.
#[proc_macro_attribute]
pub fn output(args: TokenStream, item: TokenStream) -> TokenStream {
    derives::expand(derives::Role::Output, args.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
