//! A dispatch answer, in the two shapes `POST /v1/tenants/{id}/dispatch` gives: the **lean**
//! answer by default ([`lean_answer`]: the event, the outcome, the verdict and what the agent
//! shows or logs — serialised straight from the dispatch, with no JSON tree built and no
//! per-hook report), and the **full** report on `?report=full` ([`dispatch_answer`]:
//! `hookbox dispatch --json`'s object).
//!
//! The size of an answer is bounded (`limits.max_answer_bytes`): eight hooks printing a megabyte
//! each must not become a 40 MB response. In a full answer every hook's `output` is a
//! preview ([`OUTPUT_PREVIEW_CHARS`]); an answer still over the cap has every text longer than a
//! shrinking length cut (marked) and, if that is not enough, its per-hook reports dropped, and
//! says so (`"answer_truncated": true`). Decisions, outcomes and every short field are never
//! cut, so a deny stays a deny.

use hookbox_core::EventName;
use hookbox_core::aggregate::{Outcome, Verdict};
use hookbox_core::render::UserTurn;
use hookbox_host::Dispatch;
use serde::Serialize;
use serde_json::{Value, json};

/// Which answer a dispatch request asked for (`?report=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Report {
    /// The verdict and what the agent needs (the default).
    Lean,
    /// `hookbox dispatch --json`'s object: every hook's report, the HookFired record.
    Full,
}

/// The lean answer: every field a caller acts on, borrowed from the dispatch.
#[derive(Serialize)]
struct Lean<'a> {
    event: EventName,
    session_id: &'a str,
    matched_rule_count: usize,
    duration_ms: f64,
    outcome: Outcome,
    verdict: &'a Verdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    rendered: Option<UserTurn>,
    system_messages: &'a [String],
    warnings: &'a [String],
}

/// Bytes reserved for a lean answer before it is written: a typed hook's allow is ~530.
const LEAN_ANSWER_ROOM: usize = 1024;

/// The lean answer to `d` within `cap` bytes. A verdict is bounded by the host (1 MiB of text
/// per dispatch), so this is almost always one serialisation; one over the cap is cut as a full
/// answer is (long texts first, decisions never) and says so.
pub(crate) fn lean_answer(d: &Dispatch, cap: usize) -> Vec<u8> {
    let lean = Lean {
        event: d.event.name,
        session_id: &d.event.session_id,
        matched_rule_count: d.matched_rule_count,
        duration_ms: d.duration.as_secs_f64() * 1000.0,
        outcome: d.verdict.outcome(),
        verdict: &d.verdict,
        rendered: d.user_turn(),
        system_messages: d.verdict.system_messages(),
        warnings: &d.warnings,
    };
    // Room for a typical answer up front: grown from 128 bytes it was copied three times.
    let mut bytes = Vec::with_capacity(LEAN_ANSWER_ROOM);
    // The fields are plain data: serialising them cannot fail.
    if serde_json::to_writer(&mut bytes, &lean).is_err() {
        bytes.clear();
    }
    if bytes.len() <= cap {
        return bytes;
    }
    let mut v = serde_json::to_value(&lean).unwrap_or(Value::Null);
    v["answer_truncated"] = json!(true);
    fit(v, cap).0
}

/// Longest hook output (in characters) a dispatch answer carries per hook.
pub(crate) const OUTPUT_PREVIEW_CHARS: usize = 4000;

/// Texts are never cut below this many characters while fitting an answer.
const SHORTEST_CUT: usize = 256;

/// `v` as JSON bytes of at most `cap` bytes if it can be made so by cutting long texts; the
/// flag says whether anything was cut.
pub(crate) fn fit(mut v: Value, cap: usize) -> (Vec<u8>, bool) {
    let mut bytes = to_bytes(&v);
    let mut cut = false;
    let mut limit = 64 * 1024;
    while bytes.len() > cap && limit >= SHORTEST_CUT {
        cut |= cut_texts(&mut v, limit);
        bytes = to_bytes(&v);
        limit /= 4;
    }
    (bytes, cut)
}

/// A dispatch answer (`dispatch_json`'s object) within `cap` bytes: outputs previewed, then
/// long texts cut, then the per-hook reports dropped, with `"answer_truncated": true` added when
/// anything was (absent otherwise, so an answer is `hookbox dispatch --json`'s object).
pub(crate) fn dispatch_answer(mut v: Value, cap: usize) -> Vec<u8> {
    let mut truncated = false;
    for list in ["hooks", "rechecked"] {
        if let Some(Value::Array(reports)) = v.get_mut(list) {
            for r in reports {
                if let Some(Value::String(out)) = r.get_mut("output") {
                    truncated |= cut_text(out, OUTPUT_PREVIEW_CHARS);
                }
            }
        }
    }
    if truncated {
        v["answer_truncated"] = json!(true);
    }
    let bytes = to_bytes(&v);
    if bytes.len() <= cap {
        return bytes;
    }
    v["answer_truncated"] = json!(true);
    let (bytes, _) = fit(v.clone(), cap);
    if bytes.len() <= cap {
        return bytes;
    }
    // Still over: keep the verdict, drop the reports (their count stays).
    for list in ["hooks", "rechecked"] {
        if let Some(Value::Array(reports)) = v.get(list) {
            let n = reports.len();
            v[list] = json!([]);
            v[format!("{list}_dropped")] = json!(n);
        }
    }
    v["answer_truncated"] = json!(true);
    fit(v, cap).0
}

fn to_bytes(v: &Value) -> Vec<u8> {
    // A `Value` always serialises (its map keys are strings).
    serde_json::to_vec(v).unwrap_or_default()
}

/// Cuts every string of `v` longer than `limit` characters; whether any was.
fn cut_texts(v: &mut Value, limit: usize) -> bool {
    match v {
        Value::String(s) => cut_text(s, limit),
        Value::Array(a) => a.iter_mut().fold(false, |c, x| cut_texts(x, limit) | c),
        Value::Object(m) => m.values_mut().fold(false, |c, x| cut_texts(x, limit) | c),
        _ => false,
    }
}

/// Cuts `s` to `limit` characters, marked; whether it was.
fn cut_text(s: &mut String, limit: usize) -> bool {
    let Some((end, _)) = s.char_indices().nth(limit) else {
        return false;
    };
    let total = s.chars().count();
    s.truncate(end);
    s.push_str(&format!("… [cut: {total} characters in all]"));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(outputs: usize, each: usize) -> Value {
        let hooks: Vec<Value> = (0..outputs)
            .map(|i| json!({"rule_index": i, "output": "o".repeat(each), "effect": {"decision": "deny", "reason": "r".repeat(each)}}))
            .collect();
        json!({"outcome": "block", "verdict": {"decision": "deny", "reason": "x".repeat(each)}, "hooks": hooks})
    }

    #[test]
    fn eight_megabyte_outputs_become_an_answer_under_the_cap_that_still_denies() {
        let cap = 4 << 20;
        let bytes = dispatch_answer(answer(8, 1_000_000), cap);
        assert!(bytes.len() <= cap, "{}", bytes.len());
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            (&v["outcome"], &v["verdict"]["decision"]),
            (&json!("block"), &json!("deny"))
        );
        assert_eq!(v["answer_truncated"], true);
        let out = v["hooks"][0]["output"].as_str().unwrap();
        assert!(
            out.ends_with("[cut: 1000000 characters in all]"),
            "{}",
            &out[out.len() - 60..]
        );
    }

    #[test]
    fn a_small_answer_is_left_whole_and_a_tiny_cap_drops_the_reports() {
        let v = answer(2, 10);
        let whole: Value = serde_json::from_slice(&dispatch_answer(v.clone(), 1 << 20)).unwrap();
        assert!(whole.get("answer_truncated").is_none());
        assert_eq!(whole["hooks"], v["hooks"]);
        let bytes = dispatch_answer(answer(2000, 300), 64 << 10);
        assert!(bytes.len() <= 64 << 10, "{}", bytes.len());
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            (v["hooks_dropped"].as_u64(), &v["verdict"]["decision"]),
            (Some(2000), &json!("deny"))
        );
    }
}
