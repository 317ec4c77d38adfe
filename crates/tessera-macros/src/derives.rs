//! `#[tessera::arguments]` and `#[tessera::output]`: the serde and schemars
//! derives a type needs, through tessera's re-exports.

use proc_macro2::TokenStream;
use quote::quote;

use crate::attributes::MacroArgs;

/// What the type is for.
#[derive(Clone, Copy)]
pub(crate) enum Role {
    /// Read from a request: `Deserialize` and `JsonSchema`.
    Arguments,
    /// Written into a result: `Serialize` and `JsonSchema`.
    Output,
}

pub(crate) fn expand(role: Role, args: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    MacroArgs::parse(args)?.only(&[])?;
    let item: syn::Item = syn::parse2(item)?;
    let serde = match role {
        Role::Arguments => quote!(::tessera::__private::serde::Deserialize),
        Role::Output => quote!(::tessera::__private::serde::Serialize),
    };
    let attrs = match &item {
        syn::Item::Struct(s) => &s.attrs[..],
        syn::Item::Enum(e) => &e.attrs[..],
        _ => &[],
    };
    let derives = missing_derives(
        attrs,
        vec![serde, quote!(::tessera::__private::schemars::JsonSchema)],
    );
    Ok(quote! {
        #[derive(#(#derives),*)]
        #[serde(crate = "::tessera::__private::serde")]
        #[schemars(crate = "::tessera::__private::schemars")]
        #item
    })
}

/// The derives of `wanted` the item does not already list in a
/// `#[derive(..)]` below the macro (compared by their last path segment, so
/// `Debug`, `std::fmt::Debug` and `serde::Deserialize` all count).
pub(crate) fn missing_derives(
    attrs: &[syn::Attribute],
    wanted: Vec<TokenStream>,
) -> Vec<TokenStream> {
    let mut listed = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("derive")) {
        let _ = attr.parse_nested_meta(|meta| {
            if let Some(last) = meta.path.segments.last() {
                listed.push(last.ident.to_string());
            }
            Ok(())
        });
    }
    wanted
        .into_iter()
        .filter(|w| {
            let last = w.clone().into_iter().last().map(|t| t.to_string());
            !last.is_some_and(|l| listed.contains(&l))
        })
        .collect()
}
