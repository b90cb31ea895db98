//! What `fancy-regex` would read differently from JavaScript, refused before emission:
//! backreferences to groups JavaScript resets at each repetition, and backreferences under the
//! `i` modifier (JavaScript compares canonicalized characters).

use super::parse::{Node, PatternError};

/// Refuses what the tree cannot mean in Rust what it means in JavaScript.
pub(super) fn check(ast: &Node) -> Result<(), PatternError> {
    check_backrefs(ast)?;
    if icase_backref(ast, false) {
        return Err(PatternError::BackrefUnderIgnoreCase);
    }
    Ok(())
}

/// A step of the way from the root of a pattern down to a node, for the backreference check.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    /// A quantifier, numbered in the walk: whether it repeats (`max > 1`), whether it may
    /// run its body zero times, and whether its body may match the empty string.
    Repeat(usize, bool, bool, bool),
    /// One branch of an alternation with more than one branch.
    Branch,
    Look,
}

/// Whether a backreference is under the `i` modifier (JavaScript compares canonicalized
/// characters, `fancy-regex` folds case its own way).
fn icase_backref(node: &Node, icase: bool) -> bool {
    match node {
        Node::Backref(_) => icase,
        Node::Modifiers(flags, body) => {
            let on = flags.split('-').next().unwrap_or("");
            let off = flags.split('-').nth(1).unwrap_or("");
            icase_backref(body, (icase || on.contains('i')) && !off.contains('i'))
        }
        Node::Group(_, body) | Node::Look(_, body) => icase_backref(body, icase),
        Node::Repeat { node, .. } => icase_backref(node, icase),
        Node::Cat(nodes) | Node::Alt(nodes) => nodes.iter().any(|n| icase_backref(n, icase)),
        _ => false,
    }
}

/// Whether a node may match the empty string.
fn nullable(node: &Node) -> bool {
    match node {
        Node::Char(_) | Node::Class(..) | Node::Dot => false,
        Node::Group(_, body) | Node::Modifiers(_, body) => nullable(body),
        Node::Cat(nodes) => nodes.iter().all(nullable),
        Node::Alt(nodes) => nodes.iter().any(nullable),
        Node::Repeat { node, min, .. } => *min == 0 || nullable(node),
        Node::Start | Node::End | Node::WordBoundary(_) | Node::Backref(_) | Node::Look(..) => true,
    }
}

/// Where each group and each backreference sits, for [`check_backrefs`].
fn walk(
    node: &Node,
    path: &mut Vec<Step>,
    loops: &mut usize,
    groups: &mut Vec<(usize, Vec<Step>)>,
    refs: &mut Vec<(usize, Vec<Step>)>,
) {
    match node {
        Node::Backref(n) => refs.push((*n, path.clone())),
        Node::Group(index, body) => {
            if let Some(i) = index {
                groups.push((*i, path.clone()));
            }
            walk(body, path, loops, groups, refs);
        }
        Node::Look(_, body) => {
            path.push(Step::Look);
            walk(body, path, loops, groups, refs);
            path.pop();
        }
        Node::Modifiers(_, body) => walk(body, path, loops, groups, refs),
        Node::Cat(nodes) => {
            for n in nodes {
                walk(n, path, loops, groups, refs);
            }
        }
        Node::Alt(branches) => {
            for b in branches {
                path.push(Step::Branch);
                walk(b, path, loops, groups, refs);
                path.pop();
            }
        }
        Node::Repeat { node, min, max, .. } => {
            *loops += 1;
            path.push(Step::Repeat(
                *loops,
                max.is_none_or(|m| m > 1),
                *min == 0,
                nullable(node),
            ));
            walk(node, path, loops, groups, refs);
            path.pop();
        }
        _ => {}
    }
}

/// Refuses the backreferences `fancy-regex` would read differently from JavaScript. A group
/// that did not take part is handled by the translation (`(?(n)\n)`: empty, as in
/// JavaScript), a reference inside its own group is refused by the parser; what remains is
/// state JavaScript clears and `fancy-regex` keeps: a group in a repeated quantifier, which
/// JavaScript resets at each iteration — observable when the reference is in the same loop,
/// or when an iteration may skip the group.
fn check_backrefs(ast: &Node) -> Result<(), PatternError> {
    let (mut groups, mut refs) = (Vec::new(), Vec::new());
    walk(ast, &mut Vec::new(), &mut 0, &mut groups, &mut refs);
    for (n, ref_path) in &refs {
        let Some((_, group_path)) = groups.iter().find(|(i, _)| i == n) else {
            continue;
        };
        for (i, step) in group_path.iter().enumerate() {
            if let Step::Repeat(_, true, _, body_nullable) = *step {
                // An iteration may skip the group, or (matching empty, which JavaScript
                // rejects and `fancy-regex` keeps) set it to the empty string.
                let skippable = body_nullable
                    || group_path[i + 1..].iter().any(|s| {
                        matches!(s, Step::Branch | Step::Look | Step::Repeat(_, _, true, _))
                    });
                if skippable || ref_path.contains(step) {
                    return Err(PatternError::BackrefInRepeatedGroup(*n));
                }
            }
        }
    }
    Ok(())
}
