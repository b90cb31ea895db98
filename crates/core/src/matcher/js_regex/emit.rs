//! The tree spelled for Rust: a pattern for the `regex` crate (linear time) or for
//! `fancy-regex` (bounded backtracking), meaning what the JavaScript pattern means — `\d`,
//! `\w`, `\s`, `\b` and `.` as JavaScript defines them, modifier groups spelled out, and case
//! folding by ECMAScript's `Canonicalize` (without the `u` flag).

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use super::parse::{ClassItem, Node, Shorthand};

/// The tree spelled for `target`; `len_hint` is the source's length (the output is about as
/// long).
pub(super) fn spell(ast: &Node, len_hint: usize, target: Target) -> String {
    let mut out = String::with_capacity(len_hint + 16);
    let mode = Mode {
        target,
        dot_all: false,
        icase: false,
        multiline: false,
    };
    emit(ast, mode, &mut out);
    out
}

/// JavaScript's `\s`: WhiteSpace and LineTerminator (not Unicode `White_Space`: U+FEFF is in,
/// U+0085 is out), as members of a Rust class.
const JS_SPACE: &str = r"\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

/// JavaScript's `\w` (ASCII in every mode without the `u` and `i` flags).
const JS_WORD: &str = "A-Za-z0-9_";

/// A character, spelled for Rust (inside or outside a class).
fn push_char(out: &mut String, c: u32) {
    match char::from_u32(c) {
        Some(ch) if "\\.+*?()|[]{}^$#&-~".contains(ch) => {
            out.push('\\');
            out.push(ch);
        }
        Some(ch) if ch.is_ascii_graphic() || ch == ' ' || (!ch.is_ascii() && !ch.is_control()) => {
            out.push(ch)
        }
        _ => out.push_str(&format!("\\x{{{c:X}}}")),
    }
}

fn push_set(out: &mut String, s: Shorthand, positive: bool) {
    let members = match s {
        Shorthand::Digit => "0-9",
        Shorthand::Word => JS_WORD,
        Shorthand::Space => JS_SPACE,
    };
    if positive {
        out.push_str(members);
    } else {
        out.push_str("[^");
        out.push_str(members);
        out.push(']');
    }
}

/// How the emitted pattern will run: `fancy-regex` refuses `(?-u:…)`.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Target {
    Regex,
    Fancy,
}

/// What applies where a node is emitted: the target, and the flags of the enclosing
/// modifier groups (`(?ims-ims:…)`), which are spelled out rather than left to Rust's flags.
#[derive(Clone, Copy)]
struct Mode {
    target: Target,
    dot_all: bool,
    icase: bool,
    multiline: bool,
}

/// JavaScript's line terminators, as members of a Rust class.
const JS_LINE_END: &str = r"\n\r\x{2028}\x{2029}";

/// `Canonicalize` of ECMAScript without the `u` flag: the upper case of a UTF-16 code unit,
/// unless that is several characters, or ASCII for a non-ASCII one (`ſ` stays `ſ`).
fn js_canonicalize(c: u32) -> u32 {
    let Some(ch) = char::from_u32(c).filter(|_| c <= 0xFFFF) else {
        return c;
    };
    let mut up = ch.to_uppercase();
    match (up.next(), up.next()) {
        (Some(u), None) if !(c >= 128 && (u as u32) < 128) => u as u32,
        _ => c,
    }
}

/// Sets of characters `i` makes equal, and the set of each member.
type CaseSets = (Vec<Vec<u32>>, HashMap<u32, usize>);

/// The characters `i` makes equal, in sets of two or more (from [`js_canonicalize`]), and the
/// set of each such character.
fn case_sets() -> &'static CaseSets {
    static SETS: OnceLock<CaseSets> = OnceLock::new();
    SETS.get_or_init(|| {
        let mut by_canon: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for c in (0..0xD800).chain(0xE000..=0xFFFF) {
            by_canon.entry(js_canonicalize(c)).or_default().push(c);
        }
        let sets: Vec<Vec<u32>> = by_canon.into_values().filter(|s| s.len() > 1).collect();
        let index = sets
            .iter()
            .enumerate()
            .flat_map(|(i, s)| s.iter().map(move |&c| (c, i)))
            .collect();
        (sets, index)
    })
}

/// Sorted, merged ranges.
fn normalized(mut ranges: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    ranges.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
    for (a, b) in ranges {
        match out.last_mut() {
            Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

fn complement(ranges: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut next = 0;
    for &(a, b) in ranges {
        if a > next {
            out.push((next, a - 1));
        }
        next = b + 1;
    }
    if next <= 0x10_FFFF {
        out.push((next, 0x10_FFFF));
    }
    out
}

fn shorthand_ranges(s: Shorthand) -> Vec<(u32, u32)> {
    let pairs: &[(u32, u32)] = match s {
        Shorthand::Digit => &[(0x30, 0x39)],
        Shorthand::Word => &[(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)],
        Shorthand::Space => &[
            (0x09, 0x0D),
            (0x20, 0x20),
            (0xA0, 0xA0),
            (0x1680, 0x1680),
            (0x2000, 0x200A),
            (0x2028, 0x2029),
            (0x202F, 0x202F),
            (0x205F, 0x205F),
            (0x3000, 0x3000),
            (0xFEFF, 0xFEFF),
        ],
    };
    pairs.to_vec()
}

/// The members of a class under `i`: each member with every character `i` makes equal to it.
fn case_closed(items: &[ClassItem]) -> Vec<(u32, u32)> {
    let mut ranges = Vec::new();
    for item in items {
        match *item {
            ClassItem::Range(a, b) => ranges.push((a, b)),
            ClassItem::Set(s, true) => ranges.extend(shorthand_ranges(s)),
            ClassItem::Set(s, false) => ranges.extend(complement(&shorthand_ranges(s))),
        }
    }
    let ranges = normalized(ranges);
    let contains = |c: u32| {
        let i = ranges.partition_point(|&(_, b)| b < c);
        ranges.get(i).is_some_and(|&(a, _)| a <= c)
    };
    let mut closed = ranges.clone();
    for set in &case_sets().0 {
        if set.iter().any(|&c| contains(c)) {
            closed.extend(set.iter().map(|&c| (c, c)));
        }
    }
    normalized(closed)
}

/// A class of ranges (no surrogates: Rust has no spelling for them, and text has none).
fn push_ranges(out: &mut String, negated: bool, ranges: &[(u32, u32)]) {
    let ranges: Vec<(u32, u32)> = ranges
        .iter()
        .flat_map(|&(a, b)| [(a, b.min(0xD7FF)), (a.max(0xE000), b)])
        .filter(|&(a, b)| a <= b)
        .collect();
    if ranges.is_empty() {
        out.push_str(if negated { r"[\s\S]" } else { r"[^\s\S]" });
        return;
    }
    out.push_str(if negated { "[^" } else { "[" });
    for (a, b) in ranges {
        push_char(out, a);
        if a != b {
            out.push('-');
            push_char(out, b);
        }
    }
    out.push(']');
}

fn emit(node: &Node, mode: Mode, out: &mut String) {
    const W: &str = "[A-Za-z0-9_]";
    match node {
        Node::Char(c) if mode.icase => match case_sets().1.get(c) {
            Some(&i) => {
                let set = &case_sets().0[i];
                push_ranges(
                    out,
                    false,
                    &normalized(set.iter().map(|&c| (c, c)).collect()),
                );
            }
            None => push_char(out, *c),
        },
        Node::Char(c) => push_char(out, *c),
        Node::Class(negated, items) if mode.icase => {
            push_ranges(out, *negated, &case_closed(items))
        }
        Node::Class(negated, items) => {
            if let ([ClassItem::Set(s, positive)], false) = (items.as_slice(), negated) {
                // A shorthand alone: one class.
                out.push_str(if *positive { "[" } else { "[^" });
                push_set(out, *s, true);
                out.push(']');
                return;
            }
            if items.is_empty() {
                // `[]` matches nothing, `[^]` anything.
                out.push_str(if *negated { r"[\s\S]" } else { r"[^\s\S]" });
                return;
            }
            out.push('[');
            if *negated {
                out.push('^');
            }
            for item in items {
                match *item {
                    ClassItem::Range(a, b) => {
                        push_char(out, a);
                        if a != b {
                            out.push('-');
                            push_char(out, b);
                        }
                    }
                    ClassItem::Set(s, positive) => push_set(out, s, positive),
                }
            }
            out.push(']');
        }
        Node::Dot if mode.dot_all => out.push_str(r"[\s\S]"),
        Node::Dot => out.push_str(&format!("[^{JS_LINE_END}]")),
        // In multiline mode, after or before any of JavaScript's line terminators.
        Node::Start if mode.multiline => out.push_str(&format!("(?:^|(?<=[{JS_LINE_END}]))")),
        Node::End if mode.multiline => out.push_str(&format!("(?:$|(?=[{JS_LINE_END}]))")),
        Node::Start => out.push('^'),
        Node::End => out.push('$'),
        Node::WordBoundary(b) => match mode.target {
            Target::Regex => out.push_str(if *b { r"(?-u:\b)" } else { r"(?-u:\B)" }),
            Target::Fancy if *b => out.push_str(&format!("(?:(?<={W})(?!{W})|(?<!{W})(?={W}))")),
            Target::Fancy => out.push_str(&format!("(?:(?<={W})(?={W})|(?<!{W})(?!{W}))")),
        },
        // A group that did not take part matches the empty string in JavaScript.
        Node::Backref(n) => out.push_str(&format!(r"(?({n})\{n})")),
        Node::Group(index, body) => {
            out.push_str(if index.is_some() { "(" } else { "(?:" });
            emit(body, mode, out);
            out.push(')');
        }
        Node::Look(open, body) => {
            out.push_str(open);
            emit(body, mode, out);
            out.push(')');
        }
        Node::Modifiers(flags, body) => {
            let on = flags.split('-').next().unwrap_or("");
            let off = flags.split('-').nth(1).unwrap_or("");
            let flag = |was: bool, f: char| (was || on.contains(f)) && !off.contains(f);
            let inner = Mode {
                target: mode.target,
                dot_all: flag(mode.dot_all, 's'),
                icase: flag(mode.icase, 'i'),
                multiline: flag(mode.multiline, 'm'),
            };
            out.push_str("(?:");
            emit(body, inner, out);
            out.push(')');
        }
        Node::Cat(nodes) => {
            for n in nodes {
                emit(n, mode, out);
            }
        }
        Node::Alt(branches) => {
            for (i, b) in branches.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                emit(b, mode, out);
            }
        }
        // A quantified lookahead (Annex B), which `fancy-regex` refuses to repeat: it is
        // zero-width, so JavaScript runs it once when `min > 0` (more iterations would match
        // empty and are rejected), and never in effect when `min == 0`.
        Node::Repeat { node, min, .. } if matches!(**node, Node::Look(..)) && *min > 0 => {
            emit(node, mode, out);
        }
        Node::Repeat { node, .. } if matches!(**node, Node::Look(..)) && !has_group(node) => {
            out.push_str("(?:)");
        }
        Node::Repeat {
            node,
            min,
            max,
            greedy,
        } => {
            out.push_str("(?:");
            emit(node, mode, out);
            out.push(')');
            match (min, max) {
                (0, None) => out.push('*'),
                (1, None) => out.push('+'),
                (0, Some(1)) => out.push('?'),
                (n, None) => out.push_str(&format!("{{{n},}}")),
                (n, Some(m)) if n == m => out.push_str(&format!("{{{n}}}")),
                (n, Some(m)) => out.push_str(&format!("{{{n},{m}}}")),
            }
            if !greedy {
                out.push('?');
            }
        }
    }
}

fn has_group(node: &Node) -> bool {
    match node {
        Node::Group(index, body) => index.is_some() || has_group(body),
        Node::Look(_, body) | Node::Modifiers(_, body) => has_group(body),
        Node::Repeat { node, .. } => has_group(node),
        Node::Cat(nodes) | Node::Alt(nodes) => nodes.iter().any(has_group),
        _ => false,
    }
}
