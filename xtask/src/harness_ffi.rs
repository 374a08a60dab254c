//! The Rust harness's declarations of the C harness's ABI
//! (`sdk-rust/testing/src/prebuilt/ffi_generated.rs`), made from the header
//! the C SDK uses, `sdk-c/include/wasmkeep_harness.h` (which cbindgen writes
//! from `sdk-c/harness`; `bash sdk-c/scripts/gen.sh`): its `#define`
//! constants, its enums (as `c_int` and one constant per value), its structs
//! (`#[repr(C)]`), its function pointer typedefs, and for its functions a
//! type each and the table (`Api`) the prebuilt driver fills by name when it
//! loads the library. No hand-written mirror of the header is left to drift
//! from it (issue 56).
//!
//! The header is machine-written and regular, so this is a small parser of
//! exactly what cbindgen writes there, not a C parser (no libclang, no
//! bindgen: docs/adr/081-the-rust-harness-s-ffi-is-generated-from-the-c-header.md).
//! What it does not know is an error naming the header's line, never
//! skipped.

use anyhow::{Context, Result, bail};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

/// The header, relative to the repository root.
pub const HEADER: &str = "sdk-c/include/wasmkeep_harness.h";
/// The Rust file made from it, relative to the repository root.
pub const OUT: &str = "sdk-rust/testing/src/prebuilt/ffi_generated.rs";

/// The documentation of an item: the header's `//` lines above it.
type Doc = Vec<String>;

/// A declaration of the header.
#[derive(Debug, PartialEq)]
enum Item {
    /// `#define NAME <decimal>`.
    Define { doc: Doc, name: String, value: u64 },
    /// `typedef enum name { NAME = value, ... } name;`.
    Enum {
        doc: Doc,
        name: String,
        variants: Vec<(Doc, String, i64)>,
    },
    /// `typedef struct name name;`: a type known by pointer only.
    Opaque { doc: Doc, name: String },
    /// `typedef struct name { type field; ... } name;`.
    Struct {
        doc: Doc,
        name: String,
        fields: Vec<(Doc, String, String)>,
    },
    /// `typedef ret (*name)(params);`.
    FnPointer { doc: Doc, name: String, sig: Signature },
    /// `ret name(params);`.
    Function { doc: Doc, name: String, sig: Signature },
}

/// A function's C types: its parameters (type, name) and what it returns.
#[derive(Debug, PartialEq)]
struct Signature {
    params: Vec<(String, String)>,
    ret: String,
}

/// The header's declarations, in its order.
///
/// # Errors
/// A line this parser does not know, naming it.
fn parse(header: &str) -> Result<Vec<Item>> {
    let lines: Vec<&str> = header.lines().collect();
    let mut items = Vec::new();
    let mut doc: Doc = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let at = i + 1;
        let line = lines[i].trim();
        i += 1;
        if line.is_empty() {
            doc.clear();
        } else if let Some(text) = line.strip_prefix("/*") {
            // A block comment (the header's own notes): skipped whole.
            let mut rest = text.to_owned();
            while !rest.contains("*/") {
                rest = (*lines
                    .get(i)
                    .with_context(|| format!("{HEADER}:{at}: a /* comment never ends"))?)
                .to_owned();
                i += 1;
            }
            doc.clear();
        } else if let Some(text) = line.strip_prefix("//") {
            doc.push(text.strip_prefix(' ').unwrap_or(text).to_owned());
        } else if let Some(directive) = line.strip_prefix('#') {
            let words: Vec<&str> = directive.split_whitespace().collect();
            match words.as_slice() {
                ["define", name, value @ ..] if !value.is_empty() => items.push(Item::Define {
                    doc: std::mem::take(&mut doc),
                    name: (*name).to_owned(),
                    value: value
                        .join(" ")
                        .parse()
                        .with_context(|| format!("{HEADER}:{at}: #define {name} is not a decimal number"))?,
                }),
                // The include guard, the includes and C++'s `extern "C"` around the functions.
                ["define", _] | ["ifndef" | "ifdef", _, ..] | ["endif", ..] | ["include", _] => doc.clear(),
                _ => bail!("{HEADER}:{at}: an unknown directive: {line}"),
            }
        } else if line == "extern \"C\" {" || line.starts_with("}  // extern \"C\"") {
            doc.clear();
        } else {
            // A declaration, to its `;` (a typedef with a body: to its closing `} name;`).
            let mut text = vec![line];
            let braced = line.contains('{');
            while !(if braced {
                text.last().is_some_and(|l| l.starts_with('}') && l.ends_with(';'))
            } else {
                text.last().is_some_and(|l| l.ends_with(';'))
            }) {
                text.push(
                    lines
                        .get(i)
                        .with_context(|| format!("{HEADER}:{at}: a declaration never ends"))?
                        .trim(),
                );
                i += 1;
            }
            let doc = std::mem::take(&mut doc);
            items.push(declaration(&text, doc).with_context(|| format!("{HEADER}:{at}"))?);
        }
    }
    Ok(items)
}

/// One declaration: its lines, trimmed, and its documentation.
fn declaration(text: &[&str], doc: Doc) -> Result<Item> {
    let first = text[0];
    if let Some(head) = first
        .strip_prefix("typedef enum ")
        .or(first.strip_prefix("typedef struct "))
        && let Some(name) = head.strip_suffix(" {")
    {
        let close = text[text.len() - 1];
        if close != format!("}} {name};") {
            bail!("`{first}` closes with `{close}`, not `}} {name};`");
        }
        let body = &text[1..text.len() - 1];
        return if first.starts_with("typedef enum") {
            Ok(Item::Enum {
                doc,
                name: name.to_owned(),
                variants: variants(body)?,
            })
        } else {
            Ok(Item::Struct {
                doc,
                name: name.to_owned(),
                fields: fields(body)?,
            })
        };
    }
    let joined = text.join(" ");
    let joined = joined.strip_suffix(';').context("no `;`")?;
    let words: Vec<&str> = joined.split_whitespace().collect();
    if let ["typedef", "struct", a, b] = words.as_slice()
        && a == b
    {
        return Ok(Item::Opaque {
            doc,
            name: (*a).to_owned(),
        });
    }
    if let Some(rest) = joined.strip_prefix("typedef ") {
        // `ret (*name)(params)`
        let (ret, rest) = rest
            .split_once("(*")
            .with_context(|| format!("an unknown typedef: {joined}"))?;
        let (name, rest) = rest.split_once(')').context("no `)` after the typedef's name")?;
        let sig = signature(ret, rest)?;
        return Ok(Item::FnPointer {
            doc,
            name: ident(name)?.to_owned(),
            sig,
        });
    }
    // `ret name(params)`
    let (head, rest) = joined
        .split_once('(')
        .with_context(|| format!("an unknown declaration: {joined}"))?;
    let (ret, name) = split_name(head)?;
    Ok(Item::Function {
        doc,
        name,
        sig: signature(&ret, &format!("({rest}"))?,
    })
}

/// `(type name, ...)` and the return type.
fn signature(ret: &str, params: &str) -> Result<Signature> {
    let inner = params
        .trim()
        .strip_prefix('(')
        .and_then(|p| p.strip_suffix(')'))
        .with_context(|| format!("parameters not in (): {params}"))?;
    if inner.contains(['(', ')', '[']) {
        bail!("a parameter this parser does not know (a function or an array): {inner}");
    }
    let params = if inner.trim() == "void" {
        Vec::new()
    } else {
        inner.split(',').map(split_name).collect::<Result<_>>()?
    };
    Ok(Signature {
        params,
        ret: ret.trim().to_owned(),
    })
}

/// `const struct wkh_host *host` as (`const struct wkh_host *`, `host`).
fn split_name(decl: &str) -> Result<(String, String)> {
    let decl = decl.trim();
    let start = decl
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    let (ty, name) = decl.split_at(start);
    if ty.trim().is_empty() {
        bail!("no type and name in `{decl}`");
    }
    Ok((ty.trim().to_owned(), ident(name)?.to_owned()))
}

/// `name` when it is a C identifier.
fn ident(name: &str) -> Result<&str> {
    let ok = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(name)
    } else {
        bail!("`{name}` is not an identifier")
    }
}

/// An enum's body: `// doc` lines and `NAME = value,` (or `NAME,`: one more than the last).
fn variants(body: &[&str]) -> Result<Vec<(Doc, String, i64)>> {
    let (mut out, mut doc, mut next) = (Vec::new(), Vec::new(), 0i64);
    for line in body {
        if let Some(text) = line.strip_prefix("//") {
            doc.push(text.strip_prefix(' ').unwrap_or(text).to_owned());
            continue;
        }
        let entry = line.strip_suffix(',').unwrap_or(line);
        let (name, value) = match entry.split_once('=') {
            Some((name, value)) => (
                name.trim(),
                value
                    .trim()
                    .parse()
                    .with_context(|| format!("an enum value that is not a number: {line}"))?,
            ),
            None => (entry.trim(), next),
        };
        out.push((std::mem::take(&mut doc), ident(name)?.to_owned(), value));
        next = value + 1;
    }
    Ok(out)
}

/// A struct's body: `// doc` lines and `type name;`.
fn fields(body: &[&str]) -> Result<Vec<(Doc, String, String)>> {
    let (mut out, mut doc) = (Vec::new(), Vec::new());
    for line in body {
        if let Some(text) = line.strip_prefix("//") {
            doc.push(text.strip_prefix(' ').unwrap_or(text).to_owned());
            continue;
        }
        let decl = line
            .strip_suffix(';')
            .with_context(|| format!("a field without `;`: {line}"))?;
        if decl.contains(['(', '[', ',', ':']) {
            bail!("a field this parser does not know (a function, an array, a bit field): {line}");
        }
        let (ty, name) = split_name(decl)?;
        out.push((std::mem::take(&mut doc), ty, name));
    }
    Ok(out)
}

/// What the header's types are, for writing them in Rust.
struct Known {
    enums: BTreeSet<String>,
    structs: BTreeSet<String>,
    fn_pointers: BTreeSet<String>,
}

impl Known {
    fn of(items: &[Item]) -> Self {
        let mut known = Self {
            enums: BTreeSet::new(),
            structs: BTreeSet::new(),
            fn_pointers: BTreeSet::new(),
        };
        for item in items {
            match item {
                Item::Enum { name, .. } => known.enums.insert(name.clone()),
                Item::Opaque { name, .. } | Item::Struct { name, .. } => known.structs.insert(name.clone()),
                Item::FnPointer { name, .. } => known.fn_pointers.insert(name.clone()),
                Item::Define { .. } | Item::Function { .. } => false,
            };
        }
        known
    }

    /// A C type in Rust: `const struct wkh_host *` is `*const WkhHost`,
    /// `char **` is `*mut *mut c_char`, `void` (a return) is `()`.
    fn rust(&self, c: &str) -> Result<String> {
        let stars = c.matches('*').count();
        if c.trim_end_matches([' ', '*']).contains('*') {
            bail!("a pointer this parser does not know (const after a `*`): {c}");
        }
        let words: Vec<&str> = c
            .split(|ch: char| ch == '*' || ch.is_whitespace())
            .filter(|w| !w.is_empty())
            .collect();
        let konst = words.first() == Some(&"const");
        let base = if konst { &words[1..] } else { &words[..] };
        let base = match base {
            ["void"] if stars == 0 => return Ok("()".to_owned()),
            ["void"] => "c_void".to_owned(),
            ["char"] => "c_char".to_owned(),
            ["int"] => "c_int".to_owned(),
            ["bool"] => "bool".to_owned(),
            ["double"] => "f64".to_owned(),
            ["float"] => "f32".to_owned(),
            ["size_t"] => "usize".to_owned(),
            ["uint8_t"] => "u8".to_owned(),
            ["uint16_t"] => "u16".to_owned(),
            ["uint32_t"] => "u32".to_owned(),
            ["uint64_t"] => "u64".to_owned(),
            ["int8_t"] => "i8".to_owned(),
            ["int16_t"] => "i16".to_owned(),
            ["int32_t"] => "i32".to_owned(),
            ["int64_t"] => "i64".to_owned(),
            ["enum", name] if self.enums.contains(*name) => camel(name),
            ["struct", name] if self.structs.contains(*name) => camel(name),
            [name]
                if self.enums.contains(*name) || self.structs.contains(*name) || self.fn_pointers.contains(*name) =>
            {
                camel(name)
            }
            _ => bail!("a type this parser does not know: {c}"),
        };
        let mut out = base;
        for level in 0..stars {
            out = if level == 0 && konst {
                format!("*const {out}")
            } else {
                format!("*mut {out}")
            };
        }
        Ok(out)
    }

    /// `unsafe extern "C" fn(name: type, ...) -> ret`, on one line when it
    /// fits in `room`, else a parameter a line at `indent`.
    fn fn_type(&self, sig: &Signature, indent: &str, room: usize) -> Result<String> {
        let params = sig
            .params
            .iter()
            .map(|(ty, name)| Ok(format!("{}: {}", rust_ident(name), self.rust(ty)?)))
            .collect::<Result<Vec<_>>>()?;
        let ret = match self.rust(&sig.ret)?.as_str() {
            "()" => String::new(),
            ty => format!(" -> {ty}"),
        };
        let one_line = format!("unsafe extern \"C\" fn({}){ret}", params.join(", "));
        if one_line.len() <= room || params.is_empty() {
            return Ok(one_line);
        }
        let mut out = "unsafe extern \"C\" fn(\n".to_owned();
        for p in &params {
            let _ = writeln!(out, "{indent}    {p},");
        }
        let _ = write!(out, "{indent}){ret}");
        Ok(out)
    }
}

/// `wkh_host_options` as `WkhHostOptions` (the harness crate's own Rust names).
fn camel(name: &str) -> String {
    name.split('_')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut chars = w.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// A C name that is a Rust keyword, as a raw identifier.
fn rust_ident(name: &str) -> String {
    const KEYWORDS: &[&str] = &[
        "as", "async", "await", "box", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false",
        "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
        "static", "struct", "trait", "true", "try", "type", "unsafe", "use", "where", "while", "yield",
    ];
    if KEYWORDS.contains(&name) {
        format!("r#{name}")
    } else {
        name.to_owned()
    }
}

/// `doc` as `///` lines at `indent`.
fn write_doc(out: &mut String, doc: &[String], indent: &str) {
    for line in doc {
        if line.is_empty() {
            let _ = writeln!(out, "{indent}///");
        } else {
            let _ = writeln!(out, "{indent}/// {line}");
        }
    }
}

/// The longest line rustfmt leaves (the repository's `max_width`).
const WIDTH: usize = 120;

/// The Rust file for `header`.
///
/// # Errors
/// The header holds what the parser does not know.
fn render(header: &str) -> Result<String> {
    let items = parse(header)?;
    let known = Known::of(&items);
    let mut body = String::new();
    let mut functions = Vec::new();
    for item in &items {
        match item {
            Item::Define { doc, name, value } => {
                write_doc(&mut body, doc, "");
                // cbindgen writes the harness's `usize` consts as bare #defines.
                let _ = writeln!(body, "pub(crate) const {name}: usize = {value};\n");
            }
            Item::Enum { doc, name, variants } => {
                write_doc(&mut body, doc, "");
                if !doc.is_empty() {
                    body.push_str("///\n");
                }
                body.push_str(
                    "/// A C enum, an `int`: a value this crate does not know is a number, never undefined behaviour.\n",
                );
                let ty = camel(name);
                let _ = writeln!(body, "pub(crate) type {ty} = c_int;");
                for (doc, variant, value) in variants {
                    write_doc(&mut body, doc, "");
                    let _ = writeln!(body, "pub(crate) const {variant}: {ty} = {value};");
                }
                body.push('\n');
            }
            Item::Opaque { doc, name } => {
                write_doc(&mut body, doc, "");
                let _ = writeln!(
                    body,
                    "#[repr(C)]\npub(crate) struct {} {{\n    _private: [u8; 0],\n}}\n",
                    camel(name)
                );
            }
            Item::Struct { doc, name, fields } => {
                write_doc(&mut body, doc, "");
                let _ = writeln!(body, "#[repr(C)]\npub(crate) struct {} {{", camel(name));
                for (doc, ty, field) in fields {
                    write_doc(&mut body, doc, "    ");
                    let _ = writeln!(body, "    pub {}: {},", rust_ident(field), known.rust(ty)?);
                }
                body.push_str("}\n\n");
            }
            Item::FnPointer { doc, name, sig } => {
                write_doc(&mut body, doc, "");
                let head = format!("pub(crate) type {} = Option<", camel(name));
                let one_line = known.fn_type(sig, "", usize::MAX)?;
                if head.len() + one_line.len() + 2 <= WIDTH {
                    let _ = writeln!(body, "{head}{one_line}>;\n");
                } else {
                    let _ = writeln!(body, "{head}\n    {},\n>;\n", known.fn_type(sig, "    ", WIDTH - 4)?);
                }
            }
            Item::Function { doc, name, sig } => {
                write_doc(&mut body, doc, "");
                let alias = format!("{}Fn", camel(name));
                let head = format!("pub(crate) type {alias} =");
                let one_line = known.fn_type(sig, "", usize::MAX)?;
                // As rustfmt lays it out: on one line, else on the next, else a parameter a line.
                let (same_line, next_line) = (format!("{head} {one_line};"), format!("    {one_line};"));
                if same_line.len() <= WIDTH {
                    let _ = writeln!(body, "{same_line}\n");
                } else if next_line.len() <= WIDTH {
                    let _ = writeln!(body, "{head}\n{next_line}\n");
                } else {
                    let _ = writeln!(body, "{head} {};\n", known.fn_type(sig, "", 0)?);
                }
                functions.push((name, alias));
            }
        }
    }
    let mut api = String::from(
        "/// The header's functions, looked up by name when the library is loaded: a\n\
         /// missing one is an older library than this crate, which `load` names.\n\
         pub(crate) struct Api {\n",
    );
    for (name, alias) in &functions {
        let _ = writeln!(api, "    pub {name}: {alias},");
    }
    api.push_str(
        "}\n\n\
         impl Api {\n    \
         /// Looks every function up in `lib`.\n    \
         ///\n    \
         /// # Safety\n    \
         /// `lib` is a wasmkeep harness library whose functions have the\n    \
         /// header's signatures (its version was checked first).\n    \
         pub(crate) unsafe fn load(lib: &libloading::Library) -> Result<Self, String> {\n        \
         // SAFETY: per the contract, each function has its field's type.\n        \
         unsafe {\n            \
         Ok(Self {\n",
    );
    for (name, _) in &functions {
        let _ = writeln!(api, "                {name}: symbol(lib, b\"{name}\\0\")?,");
    }
    api.push_str(
        "            })\n        \
         }\n    \
         }\n\
         }\n\n\
         /// The function `name` (NUL-terminated) of `lib`, as a `T`.\n\
         ///\n\
         /// # Safety\n\
         /// `T` is the function's type.\n\
         unsafe fn symbol<T: Copy>(lib: &libloading::Library, name: &[u8]) -> Result<T, String> {\n    \
         // SAFETY: per the contract.\n    \
         let symbol = unsafe { lib.get::<T>(name) };\n    \
         let name = String::from_utf8_lossy(name.strip_suffix(b\"\\0\").unwrap_or(name));\n    \
         symbol.map(|f| *f).map_err(|e| format!(\"{name}: {e}\"))\n\
         }\n",
    );
    let all = format!("{body}{api}");
    let used: Vec<&str> = ["c_char", "c_int", "c_void"]
        .into_iter()
        .filter(|name| all.contains(name))
        .collect();
    let imports = match used.as_slice() {
        [] => String::new(),
        [one] => format!("use std::ffi::{one};\n\n"),
        many => format!("use std::ffi::{{{}}};\n\n", many.join(", ")),
    };
    Ok(format!(
        "// Generated by `cargo xtask gen` (xtask/src/harness_ffi.rs) from {HEADER}: do not edit.\n\
         \n\
         //! The C ABI of the harness library as its header declares it: the\n\
         //! constants, the enums (a C enum is a `c_int` with a constant per value),\n\
         //! the `#[repr(C)]` structs, a type per function and the table of them\n\
         //! that the prebuilt driver fills when it loads the library.\n\
         \n\
         #![allow(dead_code, reason = \"the header's whole ABI; the prebuilt driver calls a part of it\")]\n\
         \n\
         {imports}{all}"
    ))
}

/// Brings [`OUT`] in line with [`HEADER`] (with `check`, only compares).
/// Returns what differed, one line per file.
///
/// # Errors
/// The header could not be read or parsed, or the file could not be written.
pub fn bring_up_to_date(root: &Path, check: bool) -> Result<Vec<String>> {
    let header = fs::read_to_string(root.join(HEADER)).with_context(|| format!("reading {HEADER}"))?;
    let fresh = render(&header)?;
    let path = root.join(OUT);
    let stale = match fs::read_to_string(&path) {
        Ok(old) if old == fresh => return Ok(Vec::new()),
        Ok(_) => format!("{OUT} differs from what {HEADER} makes"),
        Err(_) => format!("{OUT} is missing"),
    };
    if !check {
        fs::write(&path, fresh).with_context(|| format!("writing {OUT}"))?;
    }
    Ok(vec![stale])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header as cbindgen writes it, with one of each declaration.
    const HEADER_TEXT: &str = "/* notes\n * more */\n\n#ifndef G\n#define G\n\n/* Generated: do not edit. */\n\n\
        #include <stdint.h>\n\n// A size.\n#define CAP 16\n\n// Kinds.\ntypedef enum k {\n  // The first.\n  K_A = 0,\n  K_B,\n} k;\n\n\
        // Opaque.\ntypedef struct h h;\n\n// A body.\ntypedef int32_t (*cb)(struct h *host,\n                   void *ctx);\n\n\
        typedef struct s {\n  // Its kind.\n  enum k kind;\n  const char *name;\n  char **names;\n} s;\n\n\
        #ifdef __cplusplus\nextern \"C\" {\n#endif // __cplusplus\n\n// Makes one.\n//\n// # Safety\n// None.\n\
        struct h *make(const struct s *spec,\n               cb body,\n               size_t type);\n\n\
        const char *version(void);\n\nvoid done(struct h *host);\n\n\
        #ifdef __cplusplus\n}  // extern \"C\"\n#endif  // __cplusplus\n\n#endif  /* G */\n";

    #[test]
    fn parses_each_declaration_cbindgen_writes() {
        let items = parse(HEADER_TEXT).expect("the fixture parses");
        assert_eq!(items.len(), 8, "{items:#?}");
        assert_eq!(
            items[0],
            Item::Define {
                doc: vec!["A size.".into()],
                name: "CAP".into(),
                value: 16
            }
        );
        assert_eq!(
            items[1],
            Item::Enum {
                doc: vec!["Kinds.".into()],
                name: "k".into(),
                variants: vec![(vec!["The first.".into()], "K_A".into(), 0), (vec![], "K_B".into(), 1)],
            }
        );
        let Item::Function { doc, name, sig } = &items[5] else {
            panic!("not a function: {:?}", items[5]);
        };
        assert_eq!((name.as_str(), doc.len()), ("make", 4));
        assert_eq!(
            sig.params,
            [
                ("const struct s *".to_owned(), "spec".to_owned()),
                ("cb".to_owned(), "body".to_owned()),
                ("size_t".to_owned(), "type".to_owned())
            ]
        );
    }

    #[test]
    fn writes_rust_types_and_the_table() {
        let rust = render(HEADER_TEXT).expect("the fixture renders");
        for expected in [
            "do not edit",
            "use std::ffi::{c_char, c_int, c_void};",
            "pub(crate) const CAP: usize = 16;",
            "pub(crate) type K = c_int;\n/// The first.\npub(crate) const K_A: K = 0;\npub(crate) const K_B: K = 1;",
            "#[repr(C)]\npub(crate) struct H {\n    _private: [u8; 0],\n}",
            "pub(crate) type Cb = Option<unsafe extern \"C\" fn(host: *mut H, ctx: *mut c_void) -> i32>;",
            "    pub kind: K,\n    pub name: *const c_char,\n    pub names: *mut *mut c_char,",
            "pub(crate) type MakeFn = unsafe extern \"C\" fn(spec: *const S, body: Cb, r#type: usize) -> *mut H;",
            "pub(crate) type VersionFn = unsafe extern \"C\" fn() -> *const c_char;",
            "pub(crate) type DoneFn = unsafe extern \"C\" fn(host: *mut H);",
            "    pub make: MakeFn,",
            "                done: symbol(lib, b\"done\\0\")?,",
        ] {
            assert!(rust.contains(expected), "no {expected:?} in:\n{rust}");
        }
    }

    #[test]
    fn refuses_what_it_does_not_know() {
        for (bad, says) in [
            ("int32_t f(int32_t (*g)(void));\n", "a function or an array"),
            ("typedef struct s {\n  int32_t a[4];\n} s;\n", "an array"),
            ("void f(unsigned long x);\n", "a type this parser does not know"),
            ("#pragma once\n", "an unknown directive"),
            ("#define X (1 << 2)\n", "not a decimal number"),
            ("typedef struct s {\n  int32_t a;\n} t;\n", "closes with"),
        ] {
            let err = render(bad).map(|_| ()).expect_err(bad);
            assert!(format!("{err:#}").contains(says), "{bad:?}: {err:#}");
        }
    }
}
