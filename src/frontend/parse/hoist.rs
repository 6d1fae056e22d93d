//! Loop iterators declared in the body of an enclosing loop (`for (y ...)
//! { int x; for (x = 1; x < n; x++) ... }`, common in OpenMP code, where
//! the declaration makes `x` private to each thread).
//!
//! When every declaration at the head of a block declares, without a
//! value, an integer iterator of the block's loops, the block means what
//! it would with the declarations in the loop headers (`for (int x = 1;
//! ...)`): the variable is not read before a loop sets it (the lowering
//! refuses an iterator used outside its loop, and one assigned elsewhere),
//! and it is gone at the block's end. The block is then a plain one, and
//! its loops declare their iterators.

use super::{Pair, Rule};

/// The type words an iterator may be declared with here: an integer type,
/// no qualifier (`static`, `const`, `volatile` change what the variable is)
/// and no pointer.
const INTEGER_WORDS: [&str; 12] = [
    "int",
    "long",
    "short",
    "char",
    "signed",
    "unsigned",
    "size_t",
    "ptrdiff_t",
    "int64_t",
    "int32_t",
    "uint64_t",
    "uint32_t",
];

/// The iterators the declarations among `pairs` (a block's statements)
/// declare, with their types, when all of them are iterators of the
/// block's loops as described above; empty otherwise.
pub(super) fn loop_iterators(pairs: &[Pair<Rule>]) -> Vec<(String, String)> {
    let mut declared = Vec::new();
    for q in pairs.iter().filter(|q| q.as_rule() == Rule::local_decl) {
        let mut it = q.clone().into_inner();
        let Some(ty) = it.next().filter(|t| integer_type(t)) else {
            return Vec::new();
        };
        let ty = ty.as_str().split_whitespace().collect::<Vec<_>>().join(" ");
        for d in it {
            let parts: Vec<Pair<Rule>> = d.into_inner().collect();
            match parts.as_slice() {
                [name] => declared.push((name.as_str().to_string(), ty.clone())),
                _ => return Vec::new(),
            }
        }
    }
    let rest: Vec<&Pair<Rule>> = pairs
        .iter()
        .filter(|q| q.as_rule() != Rule::local_decl)
        .collect();
    let mut iterators = Vec::new();
    let mut redeclared = Vec::new();
    for q in &rest {
        names_in(q, &mut iterators, &mut redeclared);
    }
    let fits = declared.iter().enumerate().all(|(k, (name, _))| {
        iterators.contains(name)
            && !redeclared.contains(name)
            && !declared[..k].iter().any(|(n, _)| n == name)
    });
    if fits { declared } else { Vec::new() }
}

/// Whether a declaration's type is a plain integer type.
fn integer_type(t: &Pair<Rule>) -> bool {
    t.as_rule() == Rule::type_name
        && t.clone()
            .into_inner()
            .all(|w| w.as_rule() == Rule::type_word && INTEGER_WORDS.contains(&w.as_str().trim()))
}

/// The iterators of the loops inside `p` that do not declare them, and
/// the names declared again inside it.
fn names_in(p: &Pair<Rule>, iterators: &mut Vec<String>, redeclared: &mut Vec<String>) {
    match p.as_rule() {
        Rule::for_init => {
            let parts: Vec<Pair<Rule>> = p.clone().into_inner().collect();
            match parts.first() {
                Some(id) if id.as_rule() == Rule::identifier => {
                    iterators.push(id.as_str().to_string())
                }
                // `for (int x = ...)`: a variable of its own.
                _ => redeclared.extend(
                    parts
                        .iter()
                        .filter(|x| x.as_rule() == Rule::identifier)
                        .map(|x| x.as_str().to_string()),
                ),
            }
        }
        Rule::local_decl | Rule::declaration => {
            // Every identifier of a declaration, conservatively (a name in
            // an initializer too).
            collect_identifiers(p, redeclared);
            return;
        }
        _ => {}
    }
    for c in p.clone().into_inner() {
        names_in(&c, iterators, redeclared);
    }
}

fn collect_identifiers(p: &Pair<Rule>, out: &mut Vec<String>) {
    if p.as_rule() == Rule::identifier {
        out.push(p.as_str().to_string());
    }
    for c in p.clone().into_inner() {
        collect_identifiers(&c, out);
    }
}
