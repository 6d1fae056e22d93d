//! The only door to libclang: parses a translation unit and copies the
//! bodies of the main file's function definitions into an owned [`Node`]
//! tree, so that everything after it is safe, testable Rust.

#![allow(non_upper_case_globals)] // libclang's constant names in patterns

use super::DetectError;
use clang_sys::*;
use std::ffi::{CStr, CString};
use std::os::raw::{c_int, c_uint};
use std::path::Path;

/// What a node is, as far as detection cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Compound,
    For,
    While,
    Do,
    If,
    Switch,
    Goto,
    Break,
    Continue,
    Return,
    Label,
    Decl,
    /// One variable of a declaration (a child of `Decl`), with its name.
    VarDecl,
    Null,
    Asm,
    Call,
    DeclRef,
    Subscript,
    Binary,
    CompoundAssign,
    Unary,
    Member,
    Literal,
    Other,
}

/// What a variable reference refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VarInfo {
    /// A variable (not a function or an enumerator).
    pub variable: bool,
    /// An integer (or enumeration) scalar.
    pub integer: bool,
    /// An array object: a local or global variable of array type. A
    /// parameter never is: `double x[]`, `double A[N][M]` are pointers.
    pub array: bool,
    /// An array of automatic storage (a local array, not `static`): it
    /// did not exist when the function was called.
    pub automatic: bool,
    /// The number of array dimensions of an array object (0 otherwise).
    pub rank: usize,
    /// A pointer, parameters declared with array syntax included.
    pub pointer: bool,
    /// A parameter of the function.
    pub parameter: bool,
    /// The pointer is `restrict`-qualified.
    pub restrict: bool,
    /// The element type once every array and pointer level is removed.
    pub element: String,
    /// Its elements lie in one block of memory, in row-major order: at
    /// most one pointer level, the outermost (`double *x`, `double
    /// A[N][M]`, `double (*p)[M]`, a global array), not `int **m1` nor
    /// `double *rows[N]`, whose rows are objects of their own. The range
    /// of addresses an access reaches is then known from its subscripts.
    pub contiguous: bool,
    /// For a pointer: the tokens of its declaration as written (for the
    /// suggested fix).
    pub declaration: Vec<String>,
    /// A variable of automatic storage (a parameter or a local, not
    /// `static`): no pointer reaches it unless its address is taken.
    pub local: bool,
}

/// An owned copy of one cursor of a function body.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub kind: Kind,
    /// Callee of a call, name of a reference.
    pub name: String,
    /// Operator spelling of unary, binary and compound-assignment nodes
    /// (`None` when it comes from a macro body polytune cannot see).
    pub op: Option<String>,
    /// Byte range in the main file (expansion locations).
    pub start: usize,
    pub end: usize,
    pub line: usize,
    pub column: usize,
    pub var: Option<VarInfo>,
    /// For a reference: its file location (where a macro argument is
    /// written; for a name from a macro body, where the macro is used),
    /// when that is in the same file as the expansion location.
    pub spelled: Option<usize>,
    /// For a member access or a subscript: the type of its value (no
    /// qualifiers, canonical) and whether it is a (non-`volatile`)
    /// integer type.
    pub value: Option<(String, bool)>,
    pub children: Vec<Node>,
}

/// A function definition of the main file.
#[derive(Debug, Clone)]
pub(crate) struct Function {
    pub name: String,
    pub body: Node,
}

/// What detection needs of a translation unit.
#[derive(Debug, Clone)]
pub(crate) struct Unit {
    /// The main file's function definitions.
    pub functions: Vec<Function>,
    /// Macros, from any file (headers included), whose definition holds
    /// a pragma operator (`_Pragma`, `__pragma`) or another such macro.
    pub pragma_macros: Vec<String>,
}

/// Parses `path` with `args` and returns its function definitions.
pub(crate) fn functions(path: &Path, args: &[String]) -> Result<Unit, DetectError> {
    let cpath =
        CString::new(path.to_string_lossy().as_bytes()).map_err(|_| DetectError::Parse {
            path: path.to_path_buf(),
            message: "the path contains a NUL byte".into(),
        })?;
    let cargs: Vec<CString> = args
        .iter()
        .map(|a| CString::new(a.as_bytes()))
        .collect::<Result<_, _>>()
        .map_err(|_| DetectError::Parse {
            path: path.to_path_buf(),
            message: "a clang argument contains a NUL byte".into(),
        })?;
    let argv: Vec<*const std::os::raw::c_char> = cargs.iter().map(|a| a.as_ptr()).collect();
    // SAFETY: every pointer handed to libclang outlives the call; the index
    // and translation unit are disposed of before returning.
    unsafe {
        let index = clang_createIndex(0, 0);
        let tu = clang_parseTranslationUnit(
            index,
            cpath.as_ptr(),
            argv.as_ptr(),
            argv.len() as c_int,
            std::ptr::null_mut(),
            0,
            CXTranslationUnit_DetailedPreprocessingRecord,
        );
        if tu.is_null() {
            clang_disposeIndex(index);
            return Err(DetectError::Parse {
                path: path.to_path_buf(),
                message: "libclang could not parse the file".into(),
            });
        }
        let result = match first_error(tu, path) {
            Some(e) => Err(e),
            None => Ok(Unit {
                functions: collect_functions(tu),
                pragma_macros: pragma_macros(tu),
            }),
        };
        clang_disposeTranslationUnit(tu);
        clang_disposeIndex(index);
        result
    }
}

/// The first error diagnostic: detection on a file clang cannot compile
/// would miss declarations, so it is refused.
unsafe fn first_error(tu: CXTranslationUnit, path: &Path) -> Option<DetectError> {
    unsafe {
        for i in 0..clang_getNumDiagnostics(tu) {
            let d = clang_getDiagnostic(tu, i);
            let severity = clang_getDiagnosticSeverity(d);
            if severity >= CXDiagnostic_Error {
                let message = string(clang_getDiagnosticSpelling(d));
                let loc = clang_getDiagnosticLocation(d);
                let (mut file, mut line, mut column, mut offset) = (std::ptr::null_mut(), 0, 0, 0);
                clang_getExpansionLocation(loc, &mut file, &mut line, &mut column, &mut offset);
                let where_ = if file.is_null() {
                    path.to_path_buf()
                } else {
                    string(clang_getFileName(file)).into()
                };
                clang_disposeDiagnostic(d);
                return Some(DetectError::Clang {
                    path: where_,
                    line: line as usize,
                    column: column as usize,
                    message,
                });
            }
            clang_disposeDiagnostic(d);
        }
        None
    }
}

unsafe fn string(s: CXString) -> String {
    unsafe {
        let p = clang_getCString(s);
        let out = if p.is_null() {
            String::new()
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        };
        clang_disposeString(s);
        out
    }
}

extern "C" fn push_child(c: CXCursor, _parent: CXCursor, data: CXClientData) -> CXChildVisitResult {
    // SAFETY: `data` is the `Vec<CXCursor>` passed by `children`.
    let v = unsafe { &mut *(data as *mut Vec<CXCursor>) };
    v.push(c);
    CXChildVisit_Continue
}

fn children(c: CXCursor) -> Vec<CXCursor> {
    let mut v: Vec<CXCursor> = Vec::new();
    // SAFETY: the visitor only pushes into `v`, which outlives the call.
    unsafe {
        clang_visitChildren(c, push_child, &mut v as *mut Vec<CXCursor> as CXClientData);
    }
    v
}

/// (in main file, line, column, byte offset) of a location.
fn place(l: CXSourceLocation) -> (bool, usize, usize, usize) {
    let (mut file, mut line, mut column, mut offset): (CXFile, c_uint, c_uint, c_uint) =
        (std::ptr::null_mut(), 0, 0, 0);
    // SAFETY: plain out-parameters.
    unsafe {
        clang_getExpansionLocation(l, &mut file, &mut line, &mut column, &mut offset);
        (
            clang_Location_isFromMainFile(l) != 0,
            line as usize,
            column as usize,
            offset as usize,
        )
    }
}

unsafe fn collect_functions(tu: CXTranslationUnit) -> Vec<Function> {
    unsafe {
        let root = clang_getTranslationUnitCursor(tu);
        let mut out = Vec::new();
        for c in children(root) {
            if clang_getCursorKind(c) != CXCursor_FunctionDecl || clang_isCursorDefinition(c) == 0 {
                continue;
            }
            if !place(clang_getCursorLocation(c)).0 {
                continue;
            }
            let name = string(clang_getCursorSpelling(c));
            if let Some(body) = children(c)
                .into_iter()
                .find(|k| clang_getCursorKind(*k) == CXCursor_CompoundStmt)
            {
                out.push(Function {
                    name,
                    body: node(tu, body),
                });
            }
        }
        out
    }
}

/// The macros whose expansion contains a pragma operator.
unsafe fn pragma_macros(tu: CXTranslationUnit) -> Vec<String> {
    unsafe {
        let root = clang_getTranslationUnitCursor(tu);
        let mut defs: Vec<(String, Vec<String>)> = Vec::new();
        for c in children(root) {
            if clang_getCursorKind(c) != CXCursor_MacroDefinition {
                continue;
            }
            let name = string(clang_getCursorSpelling(c));
            let body: Vec<String> = tokens(tu, clang_getCursorExtent(c))
                .into_iter()
                .skip(1)
                .map(|(t, _)| t)
                .collect();
            defs.push((name, body));
        }
        let mut found: Vec<String> = Vec::new();
        loop {
            let before = found.len();
            for (name, body) in &defs {
                if !found.contains(name)
                    && body
                        .iter()
                        .any(|t| t == "_Pragma" || t == "__pragma" || found.contains(t))
                {
                    found.push(name.clone());
                }
            }
            if found.len() == before {
                return found;
            }
        }
    }
}

/// The tokens of a range with their byte offsets, comments left out.
/// The range is taken at its expansion locations: a range that starts
/// or ends in a macro (from a header, say) is read where the macro is
/// used, not where it is defined.
unsafe fn tokens(tu: CXTranslationUnit, range: CXSourceRange) -> Vec<(String, usize)> {
    unsafe {
        let at = |l: CXSourceLocation| {
            let (mut file, mut line, mut column, mut offset): (CXFile, c_uint, c_uint, c_uint) =
                (std::ptr::null_mut(), 0, 0, 0);
            clang_getExpansionLocation(l, &mut file, &mut line, &mut column, &mut offset);
            (file, offset)
        };
        let (f0, o0) = at(clang_getRangeStart(range));
        let (f1, o1) = at(clang_getRangeEnd(range));
        let range = if !f0.is_null() && clang_File_isEqual(f0, f1) != 0 && o0 <= o1 {
            clang_getRange(
                clang_getLocationForOffset(tu, f0, o0),
                clang_getLocationForOffset(tu, f1, o1),
            )
        } else {
            range
        };
        let mut toks: *mut CXToken = std::ptr::null_mut();
        let mut n: c_uint = 0;
        clang_tokenize(tu, range, &mut toks, &mut n);
        let mut out = Vec::with_capacity(n as usize);
        for i in 0..n as usize {
            let t = *toks.add(i);
            if clang_getTokenKind(t) == CXToken_Comment {
                continue;
            }
            let s = string(clang_getTokenSpelling(tu, t));
            let off = place(clang_getTokenLocation(tu, t)).3;
            out.push((s, off));
        }
        if !toks.is_null() {
            clang_disposeTokens(tu, toks, n);
        }
        out
    }
}

unsafe fn node(tu: CXTranslationUnit, c: CXCursor) -> Node {
    unsafe {
        let raw = clang_getCursorKind(c);
        let kids = children(c);
        // Implicit casts are unexposed: they are transparent here.
        if raw == CXCursor_UnexposedExpr && kids.len() == 1 {
            return node(tu, kids[0]);
        }
        let kind = match raw {
            CXCursor_CompoundStmt => Kind::Compound,
            CXCursor_ForStmt => Kind::For,
            CXCursor_WhileStmt => Kind::While,
            CXCursor_DoStmt => Kind::Do,
            CXCursor_IfStmt => Kind::If,
            CXCursor_SwitchStmt | CXCursor_CaseStmt | CXCursor_DefaultStmt => Kind::Switch,
            CXCursor_GotoStmt | CXCursor_IndirectGotoStmt => Kind::Goto,
            CXCursor_BreakStmt => Kind::Break,
            CXCursor_ContinueStmt => Kind::Continue,
            CXCursor_ReturnStmt => Kind::Return,
            CXCursor_LabelStmt => Kind::Label,
            CXCursor_DeclStmt => Kind::Decl,
            CXCursor_VarDecl => Kind::VarDecl,
            CXCursor_NullStmt => Kind::Null,
            CXCursor_AsmStmt | CXCursor_MSAsmStmt => Kind::Asm,
            CXCursor_CallExpr => Kind::Call,
            CXCursor_DeclRefExpr => Kind::DeclRef,
            CXCursor_ArraySubscriptExpr => Kind::Subscript,
            CXCursor_BinaryOperator => Kind::Binary,
            CXCursor_CompoundAssignOperator => Kind::CompoundAssign,
            CXCursor_UnaryOperator => Kind::Unary,
            CXCursor_MemberRefExpr => Kind::Member,
            CXCursor_IntegerLiteral
            | CXCursor_FloatingLiteral
            | CXCursor_CharacterLiteral
            | CXCursor_StringLiteral => Kind::Literal,
            _ => Kind::Other,
        };
        let extent = clang_getCursorExtent(c);
        let (_, line, column, start) = place(clang_getRangeStart(extent));
        let (_, _, _, end) = place(clang_getRangeEnd(extent));
        let children: Vec<Node> = kids.into_iter().map(|k| node(tu, k)).collect();
        let name = match kind {
            Kind::Call | Kind::DeclRef | Kind::Member | Kind::VarDecl => {
                string(clang_getCursorSpelling(c))
            }
            _ => String::new(),
        };
        let op = match kind {
            Kind::Binary | Kind::CompoundAssign => {
                // The operator is the last token between the operands. An
                // operand from a macro ends where its macro name starts,
                // so that name is in the gap and the operator still found
                // after it; an operator from a macro leaves no operator
                // token there.
                let lhs_end = children.first().map(|l| l.end).unwrap_or(start);
                let rhs_start = children.get(1).map(|r| r.start).unwrap_or(start);
                tokens(tu, extent)
                    .into_iter()
                    .rev()
                    .find(|(_, off)| *off >= lhs_end && *off < rhs_start)
                    .map(|(s, _)| s)
                    .filter(|s| is_operator(s))
            }
            Kind::Unary => {
                let toks = tokens(tu, extent);
                match (toks.first(), toks.last()) {
                    (Some((f, _)), _) if is_operator(f) => Some(f.clone()),
                    (_, Some((l, _))) if l == "++" || l == "--" => Some(format!("post{l}")),
                    _ => None,
                }
            }
            _ => None,
        };
        let var = if kind == Kind::DeclRef {
            Some(var_info(tu, clang_getCursorReferenced(c)))
        } else {
            None
        };
        let spelled = if kind == Kind::DeclRef {
            let loc = clang_getCursorLocation(c);
            let (mut fs, mut fe): (CXFile, CXFile) = (std::ptr::null_mut(), std::ptr::null_mut());
            let (mut line, mut column, mut os, mut oe): (c_uint, c_uint, c_uint, c_uint) =
                (0, 0, 0, 0);
            clang_getFileLocation(loc, &mut fs, &mut line, &mut column, &mut os);
            clang_getExpansionLocation(loc, &mut fe, &mut line, &mut column, &mut oe);
            (!fs.is_null() && clang_File_isEqual(fs, fe) != 0).then_some(os as usize)
        } else {
            None
        };
        let value = matches!(kind, Kind::Member | Kind::Subscript).then(|| {
            // A `volatile` value may change at any time: never invariant,
            // so never an integer here.
            let ty = clang_getCursorType(c);
            let t = clang_getCanonicalType(ty);
            let volatile = clang_isVolatileQualifiedType(ty) != 0;
            (
                unqualified(&string(clang_getTypeSpelling(t))),
                is_integer(t.kind) && !volatile,
            )
        });
        Node {
            kind,
            name,
            op,
            start,
            end: end.max(start),
            line,
            column,
            var,
            spelled,
            value,
            children,
        }
    }
}

/// Whether `restrict` is written in the first brackets after `name`.
fn restrict_in_brackets(tokens: &[String], name: &str) -> bool {
    let Some(k) = tokens.iter().position(|t| t == name) else {
        return false;
    };
    tokens.get(k + 1).is_some_and(|t| t == "[")
        && tokens[k + 2..]
            .iter()
            .take_while(|t| *t != "]")
            .any(|t| matches!(t.as_str(), "restrict" | "__restrict" | "__restrict__"))
}

fn is_operator(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|ch| "+-*/%<>=!&|^~,".contains(ch))
}

unsafe fn var_info(tu: CXTranslationUnit, decl: CXCursor) -> VarInfo {
    unsafe {
        let kind = clang_getCursorKind(decl);
        let variable = kind == CXCursor_VarDecl || kind == CXCursor_ParmDecl;
        let ty = clang_getCursorType(decl);
        let canon = clang_getCanonicalType(ty);
        let integer = is_integer(canon.kind) || kind == CXCursor_EnumConstantDecl;
        let is_array = |k| {
            k == CXType_ConstantArray
                || k == CXType_IncompleteArray
                || k == CXType_VariableArray
                || k == CXType_DependentSizedArray
        };
        let parameter = kind == CXCursor_ParmDecl;
        // A parameter's type has decayed to a pointer (`double x[]` is
        // `double *x`): it is never an array object.
        let array = variable && !parameter && is_array(canon.kind);
        let automatic =
            array && kind == CXCursor_VarDecl && clang_Cursor_hasVarDeclGlobalStorage(decl) == 0;
        // libclang gives a parameter's type as written (`double [N]`).
        let pointer =
            variable && (canon.kind == CXType_Pointer || (parameter && is_array(canon.kind)));
        let declaration: Vec<String> = if pointer {
            tokens(tu, clang_getCursorExtent(decl))
                .into_iter()
                .map(|(t, _)| t)
                .collect()
        } else {
            Vec::new()
        };
        // `double x[restrict]`, `double A[restrict N][M]`: the qualifier
        // of the pointer it decays to is written inside the first `[]`.
        let name = string(clang_getCursorSpelling(decl));
        let restrict = clang_isRestrictQualifiedType(ty) != 0
            || (parameter && is_array(canon.kind) && restrict_in_brackets(&declaration, &name));
        let mut rank = 0;
        if array {
            let mut t = canon;
            while is_array(t.kind) {
                rank += 1;
                t = clang_getCanonicalType(clang_getArrayElementType(t));
            }
        }
        let mut t = canon;
        let mut contiguous = true;
        let mut level = 0;
        loop {
            if t.kind == CXType_Pointer {
                contiguous &= level == 0;
                level += 1;
                t = clang_getCanonicalType(clang_getPointeeType(t));
            } else if is_array(t.kind) {
                level += 1;
                t = clang_getCanonicalType(clang_getArrayElementType(t));
            } else {
                break;
            }
        }
        let element = unqualified(&string(clang_getTypeSpelling(t)));
        let local = variable && clang_Cursor_hasVarDeclGlobalStorage(decl) == 0;
        VarInfo {
            variable,
            integer,
            array,
            automatic,
            rank,
            pointer,
            parameter,
            restrict,
            element,
            contiguous,
            declaration,
            local,
        }
    }
}

/// An integer (or enumeration) type.
fn is_integer(kind: CXTypeKind) -> bool {
    (CXType_Bool..=CXType_Int128).contains(&kind) || kind == CXType_Enum
}

/// A type's spelling without its qualifiers.
fn unqualified(spelling: &str) -> String {
    spelling
        .split_whitespace()
        .filter(|w| !matches!(*w, "const" | "volatile" | "restrict"))
        .collect::<Vec<_>>()
        .join(" ")
}
