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
    Ok(quote! {
        #[derive(#serde, ::tessera::__private::schemars::JsonSchema)]
        #[serde(crate = "::tessera::__private::serde")]
        #[schemars(crate = "::tessera::__private::schemars")]
        #item
    })
}
