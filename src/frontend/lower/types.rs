//! C integer types: promotion and the usual arithmetic conversions,
//! literal and spelled types, and the scan of the declarations in front of
//! a SCoP (on the front end's light C scanner, `lex.rs`).
//!
//! Why one file: a little over 600 lines: the type rules and the
//! declaration scan that types names with them share the spelling of types
//! (`type_of_spelling`, `is_specifier`); the scan, the larger half, is the
//! part to move out if either grows.

use super::*;
use crate::frontend::lex::{self, tokens};

pub(super) fn is_integer_type(ty: &str) -> bool {
    ty.split_whitespace().all(|w| {
        matches!(
            w,
            "int"
                | "long"
                | "short"
                | "unsigned"
                | "signed"
                | "char"
                | "size_t"
                | "ptrdiff_t"
                | "int64_t"
                | "int32_t"
                | "uint64_t"
                | "uint32_t"
                | "const"
        )
    })
}

/// The C integer types after promotion (LP64: `long` and `long long` are
/// 64 bits, `int` 32), plus what the front end cannot tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CType {
    Int,
    UInt,
    Long,
    ULong,
    LLong,
    ULLong,
    /// Declared where polytune does not look: may be unsigned.
    Unknown,
    /// A pointer, an array, a floating or a structure type.
    NotInteger,
}

impl CType {
    pub(super) fn unsigned(self) -> bool {
        matches!(self, CType::UInt | CType::ULong | CType::ULLong)
    }

    /// Unsigned, or not known to be signed.
    pub(super) fn maybe_unsigned(self) -> bool {
        !matches!(self, CType::Int | CType::Long | CType::LLong)
    }

    pub(super) fn rank(self) -> u8 {
        match self {
            CType::Int | CType::UInt => 1,
            CType::Long | CType::ULong => 2,
            _ => 3,
        }
    }

    /// The type after the integer promotions (already applied).
    pub(super) fn promoted(self) -> CType {
        self
    }
}

/// The type of a binary operation's operands after the usual arithmetic
/// conversions (C11 6.3.1.8) on LP64.
pub(super) fn common_type(a: CType, b: CType) -> CType {
    use CType::*;
    if a == Unknown || b == Unknown || a == NotInteger || b == NotInteger {
        return Unknown;
    }
    if a.unsigned() == b.unsigned() {
        return if a.rank() >= b.rank() { a } else { b };
    }
    let (u, s) = if a.unsigned() { (a, b) } else { (b, a) };
    if u.rank() >= s.rank() {
        u
    } else if u == UInt {
        // A 64-bit signed type holds every unsigned int.
        s
    } else {
        ULLong
    }
}

/// The type of an integer literal from its spelling (C11 6.4.4.1).
pub(super) fn literal_type(text: &str, value: i64) -> CType {
    use CType::*;
    let suffix: String = text
        .chars()
        .rev()
        .take_while(|c| matches!(c, 'u' | 'U' | 'l' | 'L'))
        .collect();
    let unsigned = suffix.contains(['u', 'U']);
    let longs = suffix.chars().filter(|c| matches!(c, 'l' | 'L')).count();
    let decimal = !(text.starts_with('0') && text.len() > suffix.len() + 1);
    let fits_int = i32::try_from(value).is_ok();
    let fits_uint = u32::try_from(value).is_ok();
    match (unsigned, longs) {
        (false, 0) if fits_int => Int,
        (false, 0) if !decimal && fits_uint => UInt,
        (false, 0 | 1) => Long,
        (false, _) => LLong,
        (true, 0) if fits_uint => UInt,
        (true, 0 | 1) => ULong,
        (true, _) => ULLong,
    }
}

/// The C type named by a declaration's specifiers (`unsigned long`,
/// `const size_t`, `int64_t`, ...).
pub(super) fn type_of_spelling(ty: &str) -> CType {
    use CType::*;
    let words: Vec<&str> = ty
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    if ty.contains(['*', '[']) {
        return NotInteger;
    }
    let mut unsigned = false;
    let mut longs = 0;
    let mut named: Option<CType> = None;
    let mut basic = false;
    for w in &words {
        match *w {
            "unsigned" => unsigned = true,
            "long" => longs += 1,
            "signed" | "int" | "short" | "char" | "_Bool" | "bool" => basic = true,
            "const" | "volatile" | "static" | "register" | "extern" | "auto" | "restrict"
            | "__restrict" | "__restrict__" | "inline" => {}
            "float" | "double" | "void" | "struct" | "union" | "_Complex" => return NotInteger,
            "enum" => return Int,
            other => match typedef_type(other) {
                Some(t) => named = Some(t),
                // An enumeration tag or a typedef polytune does not know.
                None => return Unknown,
            },
        }
    }
    if let Some(t) = named {
        return t;
    }
    if !(basic || unsigned || longs > 0) {
        return Unknown;
    }
    // `unsigned short` and `unsigned char` promote to int.
    let narrow = words
        .iter()
        .any(|w| matches!(*w, "short" | "char" | "_Bool" | "bool"));
    match (unsigned && !narrow, longs) {
        (false, 0) => Int,
        (false, 1) => Long,
        (false, _) => LLong,
        (true, 0) => UInt,
        (true, 1) => ULong,
        (true, _) => ULLong,
    }
}

/// The values a variable of a narrow integer type holds (`char` is signed
/// on the targets polytune knows); `None` for `int` and wider.
pub(super) fn storage_range(ty: &str) -> Option<(i64, i64)> {
    let words: Vec<&str> = ty
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let has = |w: &str| words.contains(&w);
    Some(if has("_Bool") || has("bool") {
        (0, 1)
    } else if has("uint8_t") || (has("char") && has("unsigned")) {
        (0, 255)
    } else if has("int8_t") || has("char") {
        (-128, 127)
    } else if has("uint16_t") || (has("short") && has("unsigned")) {
        (0, 65535)
    } else if has("int16_t") || has("short") {
        (-32768, 32767)
    } else {
        return None;
    })
}

/// The standard typedefs of integer types (LP64).
fn typedef_type(name: &str) -> Option<CType> {
    use CType::*;
    Some(match name {
        "size_t" | "uintptr_t" | "uint64_t" | "uintmax_t" | "uint_fast64_t" | "uint_least64_t"
        | "uint_fast32_t" | "uint_fast16_t" => ULong,
        "ssize_t" | "ptrdiff_t" | "intptr_t" | "int64_t" | "intmax_t" | "off_t"
        | "int_fast64_t" | "int_least64_t" | "int_fast32_t" | "int_fast16_t" => Long,
        "uint32_t" | "uint_least32_t" => UInt,
        "int32_t" | "int16_t" | "int8_t" | "uint16_t" | "uint8_t" | "int_least32_t"
        | "int_least16_t" | "int_least8_t" | "uint_least16_t" | "uint_least8_t" | "int_fast8_t"
        | "uint_fast8_t" => Int,
        _ => return None,
    })
}

/// Whether a word can start or continue a declaration's specifiers.
fn is_specifier(w: &str) -> bool {
    matches!(
        w,
        "unsigned"
            | "signed"
            | "int"
            | "long"
            | "short"
            | "char"
            | "_Bool"
            | "bool"
            | "const"
            | "volatile"
            | "static"
            | "register"
            | "extern"
            | "auto"
            | "restrict"
            | "__restrict"
            | "__restrict__"
            | "inline"
            | "float"
            | "double"
            | "void"
            | "enum"
            | "struct"
            | "union"
            | "_Complex"
    ) || typedef_type(w).is_some()
}

/// The spelling recorded for a macro: its type is known, its range is not
/// (another `#if` branch may define it otherwise).
pub(super) const MACRO: &str = "#define";

/// Names to their C type and spelling.
pub(crate) type Types = HashMap<String, (CType, String)>;

/// The scan of a whole file, advanced from one SCoP to the next so that a
/// file is read once whatever its number of SCoPs.
pub(crate) struct TypeScan {
    tokens: Vec<Tok>,
    /// Byte offset of each token.
    offsets: Vec<usize>,
    typedefs: HashMap<String, CType>,
    /// Block scopes; declarations in parentheses wait in `pending` for the
    /// block that follows them (a function body or a loop body).
    scopes: Vec<Types>,
    pending: Types,
    closed: Option<Types>,
    depth: usize,
    /// Start of the current declaration segment, per parenthesis depth.
    seg: Vec<usize>,
    next: usize,
}

impl TypeScan {
    pub(crate) fn new(text: &str) -> TypeScan {
        let (offsets, tokens) = c_tokens(text).into_iter().unzip();
        TypeScan {
            tokens,
            offsets,
            typedefs: HashMap::new(),
            scopes: vec![HashMap::new()],
            pending: HashMap::new(),
            closed: None,
            depth: 0,
            seg: vec![0],
            next: 0,
        }
    }

    /// The C types of the integer variables and macros visible at byte
    /// `offset` (the start of a SCoP; offsets must not decrease): a light
    /// scan of declarations (`long i, k;`, function parameters,
    /// `for (size_t i = ...`), simple typedefs and `#define NAME <integer
    /// literal>`. Names it cannot type are absent: the caller treats them
    /// as possibly unsigned.
    pub(crate) fn visible_at(&mut self, offset: usize) -> Types {
        self.advance(offset);
        let mut out = HashMap::new();
        for s in &self.scopes {
            out.extend(s.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        out
    }

    /// Reads the tokens before byte `offset` not read yet, one at a time:
    /// macros, block and parenthesis structure, declarators.
    fn advance(&mut self, offset: usize) {
        let end = self.offsets.partition_point(|&o| o < offset);
        let start = self.next.min(end);
        self.next = end.max(self.next);
        for k in start..end {
            match self.tokens[k] {
                Tok::Define(..) => self.define(k),
                Tok::Punct(c) => self.punct(k, c),
                // Another directive (`#include`) ends what came before.
                Tok::Directive => {
                    let d = self.depth;
                    self.seg[d] = k + 1;
                }
                Tok::Other => {}
                Tok::Word(_) => {
                    if let Some(d) = self.declarator(k) {
                        self.declare(d);
                    }
                }
            }
        }
    }

    /// The `#define` at token `k`.
    fn define(&mut self, k: usize) {
        let Tok::Define(name, ty) = &self.tokens[k] else {
            return;
        };
        // A macro defined twice (dataset sizes under #if) may have either
        // type: unknown, unless both agree.
        let ty = match (ty, self.scopes[0].get(name)) {
            (Some(t), Some((old, sp))) if sp == MACRO && old != t => CType::Unknown,
            (t, _) => t.unwrap_or(CType::Unknown),
        };
        self.scopes[0].insert(name.clone(), (ty, MACRO.to_string()));
        let d = self.depth;
        self.seg[d] = k + 1;
    }

    /// The punctuation `c` at token `k`: blocks open and close scopes,
    /// parentheses collect their declarations (parameters) for the block
    /// that may follow, and `;` `,` start a new declaration segment.
    fn punct(&mut self, k: usize, c: char) {
        let depth = self.depth;
        match c {
            '{' => {
                let scope = if matches!(
                    k.checked_sub(1).map(|j| &self.tokens[j]),
                    Some(Tok::Punct(')'))
                ) {
                    self.closed.take().unwrap_or_default()
                } else {
                    HashMap::new()
                };
                self.scopes.push(scope);
                self.depth = 0;
                self.seg = vec![k + 1];
            }
            '}' => {
                if self.scopes.len() > 1 {
                    self.scopes.pop();
                }
                self.depth = 0;
                self.seg = vec![k + 1];
            }
            ';' => {
                self.seg[depth] = k + 1;
                if depth == 0 {
                    self.closed = None;
                }
            }
            '(' => {
                if depth == 0 {
                    self.pending.clear();
                }
                self.depth += 1;
                self.seg.push(k + 1);
            }
            ')' if depth > 0 => {
                self.depth -= 1;
                self.seg.pop();
                if self.depth == 0 {
                    self.closed = Some(std::mem::take(&mut self.pending));
                }
            }
            ',' if depth > 0 => self.seg[depth] = k + 1,
            _ => {}
        }
    }

    /// The declarator whose name is the word at token `k`, if it is one:
    /// the name ends a declarator (followed by `,` `;` `=` `[` or `)`),
    /// and specifiers start its segment, then only `*` and qualifiers
    /// (or a `,` of the same list) come between them and the name.
    fn declarator(&self, k: usize) -> Option<Declarator> {
        let tokens = &self.tokens;
        let Tok::Word(name) = &tokens[k] else {
            return None;
        };
        if is_specifier(name) || self.typedefs.contains_key(name.as_str()) {
            return None;
        }
        let next = tokens.get(k + 1);
        if !matches!(next, Some(Tok::Punct(',' | ';' | '=' | '[' | ')'))) {
            return None;
        }
        // Specifiers from the segment's start.
        let mut j = self.seg[self.depth];
        let mut spelled = Vec::new();
        let mut typedef = false;
        while let Some(Tok::Word(w)) = tokens.get(j) {
            if w == "typedef" {
                typedef = true;
            } else if is_specifier(w) || self.typedefs.contains_key(w.as_str()) {
                spelled.push(w.clone());
            } else {
                break;
            }
            j += 1;
        }
        if spelled.is_empty() {
            return None;
        }
        let mut i = k;
        let mut pointer = false;
        let before = loop {
            if i == 0 {
                return None;
            }
            i -= 1;
            match &tokens[i] {
                Tok::Punct('*') => pointer = true,
                Tok::Word(w)
                    if matches!(
                        w.as_str(),
                        "const" | "volatile" | "restrict" | "__restrict" | "__restrict__"
                    ) && i >= j => {}
                _ => break i,
            }
        };
        let first = before + 1 == j;
        let listed = self.depth == 0 && matches!(tokens[before], Tok::Punct(',')) && before >= j;
        if !(first || listed) {
            return None;
        }
        let array = matches!(next, Some(Tok::Punct('[')));
        let spelling = spelled.join(" ");
        let mut ty = match spelled.iter().find_map(|w| self.typedefs.get(w.as_str())) {
            Some(t) => *t,
            None => type_of_spelling(&spelling),
        };
        if pointer || array {
            ty = CType::NotInteger;
        }
        Some(Declarator {
            name: name.clone(),
            ty,
            spelling,
            typedef,
        })
    }

    /// Records a declarator: a typedef's name, or a variable in the
    /// current scope (in `pending` inside parentheses).
    fn declare(&mut self, d: Declarator) {
        if d.typedef {
            self.typedefs.insert(d.name, d.ty);
            return;
        }
        let target = if self.depth > 0 {
            &mut self.pending
        } else {
            self.scopes.last_mut().expect("file scope")
        };
        target.insert(d.name, (d.ty, d.spelling));
    }
}

/// A declarator read by the scan.
struct Declarator {
    name: String,
    ty: CType,
    /// Its specifiers as spelled (`unsigned long`).
    spelling: String,
    /// Whether it declares a typedef's name.
    typedef: bool,
}

#[cfg(test)]
pub(super) fn declared_types(text: &str) -> Types {
    TypeScan::new(text).visible_at(text.len())
}

/// A token of the light C scan.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Punct(char),
    /// `#define NAME value`, with the value's type when it is an integer
    /// literal.
    Define(String, Option<CType>),
    /// Another preprocessor directive.
    Directive,
    /// Numbers, strings.
    Other,
}

/// Tokens with their byte offsets, on the front end's light scanner.
fn c_tokens(text: &str) -> Vec<(usize, Tok)> {
    tokens(text)
        .into_iter()
        .map(|t| {
            let tok = match t.kind {
                lex::Tok::Ident => Tok::Word(t.word),
                lex::Tok::Punct(c) => Tok::Punct(c as char),
                lex::Tok::Directive => define(&text[t.start + 1..t.end]),
                lex::Tok::Number | lex::Tok::Literal => Tok::Other,
            };
            (t.start, tok)
        })
        .collect()
}

/// A directive (its text after the `#`): `#define NAME value` with the
/// value's type when it is an integer literal, or another directive.
fn define(line: &str) -> Tok {
    let words: Vec<&str> = line.split_whitespace().collect();
    if let ["define", name, value @ ..] = words.as_slice()
        && !name.contains('(')
    {
        let v = value.join(" ");
        let v = v.trim_start_matches('(').trim_end_matches(')').trim();
        let ty = v
            .trim_end_matches(['u', 'U', 'l', 'L'])
            .parse::<i64>()
            .ok()
            .map(|n| literal_type(v, n));
        Tok::Define(name.to_string(), ty)
    } else {
        Tok::Directive
    }
}

#[cfg(test)]
mod types_tests {
    use super::*;

    #[test]
    fn literal_types_follow_c() {
        use CType::*;
        assert_eq!(literal_type("5", 5), Int);
        assert_eq!(literal_type("5UL", 5), ULong);
        assert_eq!(literal_type("5u", 5), UInt);
        assert_eq!(literal_type("5ll", 5), LLong);
        assert_eq!(literal_type("5ULL", 5), ULLong);
        assert_eq!(literal_type("3000000000", 3_000_000_000), Long);
        assert_eq!(literal_type("0xFFFFFFFF", 0xFFFF_FFFF), UInt);
        assert_eq!(literal_type("0", 0), Int);
    }

    #[test]
    fn usual_arithmetic_conversions() {
        use CType::*;
        assert_eq!(common_type(Long, ULong), ULong);
        assert_eq!(common_type(Long, UInt), Long);
        assert_eq!(common_type(Int, UInt), UInt);
        assert_eq!(common_type(LLong, ULong), ULLong);
        assert_eq!(common_type(Int, Long), Long);
        assert_eq!(common_type(Int, Unknown), Unknown);
        assert!(!common_type(Int, Long).maybe_unsigned());
        assert!(Unknown.maybe_unsigned());
    }

    #[test]
    fn spelled_types() {
        use CType::*;
        assert_eq!(type_of_spelling("unsigned long"), ULong);
        assert_eq!(type_of_spelling("const size_t"), ULong);
        assert_eq!(type_of_spelling("unsigned short"), Int);
        assert_eq!(type_of_spelling("long long"), LLong);
        assert_eq!(type_of_spelling("int64_t"), Long);
        assert_eq!(type_of_spelling("double"), NotInteger);
        assert_eq!(type_of_spelling("DATA_TYPE"), Unknown);
    }

    #[test]
    fn declarations_before_a_scop() {
        let text = "#define N 100\n#define BIG 5UL\n#if A\n#define TWICE 5\n#else\n#define TWICE 5UL\n#endif\n#define EXPR (N + 1)\ntypedef unsigned long ulong;\nstatic int g;\n\
                    void other(unsigned n) { long q; }\n\
                    /* int n; */ void f(long n, double A[N], ulong u, int *p) {\n  size_t i, j = 0, k;\n  int t;\n  for (int z = 0; z < 3; z++) { }\n";
        let t = declared_types(text);
        let ty = |n: &str| t.get(n).map(|(c, _)| *c);
        assert_eq!(ty("N"), Some(CType::Int));
        assert_eq!(ty("TWICE"), Some(CType::Unknown));
        assert_eq!(ty("EXPR"), Some(CType::Unknown));
        assert_eq!(ty("BIG"), Some(CType::ULong));
        assert_eq!(ty("g"), Some(CType::Int));
        // The other function's parameter and local are out of scope.
        assert_eq!(ty("n"), Some(CType::Long));
        assert_eq!(ty("q"), None);
        assert_eq!(ty("A"), Some(CType::NotInteger));
        assert_eq!(ty("u"), Some(CType::ULong));
        assert_eq!(ty("p"), Some(CType::NotInteger));
        assert_eq!(ty("i"), Some(CType::ULong));
        assert_eq!(ty("j"), Some(CType::ULong));
        assert_eq!(ty("k"), Some(CType::ULong));
        assert_eq!(ty("t"), Some(CType::Int));
        // A loop's own iterator is gone after its body.
        assert_eq!(ty("z"), None);
    }

    #[test]
    fn each_scop_sees_the_declarations_in_front_of_it() {
        let text = "void f(unsigned long n, double x[9]) { long i;\n#pragma scop\nfor (i = 0; i < n; i++) x[i] = 0;\n#pragma endscop\n}\n\
                    void g(int n, double x[9]) { unsigned i;\n#pragma scop\nfor (i = 0; i < n; i++) x[i] = 0;\n#pragma endscop\n}\n\
                    void h(int n, double x[9]) {\n#pragma scop\nfor (int i = 0; i < n; i++) x[i] = 0;\n#pragma endscop\n}\n";
        let src = crate::frontend::parse_source(
            std::path::Path::new("t.c"),
            text.to_string(),
            &crate::frontend::Options::default(),
        )
        .unwrap();
        let s = &src.scops;
        assert_eq!(s[0].unsigned_parameters, ["n"]);
        assert!(s[0].iterator_casts.is_empty());
        assert!(!s[0].unsigned_checks.is_empty());
        assert!(s[1].unsigned_parameters.is_empty());
        assert_eq!(s[1].iterator_casts["i"], "__typeof__(i)");
        assert!(s[2].unsigned_parameters.is_empty());
        assert!(s[2].iterator_casts.is_empty());
        assert!(s[2].unsigned_checks.is_empty());
        // The fallback is the region's text exactly.
        assert_eq!(s[2].original, "for (int i = 0; i < n; i++) x[i] = 0;\n");
    }
}
