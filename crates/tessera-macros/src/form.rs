//! `#[tessera::form]`: a flat struct becomes a form, with its key, parsing and
//! schema; an enum of unit variants becomes a choice a form field can hold.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Fields, Item, ItemEnum, ItemStruct};

use crate::attributes::MacroArgs;
use crate::derives::missing_derives;

pub(crate) fn expand(args: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let args = MacroArgs::parse(args)?;
    match syn::parse2(item)? {
        Item::Struct(item) => form(&args, item),
        Item::Enum(item) => {
            args.only(&[])?;
            choice(item)
        }
        other => Err(syn::Error::new_spanned(
            other,
            "#[tessera::form] goes on a struct (a form) or an enum of unit variants (a choice)",
        )),
    }
}

/// A unit-variant enum: one field's choices, shown as an enum in the form.
fn choice(item: ItemEnum) -> syn::Result<TokenStream> {
    if let Some(v) = item
        .variants
        .iter()
        .find(|v| !matches!(v.fields, Fields::Unit))
    {
        return Err(syn::Error::new_spanned(
            v,
            "a choice's variants carry no data: a form shows them as a list of values",
        ));
    }
    let name = &item.ident;
    // A choice is a plain value: it goes into results and comparisons as it came out of the form.
    let derives = missing_derives(
        &item.attrs,
        vec![
            quote!(::tessera::__private::serde::Deserialize),
            quote!(::tessera::__private::serde::Serialize),
            quote!(::tessera::__private::schemars::JsonSchema),
            quote!(::core::fmt::Debug),
            quote!(::core::clone::Clone),
            quote!(::core::marker::Copy),
            quote!(::core::cmp::PartialEq),
            quote!(::core::cmp::Eq),
        ],
    );
    Ok(quote! {
        #[derive(#(#derives),*)]
        #[serde(crate = "::tessera::__private::serde")]
        #[schemars(crate = "::tessera::__private::schemars", inline)]
        #item

        impl ::tessera::FormValue for #name {}
        impl ::tessera::FormChoice for #name {}
    })
}

fn form(args: &MacroArgs, item: ItemStruct) -> syn::Result<TokenStream> {
    args.only(&["key"])?;
    if !item.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &item.generics,
            "a form cannot be generic",
        ));
    }
    let Fields::Named(fields) = &item.fields else {
        return Err(syn::Error::new_spanned(
            &item.fields,
            "a form is a struct with named fields, one per form field",
        ));
    };
    let name = &item.ident;
    let key = args
        .string("key")?
        .unwrap_or_else(|| snake_case(&name.to_string()));
    let types = fields.named.iter().map(|f| &f.ty);
    // An answer can be echoed into a result (`Serialize`) and kept (`Clone`, `Debug`).
    let derives = missing_derives(
        &item.attrs,
        vec![
            quote!(::tessera::__private::serde::Deserialize),
            quote!(::tessera::__private::serde::Serialize),
            quote!(::tessera::__private::schemars::JsonSchema),
            quote!(::core::fmt::Debug),
            quote!(::core::clone::Clone),
        ],
    );
    Ok(quote! {
        #[derive(#(#derives),*)]
        #[serde(crate = "::tessera::__private::serde")]
        #[schemars(crate = "::tessera::__private::schemars")]
        #item

        impl ::tessera::Form for #name {
            const KEY: &'static str = #key;
        }

        // Every field must be one a form can show: refused here, at compile time.
        const _: () = {
            #[allow(dead_code)]
            fn fields_are_form_values() {
                fn field<T: ::tessera::FormValue>() {}
                #(field::<#types>();)*
            }
        };
    })
}

/// `UserName` → `user_name`.
pub(crate) fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::snake_case;

    #[test]
    fn keys_from_type_names() {
        assert_eq!(snake_case("Amount"), "amount");
        assert_eq!(snake_case("UserName"), "user_name");
        assert_eq!(snake_case("Step1"), "step1");
    }
}
