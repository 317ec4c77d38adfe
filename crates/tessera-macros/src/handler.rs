//! `#[tessera::tool]`, `#[tessera::prompt]` and `#[tessera::resource]`: an
//! `async fn` becomes a definition the server builder takes.
//!
//! The function stays as it was, callable (and testable) as itself; beside it
//! a function named after it with the kind as suffix returns the definition
//! (`.tool(increase_counter_tool())`); its doc comment is the description;
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

    if kind != Kind::Tool {
        check_string_arguments(kind, &params)?;
    }
    let fn_name = function.sig.ident.clone();
    let vis = function.vis.clone();
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
    // A handler that takes a `Context` can ask: the server needs a ticket codec.
    let needs = needs.chain(
        params
            .iter()
            .any(|p| matches!(p, Param::Context | Param::ContextRef))
            .then(|| quote!(.asks())),
    );
    let description = description.map(|d| quote!(.description(#d)));
    // The function itself, as written (its parameters' attributes moved to
    // the arguments' fields above).
    let handler_fn = &function;

    let handler = quote! {
        |__ctx: ::tessera::Context, __args: __Arguments| async move {
            #(#extractions)*
            ::core::result::Result::<_, ::tessera::HandlerError>::Ok(
                #fn_name(#(#call_args),*).await
            )
        }
    };

    let mut uri_is_template = false;
    let (target, build) = match kind {
        Kind::Tool => {
            args.only(&[
                "name",
                "title",
                "on_refusal",
                "refuse_invalid",
                "single_use",
            ])?;
            let name = args.string("name")?.unwrap_or_else(|| fn_name.to_string());
            let title = args.string("title")?.map(|t| quote!(.title(#t)));
            let refusal = args.expr("on_refusal").map(|e| quote!(.on_refusal(#e)));
            let single_use = args.flag("single_use").then(|| quote!(.single_use()));
            let refuse_invalid = args
                .flag("refuse_invalid")
                .then(|| quote!(.refuse_invalid_answers()));
            (
                quote!(::tessera::ToolDef),
                quote! {
                    ::tessera::ToolDef::new(#name, #handler)
                        #description #title #refusal #refuse_invalid #single_use #(#needs)*
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
                uri_is_template = true;
                check_template_variables(&uri, &params)?;
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

    let suffix = match kind {
        Kind::Tool => "tool",
        Kind::Prompt => "prompt",
        Kind::Resource => "resource",
    };
    let definition = format_ident!("{}_{}", fn_name, suffix);
    let definition_doc = format!(
        "The {suffix} [`{fn_name}`] is, as a server registers it (`.{}({definition}())`).",
        match kind {
            Kind::Resource if uri_is_template => "resource_template",
            _ => suffix,
        }
    );
    Ok(quote! {
        #handler_fn

        #[doc = #definition_doc]
        #vis fn #definition() -> #target {
            #arguments_struct
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
    // Parameter attributes (doc comments, serde, schemars) belong to the
    // argument's field; on the inner function they would not compile.
    let attrs = std::mem::take(&mut typed.attrs);
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
    if let Type::Reference(r) = &*typed.ty {
        return Err(syn::Error::new_spanned(
            r,
            "an argument is owned, read from the request (`String`, not `&str`)",
        ));
    }
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

/// Prompt arguments and template variables arrive as strings: their parameters are `String` or `Option<String>`.
fn check_string_arguments(kind: Kind, params: &[Param]) -> syn::Result<()> {
    for param in params {
        if let Param::Argument { ty, .. } = param
            && !is_string_or_optional_string(ty)
        {
            let what = match kind {
                Kind::Prompt => "a prompt argument",
                _ => "a URI template variable",
            };
            return Err(syn::Error::new_spanned(
                ty,
                format!(
                    "{what} arrives as text: take it as `String` (or `Option<String>` when it may be absent) and parse it in the body"
                ),
            ));
        }
    }
    Ok(())
}

fn is_string_or_optional_string(ty: &Type) -> bool {
    let Type::Path(p) = ty else { return false };
    let Some(last) = p.path.segments.last() else {
        return false;
    };
    if last.ident == "String" {
        return true;
    }
    last.ident == "Option"
        && matches!(&last.arguments, syn::PathArguments::AngleBracketed(a)
            if matches!(a.args.first(), Some(syn::GenericArgument::Type(inner)) if is_string_or_optional_string(inner)))
}

/// Each parameter of a template resource names one of the URI's `{variables}`
/// (unless serde attributes rename it).
fn check_template_variables(uri: &str, params: &[Param]) -> syn::Result<()> {
    // Each expression's variables, without its operator and modifiers
    // (`{+path}`, `{/segments*}`, `{?x,y}`, `{var:3}`).
    let variables: Vec<&str> = uri
        .split('{')
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(body, _)| body))
        .flat_map(|body| {
            body.trim_start_matches(['+', '#', '.', '/', ';', '?', '&'])
                .split(',')
        })
        .map(|spec| spec.trim_end_matches('*').split(':').next().unwrap_or(spec))
        .collect();
    for param in params {
        if let Param::Argument { name, attrs, .. } = param {
            let renamed = attrs.iter().any(|a| a.path().is_ident("serde"));
            if !renamed && !variables.contains(&name.to_string().as_str()) {
                return Err(syn::Error::new_spanned(
                    name,
                    format!(
                        "`{name}` is not a variable of the URI template {uri:?} (its variables: {})",
                        variables.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(())
}
