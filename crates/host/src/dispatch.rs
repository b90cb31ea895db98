//! One dispatch: match the event against the rule set, run the matching hooks concurrently, and
//! aggregate their reports in rule order — so the verdict is the same whatever order the hooks
//! finished in. Every hook is accounted for: one that panics or is lost is a failure of its rule
//! (`internal_error`), one refused by a quota or the rate limit is `overloaded`, one still
//! running at the dispatch's deadline is a `timeout` — and the rule's fail mode turns each into
//! a verdict. A rewritten tool input is re-checked once through the event's rules.

use std::borrow::Cow;
use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hookbox_core::aggregate::{StopState, Verdict, aggregate, merge_recheck, warnings};
use hookbox_core::event::Event;
use hookbox_core::fired::HookFired;
use hookbox_core::output::{FailureClass, prompt_effect};
use hookbox_core::render::{UserTurn, render_user_turn};
use hookbox_core::report::HookReport;
use hookbox_core::rule::{Handler, Rule};
use tokio::task::JoinSet;
use tracing::Instrument;

use crate::hook_report::{Ran, report, settled};
use crate::inner::{Inner, Loaded};
use crate::missing_guards::missing_guards;
use crate::payloads::Payloads;
use crate::replay::{RawRecord, RecordHead};
use crate::trust_gate as gate;
use crate::{run_command, run_http, run_wasm};

/// The answer to one dispatch ([`dispatch_json`](crate::dispatch_json) is its JSON).
#[derive(Debug, Clone)]
pub struct Dispatch {
    /// The event, as the hooks saw it.
    pub event: Arc<Event>,
    /// The aggregated verdict.
    pub verdict: Verdict,
    /// The HookFired record ([`Dispatch::hook_fired`]), made at the first ask: most dispatches
    /// have no subscriber and no replay, and a caller that never asks never pays for its map.
    pub(crate) fired: OnceLock<Option<HookFired>>,
    /// Every hook run, in rule order.
    pub reports: Vec<HookReport>,
    /// The hooks run again on a rewritten tool input (`recheck_updated_input`), in rule order.
    pub rechecked: Vec<HookReport>,
    /// Every warning, in rule order.
    pub warnings: Vec<String>,
    /// Rules that matched (including duplicates run once).
    pub matched_rule_count: usize,
    /// Wall time of the whole dispatch.
    pub duration: Duration,
    /// Matched rules that are not approved as they are (trust `warn`: they ran; `require`:
    /// they did not). Empty when trust is off.
    pub trust: Vec<crate::trust::TrustFinding>,
}

impl Dispatch {
    /// The HookFired record of this dispatch; `None` when no rule matched. Made from the event,
    /// verdict and matched count at the first ask (the host asks before it returns whenever
    /// someone subscribes or replay records it), then kept.
    pub fn hook_fired(&self) -> Option<&HookFired> {
        self.fired
            .get_or_init(|| {
                HookFired::for_dispatch(&self.event, &self.verdict, self.matched_rule_count)
            })
            .as_ref()
    }

    /// For `UserPromptSubmit`: what the agent does with the turn (marker or tagged message).
    pub fn user_turn(&self) -> Option<UserTurn> {
        match &self.verdict {
            Verdict::UserPromptSubmit(r) => {
                Some(render_user_turn(r, self.event.prompt().unwrap_or("")))
            }
            _ => None,
        }
    }
}

/// Catches a panic while polling the wrapped future, so a bug in one hook's runner becomes that
/// hook's failure instead of unwinding through the whole dispatch.
struct CatchUnwind<F>(F);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, String>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = &mut self.0;
        match std::panic::catch_unwind(AssertUnwindSafe(|| Pin::new(inner).poll(cx))) {
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(panic_message(payload.as_ref()))),
        }
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

pub(crate) async fn run(inner: Arc<Inner>, event: Arc<Event>, stop: StopState) -> Dispatch {
    let inner = &inner;
    // A dispatch that matches nothing, or whose hooks finish at once, never waits: a caller
    // dispatching in a loop would keep its worker forever, and the runtime's timers (another
    // dispatch's deadline, a tenant waiting for a slot) and tasks would never run there. Each
    // dispatch takes a unit of tokio's cooperative budget, so such a loop yields every so often.
    tokio::task::consume_budget().await;
    let started = Instant::now();
    let deadline = tokio::time::Instant::now() + inner.policy.dispatch_deadline;
    let loaded = inner.loaded();
    // Debug level: a span is made (and its fields formatted by a `fmt` subscriber) per dispatch
    // and per hook whether or not anything logs inside it — measured at ~4 µs a request in
    // `hookbox serve` at its default `info` filter (docs/performance.md). `RUST_LOG=debug`
    // brings the event, session and rule context back to every line logged within.
    let span = tracing::debug_span!("dispatch", event = %event.name, session = %event.session_id, matched = tracing::field::Empty);
    let (matched, undecided): (Vec<usize>, Vec<usize>) = if inner.enabled() {
        let _enter = span.enter();
        let m = loaded.set.matching(&event);
        // Collected in place: a rule reference and its index are the same size.
        (m.rules.into_iter().map(|r| r.index).collect(), m.undecided)
    } else {
        (Vec::new(), Vec::new())
    };
    span.record("matched", matched.len());
    // Approved rules out of force whose approved event and matcher match: they answer too.
    let (missing, missing_findings) = if inner.enabled() {
        missing_guards(inner, &loaded, &event, &matched)
    } else {
        (Vec::new(), Vec::new())
    };
    if matched.is_empty() && undecided.is_empty() && missing_findings.is_empty() {
        let verdict = aggregate(&event, &[], stop);
        let duration = started.elapsed();
        inner.live.metrics.dispatch(false, duration);
        return Dispatch {
            event,
            verdict,
            fired: OnceLock::from(None),
            reports: Vec::new(),
            rechecked: Vec::new(),
            warnings: Vec::new(),
            matched_rule_count: 0,
            duration,
            trust: Vec::new(),
        };
    }
    let mut reports = run_matched(inner, &loaded, &matched, &event, deadline, true)
        .instrument(span.clone())
        .await;
    // Rules whose matcher could not decide within the dispatch's matching budget: never
    // silently "no match" — each is reported, and a fail-closed one blocks.
    if !undecided.is_empty() {
        for &pos in &undecided {
            let msg = "refused: whether this rule matches is unknown — its matcher ran out of the dispatch's matching budget (a pathological regex?)";
            reports.push(refused(inner, &loaded, pos, &event, msg));
        }
        reports.sort_by_key(|r| r.hook.rule_index);
    }
    let matched_rule_count = matched.len() + undecided.len() + missing.len();
    reports.extend(missing);
    let mut verdict = aggregate(&event, &reports, stop);
    let rechecked = recheck(inner, &loaded, &event, &mut verdict, deadline, stop)
        .instrument(span)
        .await;
    let duration = started.elapsed();
    inner.live.metrics.dispatch(true, duration);
    let mut all_warnings = warnings(&reports);
    all_warnings.extend(warnings(&rechecked));
    let mut trust = gate::trust_findings(&loaded, &matched);
    trust.extend(missing_findings);
    let dispatch = Dispatch {
        trust,
        warnings: all_warnings,
        event,
        verdict,
        fired: OnceLock::new(),
        reports,
        rechecked,
        matched_rule_count,
        duration,
    };
    // The record is made only for someone: a subscriber (one atomic load says whether there is
    // one) or replay.
    if inner.live.fired.has_subscribers()
        && let Some(f) = dispatch.hook_fired()
    {
        inner.fire(f);
    }
    record_replay(inner, &dispatch);
    dispatch
}

/// Queues the dispatch's replay record for the runtime's writer, which redacts, previews and
/// serialises it off the dispatch's path.
fn record_replay(inner: &Inner, d: &Dispatch) {
    let Some(dir) = &inner.state.replay else {
        return;
    };
    let head = RecordHead {
        session_id: &d.event.session_id,
        event: d.event.name.as_str(),
        outcome: d.verdict.outcome().as_str(),
        matched_rule_count: d.matched_rule_count,
        duration_ms: d.duration.as_secs_f64() * 1000.0,
        hook_fired: None,
    };
    // Kept in the dispatch only if someone asked for it already (a subscriber): else it is made
    // for the record and moved there, not made, copied and the dispatch's copy dropped unread.
    let fired = match d.fired.get() {
        Some(kept) => kept.clone(),
        None => HookFired::for_dispatch(&d.event, &d.verdict, d.matched_rule_count),
    };
    let reports = d.reports.iter().chain(&d.rechecked);
    let raw = RawRecord::new(&head, reports, inner.policy.capture_full_output).with_fired(fired);
    inner.runtime.inner.replay.send_raw(dir, raw);
}

/// Runs the matched rules (deduplicated, capped, rate-limited) and returns their reports in
/// rule order. `count_rate`: whether this round takes a token of the dispatch rate.
async fn run_matched(
    inner: &Arc<Inner>,
    loaded: &Arc<Loaded>,
    matched: &[usize],
    event: &Arc<Event>,
    deadline: tokio::time::Instant,
    count_rate: bool,
) -> Vec<HookReport> {
    let jobs = dedup(inner, loaded, matched, event);
    if count_rate && !inner.live.rate.try_take() {
        inner.live.metrics.refused();
        let msg = "refused: this host is over its dispatch rate (dispatch_rate); no hook ran";
        return jobs
            .iter()
            .map(|&pos| refused(inner, loaded, pos, event, msg))
            .collect();
    }
    let cap = inner.policy.max_matched_rules;
    let (run, over) = jobs.split_at(jobs.len().min(cap));
    // Room for every report up front: a report is large, and growing the vector from empty
    // for the one hook of most dispatches showed in the server's profile.
    let mut reports: Vec<HookReport> = Vec::with_capacity(jobs.len());
    for &pos in over {
        let msg = format!(
            "refused: {} rules matched this event and a dispatch runs at most {cap} (max_matched_rules)",
            jobs.len()
        );
        reports.push(refused(inner, loaded, pos, event, &msg));
    }
    let payloads = Arc::new(Payloads::new(event.clone()));
    if let [pos] = run {
        // One hook: run it here, without a task or a box, but with the same accounting.
        let fut = std::pin::pin!(run_bounded(
            inner.clone(),
            loaded.clone(),
            *pos,
            event.clone(),
            payloads,
            deadline,
        ));
        let report = match CatchUnwind(fut).await {
            Ok(r) => r,
            Err(panic) => lost(inner, loaded, *pos, event, &panic),
        };
        reports.push(report);
    } else {
        let jobs = run
            .iter()
            .map(|&pos| {
                let fut = run_bounded(
                    inner.clone(),
                    loaded.clone(),
                    pos,
                    event.clone(),
                    payloads.clone(),
                    deadline,
                )
                .in_current_span();
                (pos, fut)
            })
            .collect();
        for joined in join_jobs(jobs).await {
            reports.push(match joined {
                Ok(report) => report,
                Err((pos, why)) => lost(inner, loaded, pos, event, &why),
            });
        }
    }
    reports.sort_by_key(|r| r.hook.rule_index);
    reports
}

/// One rule, cut at the dispatch's deadline.
async fn run_bounded(
    inner: Arc<Inner>,
    loaded: Arc<Loaded>,
    pos: usize,
    event: Arc<Event>,
    payloads: Arc<Payloads>,
    deadline: tokio::time::Instant,
) -> HookReport {
    let started = Instant::now();
    // Outlives the run: a wasm run dropped at the deadline still records the fuel it used.
    let fuel = hookbox_wasm::FuelMeter::new();
    // The runner's future is awaited here, under the deadline, not inside a future of its own
    // per rule: one layer less to build, move and poll per hook (docs/performance.md).
    let runner = match start_rule(&inner, &loaded, pos, &event, &payloads, &fuel) {
        Start::Settled(report) => return report,
        Start::Run(runner) => runner,
    };
    match tokio::time::timeout_at(deadline, runner).await {
        Ok(ran) => report(&inner, &loaded, pos, &event, ran, started),
        Err(_) => {
            let msg = format!(
                "still running when the dispatch's deadline of {} s passed (dispatch_deadline); stopped",
                inner.policy.dispatch_deadline.as_secs_f64()
            );
            let ran = Ran {
                fuel: fuel.consumed(),
                ..Ran::failed(FailureClass::Timeout, msg)
            };
            report(&inner, &loaded, pos, &event, ran, started)
        }
    }
}

/// Identical command handlers of one plugin run once (Claude Code dedups identical
/// handlers; a different plugin's copy stays separate).
fn dedup<'m>(
    inner: &Inner,
    loaded: &Loaded,
    matched: &'m [usize],
    event: &Event,
) -> Cow<'m, [usize]> {
    let rules = loaded.set.rules();
    // Nothing to compare (most dispatches): the matched rules as they are, no copy.
    let commands = matched
        .iter()
        .filter(|&&pos| matches!(rules[pos].handler, Handler::Command(_)))
        .count();
    if !inner.policy.dedup_commands || commands < 2 {
        return Cow::Borrowed(matched);
    }
    let mut seen: Vec<(usize, String, &'static str)> = Vec::new();
    let mut jobs = Vec::with_capacity(matched.len());
    for &pos in matched {
        let rule = &loaded.set.rules()[pos];
        if let (true, Handler::Command(c)) = (inner.policy.dedup_commands, &rule.handler) {
            let key = (rule.plugin, c.label(), rule.dialect.as_str());
            if seen.contains(&key) {
                tracing::debug!(rule = pos, event = %event.name, "identical command handler deduplicated");
                continue;
            }
            seen.push(key);
        }
        jobs.push(pos);
    }
    Cow::Owned(jobs)
}

/// How a rule starts: answered at once (refused by trust, kept although it cannot run, a
/// prompt rule), or by its runner.
#[expect(
    clippy::large_enum_variant,
    reason = "made and matched at once in one frame; boxing the report would allocate per prompt rule"
)]
enum Start<'a> {
    Settled(HookReport),
    Run(Pin<Box<dyn Future<Output = Ran> + Send + 'a>>),
}

fn start_rule<'a>(
    inner: &'a Inner,
    loaded: &'a Loaded,
    pos: usize,
    event: &'a Arc<Event>,
    payloads: &'a Payloads,
    fuel: &'a hookbox_wasm::FuelMeter,
) -> Start<'a> {
    if let Some(refused) = gate::trust_refusal(inner, loaded, pos, event) {
        return Start::Settled(refused);
    }
    // Kept at load although it cannot run (a missing script or component): it fails, and its
    // fail mode decides — a fail-closed guard blocks rather than vanish.
    if let Some(failure) = loaded.cannot_run.get(pos) {
        let ran = Ran::failure(failure.clone());
        return Start::Settled(report(inner, loaded, pos, event, ran, Instant::now()));
    }
    let rule: &Rule = &loaded.set.rules()[pos];
    let span = tracing::debug_span!("hook", rule = pos, kind = rule.handler.handler_type().as_str(), label = %rule.handler.label());
    // Each runner's future on the heap, made where it runs: inline, the three runners' states
    // made every future above them (the rule's, the dispatch's, the caller's) as large as the
    // largest of them, and each was copied whole at every level it was moved through — the
    // `memmove` that was hookbox's largest item above the floor (docs/performance.md).
    Start::Run(match &rule.handler {
        Handler::Prompt { prompt } => {
            let effect = prompt_effect(prompt, event);
            return Start::Settled(settled(inner, loaded, rule, event, effect, Instant::now()));
        }
        Handler::Command(spec) => {
            Box::pin(run_command::run(inner, loaded, rule, spec, event, payloads).instrument(span))
        }
        Handler::Wasm(_) => Box::pin(
            run_wasm::run(inner, loaded, pos, rule, event, payloads, fuel).instrument(span),
        ),
        Handler::Http(spec) => {
            Box::pin(run_http::run(inner, rule, spec, payloads).instrument(span))
        }
    })
}

/// The report of a rule refused before it ran (`overloaded`).
fn refused(inner: &Inner, loaded: &Loaded, pos: usize, event: &Event, msg: &str) -> HookReport {
    report(
        inner,
        loaded,
        pos,
        event,
        Ran::failed(FailureClass::Overloaded, msg),
        Instant::now(),
    )
}

/// The report of a rule whose task panicked or was lost (`internal_error`).
fn lost(inner: &Inner, loaded: &Loaded, pos: usize, event: &Event, why: &str) -> HookReport {
    tracing::error!(rule = pos, error = %why, "hook task failed");
    report(
        inner,
        loaded,
        pos,
        event,
        Ran::failed(
            FailureClass::Internal,
            format!("the host lost this hook (a bug in hookbox; please report it): {why}"),
        ),
        Instant::now(),
    )
}

/// Re-checks a rewritten tool input once through the event's rules (`recheck_updated_input`):
/// a guard that denies (or asks about) the rewritten call wins by the usual precedence, so a
/// rewrite by one hook cannot slip past another hook's check. Rewrites made in this second
/// round are ignored.
async fn recheck(
    inner: &Arc<Inner>,
    loaded: &Arc<Loaded>,
    event: &Arc<Event>,
    verdict: &mut Verdict,
    deadline: tokio::time::Instant,
    stop: StopState,
) -> Vec<HookReport> {
    use hookbox_core::event::{EventData, EventName};
    use hookbox_core::output::PermissionDecision;
    if !inner.policy.recheck_updated_input || event.name != EventName::PreToolUse {
        return Vec::new();
    }
    let Verdict::PreToolUse(first) = verdict else {
        return Vec::new();
    };
    let Some(updated) = first.updated_input.clone() else {
        return Vec::new();
    };
    if first.decision == Some(PermissionDecision::Deny) || first.prevent_continuation {
        return Vec::new();
    }
    let mut rewritten = (**event).clone();
    if let EventData::PreToolUse(call) = &mut rewritten.data {
        call.tool_input = updated;
    }
    let rewritten = Arc::new(rewritten);
    let matched: Vec<usize> = loaded
        .set
        .matching(&rewritten)
        .iter()
        .map(|r| r.index)
        .collect();
    // An approved guard out of force answers on the rewritten input too, as the live rules do.
    let (missing, _) = missing_guards(inner, loaded, &rewritten, &matched);
    if matched.is_empty() && missing.is_empty() {
        return Vec::new();
    }
    let mut reports = run_matched(inner, loaded, &matched, &rewritten, deadline, false).await;
    reports.extend(missing);
    if let Verdict::PreToolUse(second) = aggregate(&rewritten, &reports, stop) {
        merge_recheck(first, second);
    }
    reports
}
/// Runs each job (a rule position and its future) as a task of its own and collects every
/// result: a task that panicked or was lost comes back as `Err((position, why))`, never as a
/// missing report.
async fn join_jobs<F>(jobs: Vec<(usize, F)>) -> Vec<Result<HookReport, (usize, String)>>
where
    F: Future<Output = HookReport> + Send + 'static,
{
    let mut set = JoinSet::new();
    let mut positions = HashMap::with_capacity(jobs.len());
    for (pos, fut) in jobs {
        positions.insert(set.spawn(fut).id(), pos);
    }
    let mut out = Vec::with_capacity(positions.len());
    while let Some(joined) = set.join_next_with_id().await {
        match joined {
            Ok((id, report)) => {
                positions.remove(&id);
                out.push(Ok(report));
            }
            Err(e) => {
                let id = e.id();
                let why = if e.is_panic() {
                    panic_message(e.into_panic().as_ref())
                } else {
                    "the hook's task was cancelled".to_owned()
                };
                if let Some(pos) = positions.remove(&id) {
                    out.push(Err((pos, why)));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use hookbox_core::event::{EventName, HandlerType};
    use hookbox_core::output::Effect;
    use hookbox_core::report::HookRef;

    fn report(rule_index: usize) -> HookReport {
        HookReport {
            hook: HookRef {
                rule_index,
                plugin: "p".into(),
                hook_name: "h".into(),
                handler_type: HandlerType::Command,
                hook_event: EventName::Notification,
            },
            effect: Effect::default(),
            duration_ms: 0.0,
            exit_code: None,
            output: None,
            fuel_consumed: None,
        }
    }

    type Job = Pin<Box<dyn Future<Output = HookReport> + Send>>;

    #[tokio::test]
    async fn a_panicking_hook_task_is_reported_not_lost() {
        let jobs: Vec<(usize, Job)> = vec![
            (0, Box::pin(async { report(0) })),
            (1, Box::pin(async { panic!("runner bug") })),
            (2, Box::pin(async { report(2) })),
        ];
        let mut got = join_jobs(jobs).await;
        got.sort_by_key(|r| match r {
            Ok(r) => r.hook.rule_index,
            Err((pos, _)) => *pos,
        });
        assert_eq!(got.len(), 3);
        assert!(
            matches!(&got[1], Err((1, why)) if why == "runner bug"),
            "{got:?}"
        );
        assert!(got[0].is_ok() && got[2].is_ok());
    }

    #[tokio::test]
    async fn a_panic_in_the_inline_path_is_caught() {
        let fut: Pin<Box<dyn Future<Output = u8> + Send>> =
            Box::pin(async { panic!("inline bug") });
        assert_eq!(CatchUnwind(fut).await, Err("inline bug".to_owned()));
        let fut: Pin<Box<dyn Future<Output = u8> + Send>> = Box::pin(async { 7 });
        assert_eq!(CatchUnwind(fut).await, Ok(7));
    }
}
