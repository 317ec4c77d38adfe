//! `#[tessera::tool]`, `#[tessera::prompt]` and `#[tessera::resource]`: an
//! `async fn` becomes a definition the server builder takes.
//!
//! The function becomes one of the same name returning the definition
//! (`.tool(increase_counter())`); its doc comment the description;
//! parameters of type `Context`, `&Context` and `State<T>` are extracted from
//! the request; every other parameter is one field of the arguments (tools,
//! prompts) or one template variable (resources), with its doc comment and
//! `serde`/`schemars` attributes.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{Attribute, FnArg, Ident, ItemFn, Pat, Type};

use crate::attributes::{MacroArgs, doc_text};

/// Which definition to build.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Tool,
    Prompt,
    Resource,
}

/// One parameter of the handler function.
enum Param {
    /// `Context` by value.
    Context,
    /// `&Context`.
    ContextRef,
    /// `State<T>`.
    State(Box<Type>),
    /// `Arguments<T>`: all the arguments as `T`.
    Whole(Box<Type>),
    /// An argument: a field of the generated arguments struct.
    Argument {
        name: Ident,
        ty: Box<Type>,
        attrs: Vec<Attribute>,
    },
}

pub(crate) fn expand(kind: Kind, args: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let args = MacroArgs::parse(args)?;
    let mut function: ItemFn = syn::parse2(item)?;
    if function.sig.asyncness.is_none() {
        return Err(syn::Error::new_spanned(
            function.sig.fn_token,
            "a handler is an `async fn`",
        ));
    }
    if !function.sig.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &function.sig.generics,
            "a handler cannot be generic",
        ));
    }
    let params = function
        .sig
        .inputs
        .iter_mut()
        .map(read_param)
        .collect::<syn::Result<Vec<_>>>()?;

    let fn_name = function.sig.ident.clone();
    let vis = function.vis.clone();
    let doc_attrs: Vec<&Attribute> = function
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .collect();
    let description = doc_text(&function.attrs);

    let private = quote!(::tessera::__private);
    let whole = params.iter().find_map(|p| match p {
        Param::Whole(ty) => Some(ty),
        _ => None,
    });
    let plain = params
        .iter()
        .filter(|p| matches!(p, Param::Argument { .. }))
        .count();
    let arguments_struct = match whole {
        Some(_) if plain > 0 => {
            return Err(syn::Error::new_spanned(
                &function.sig.inputs,
                "with `Arguments<T>`, every argument is a field of T: no other argument parameters",
            ));
        }
        Some(ty) => quote!(type __Arguments = #ty;),
        None => {
            let fields = params.iter().filter_map(|p| match p {
                Param::Argument { name, ty, attrs } => Some(quote!(#(#attrs)* #name: #ty)),
                _ => None,
            });
            quote! {
                #[derive(#private::serde::Deserialize, #private::schemars::JsonSchema)]
                #[serde(crate = "::tessera::__private::serde")]
                #[schemars(crate = "::tessera::__private::schemars")]
                struct __Arguments { #(#fields,)* }
            }
        }
    };
    let extractions = params.iter().enumerate().filter_map(|(i, p)| match p {
        Param::State(ty) => {
            let var = format_ident!("__state{}", i);
            Some(quote!(let #var = ::tessera::State::<#ty>::from_context(&__ctx)?;))
        }
        _ => None,
    });
    let call_args = params.iter().enumerate().map(|(i, p)| match p {
        Param::Context => quote!(::core::clone::Clone::clone(&__ctx)),
        Param::ContextRef => quote!(&__ctx),
        Param::State(_) => {
            let var = format_ident!("__state{}", i);
            quote!(#var)
        }
        Param::Argument { name, .. } => quote!(__args.#name),
        Param::Whole(_) => quote!(::tessera::Arguments(__args)),
    });
    let needs = params.iter().filter_map(|p| match p {
        Param::State(ty) => Some(quote!(.needs_state::<#ty>())),
        _ => None,
    });
    let description = description.map(|d| quote!(.description(#d)));
    let mut inner = function.clone();
    inner.sig.ident = Ident::new("__handler", Span::call_site());
    inner.attrs.retain(|a| !a.path().is_ident("doc"));
    inner.vis = syn::Visibility::Inherited;

    let handler = quote! {
        |__ctx: ::tessera::Context, __args: __Arguments| async move {
            #(#extractions)*
            ::core::result::Result::<_, ::tessera::HandlerError>::Ok(
                __handler(#(#call_args),*).await
            )
        }
    };

    let (target, build) = match kind {
        Kind::Tool => {
            args.only(&["name", "title", "on_refusal", "single_use"])?;
            let name = args.string("name")?.unwrap_or_else(|| fn_name.to_string());
            let title = args.string("title")?.map(|t| quote!(.title(#t)));
            let refusal = args.expr("on_refusal").map(|e| quote!(.on_refusal(#e)));
            let single_use = args.flag("single_use").then(|| quote!(.single_use()));
            (
                quote!(::tessera::ToolDef),
                quote! {
                    ::tessera::ToolDef::new(#name, #handler)
                        #description #title #refusal #single_use #(#needs)*
                },
            )
        }
        Kind::Prompt => {
            args.only(&["name", "title"])?;
            let name = args.string("name")?.unwrap_or_else(|| fn_name.to_string());
            let title = args.string("title")?.map(|t| quote!(.title(#t)));
            (
                quote!(::tessera::PromptDef),
                quote! {
                    ::tessera::PromptDef::new(#name, #handler)
                        #description #title #(#needs)*
                },
            )
        }
        Kind::Resource => {
            args.only(&["uri", "name", "title", "mime_type"])?;
            let Some(uri) = args.string("uri")? else {
                return Err(syn::Error::new(
                    Span::call_site(),
                    "a resource needs `uri = \"...\"` (with `{variables}` for a template)",
                ));
            };
            let name = args.string("name")?.unwrap_or_else(|| fn_name.to_string());
            let title = args.string("title")?.map(|t| quote!(.title(#t)));
            let mime = args.string("mime_type")?.map(|m| quote!(.mime_type(#m)));
            if uri.contains('{') {
                (
                    quote!(::tessera::ResourceTemplateDef),
                    quote! {
                        ::tessera::ResourceTemplateDef::new(#uri, #name, #handler)
                            #description #title #mime #(#needs)*
                    },
                )
            } else {
                if params.iter().any(|p| matches!(p, Param::Argument { .. })) {
                    return Err(syn::Error::new(
                        Span::call_site(),
                        "a resource without `{variables}` in its URI takes no arguments besides Context and State",
                    ));
                }
                (
                    quote!(::tessera::ResourceDef),
                    quote! {
                        ::tessera::ResourceDef::new(#uri, #name, move |__ctx: ::tessera::Context| {
                            let __args = __Arguments {};
                            (#handler)(__ctx, __args)
                        })
                        #description #title #mime #(#needs)*
                    },
                )
            }
        }
    };

    Ok(quote! {
        #(#doc_attrs)*
        #vis fn #fn_name() -> #target {
            #arguments_struct
            #inner
            #build
        }
    })
}

/// Classifies one parameter, moving an argument's attributes to its field.
fn read_param(arg: &mut FnArg) -> syn::Result<Param> {
    let FnArg::Typed(typed) = arg else {
        return Err(syn::Error::new_spanned(
            arg,
            "a handler is a free function, not a method",
        ));
    };
    match &*typed.ty {
        Type::Reference(r) if last_segment(&r.elem).is_some_and(|s| s == "Context") => {
            return Ok(Param::ContextRef);
        }
        ty if last_segment(ty).is_some_and(|s| s == "Context") => return Ok(Param::Context),
        Type::Path(p) => {
            if let Some(last) = p.path.segments.last()
                && let syn::PathArguments::AngleBracketed(generic) = &last.arguments
                && let Some(syn::GenericArgument::Type(inner)) = generic.args.first()
            {
                let inner = Box::new(inner.clone());
                if last.ident == "State" {
                    return Ok(Param::State(inner));
                }
                if last.ident == "Arguments" {
                    return Ok(Param::Whole(inner));
                }
            }
        }
        _ => {}
    }
    let Pat::Ident(ident) = &*typed.pat else {
        return Err(syn::Error::new_spanned(
            &typed.pat,
            "an argument is a plain name (`amount: f64`); its name is the argument's name",
        ));
    };
    // Doc comments and serde/schemars attributes describe the argument's field.
    let attrs = std::mem::take(&mut typed.attrs);
    Ok(Param::Argument {
        name: ident.ident.clone(),
        ty: typed.ty.clone(),
        attrs,
    })
}

fn last_segment(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}
