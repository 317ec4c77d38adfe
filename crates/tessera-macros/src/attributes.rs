//! Reading `key = value` and bare-word macro arguments, and doc comments.

use proc_macro2::TokenStream;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Attribute, Expr, ExprLit, Lit, Meta, Token};

/// The arguments of an attribute macro: `name = "x", single_use, on_refusal = EXPR`.
pub(crate) struct MacroArgs(Vec<Meta>);

impl MacroArgs {
    pub(crate) fn parse(tokens: TokenStream) -> syn::Result<Self> {
        let metas = Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens)?;
        Ok(Self(metas.into_iter().collect()))
    }

    /// Fails on any argument not in `known`, naming the ones that are.
    pub(crate) fn only(&self, known: &[&str]) -> syn::Result<()> {
        for meta in &self.0 {
            let name = meta.path().get_ident().map(ToString::to_string);
            if !name.as_deref().is_some_and(|n| known.contains(&n)) {
                return Err(syn::Error::new_spanned(
                    meta,
                    format!("unknown argument; expected one of: {}", known.join(", ")),
                ));
            }
        }
        Ok(())
    }

    /// The expression of `name = EXPR`.
    pub(crate) fn expr(&self, name: &str) -> Option<&Expr> {
        self.0.iter().find_map(|m| match m {
            Meta::NameValue(nv) if nv.path.is_ident(name) => Some(&nv.value),
            _ => None,
        })
    }

    /// The string of `name = "..."`.
    pub(crate) fn string(&self, name: &str) -> syn::Result<Option<String>> {
        match self.expr(name) {
            None => Ok(None),
            Some(Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            })) => Ok(Some(s.value())),
            Some(other) => Err(syn::Error::new_spanned(
                other,
                format!("`{name}` takes a string literal"),
            )),
        }
    }

    /// Whether the bare word `name` is present.
    pub(crate) fn flag(&self, name: &str) -> bool {
        self.0
            .iter()
            .any(|m| matches!(m, Meta::Path(p) if p.is_ident(name)))
    }
}

/// The doc comment of `attrs` as one text: lines without their leading space, trimmed.
pub(crate) fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .map(|line| line.strip_prefix(' ').unwrap_or(&line).to_owned())
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}
