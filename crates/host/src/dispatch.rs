//! One dispatch: match the event against the rule set, run the matching hooks concurrently
//! (bounded by the host's semaphore), and aggregate their reports in rule order — so the verdict
//! is the same whatever order the hooks finished in.

use std::sync::Arc;
use std::time::{Duration, Instant};

use hookbox_core::aggregate::{StopState, Verdict, aggregate, warnings};
use hookbox_core::event::Event;
use hookbox_core::fired::HookFired;
use hookbox_core::output::{RunOutput, effect_of, prompt_effect};
use hookbox_core::render::{UserTurn, render_user_turn};
use hookbox_core::report::{HookRef, HookReport};
use hookbox_core::rule::{Handler, Rule};
use serde::Serialize;
use tokio::task::JoinSet;
use tracing::Instrument;

use crate::host::{Inner, Loaded};
use crate::payloads::Payloads;

/// The answer to one dispatch.
#[derive(Debug, Clone, Serialize)]
pub struct Dispatch {
    /// The event, as the hooks saw it.
    #[serde(skip)]
    pub event: Arc<Event>,
    /// The aggregated verdict.
    pub verdict: Verdict,
    /// The HookFired record; `None` when no rule matched.
    pub hook_fired: Option<HookFired>,
    /// Every hook run, in rule order.
    pub reports: Vec<HookReport>,
    /// Every warning, in rule order.
    pub warnings: Vec<String>,
    /// Rules that matched (including duplicates run once).
    pub matched_rule_count: usize,
    /// Wall time of the whole dispatch.
    #[serde(serialize_with = "ser_ms")]
    pub duration: Duration,
}

fn ser_ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1000.0)
}

impl Dispatch {
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

/// A rule to run, with the rules whose identical handler it stands for.
struct Job {
    pos: usize,
}

impl Inner {
    pub(crate) async fn dispatch(self: &Arc<Self>, event: Event, stop: StopState) -> Dispatch {
        let started = Instant::now();
        let loaded = self.loaded();
        let event = Arc::new(event);
        let span = tracing::info_span!("dispatch", event = %event.name, session = %event.session_id, matched = tracing::field::Empty);
        let _enter = span.enter();
        let matched: Vec<usize> = loaded
            .set
            .matching(&event)
            .iter()
            .map(|r| r.index)
            .collect();
        span.record("matched", matched.len());
        if matched.is_empty() {
            let verdict = aggregate(&event, &[], stop);
            let duration = started.elapsed();
            self.metrics.dispatch(false, duration);
            return Dispatch {
                event,
                verdict,
                hook_fired: None,
                reports: Vec::new(),
                warnings: Vec::new(),
                matched_rule_count: 0,
                duration,
            };
        }
        let jobs = self.dedup(&loaded, &matched, &event);
        drop(_enter);
        let payloads = Arc::new(Payloads::new(event.clone()));
        let mut reports = if jobs.len() == 1 {
            vec![
                self.run_rule(&loaded, jobs[0].pos, &event, &payloads)
                    .instrument(span.clone())
                    .await,
            ]
        } else {
            let mut set = JoinSet::new();
            for job in &jobs {
                let (inner, loaded, event, payloads, pos) = (
                    self.clone(),
                    loaded.clone(),
                    event.clone(),
                    payloads.clone(),
                    job.pos,
                );
                set.spawn(
                    async move { inner.run_rule(&loaded, pos, &event, &payloads).await }
                        .instrument(span.clone()),
                );
            }
            let mut out = Vec::with_capacity(jobs.len());
            while let Some(joined) = set.join_next().await {
                match joined {
                    Ok(report) => out.push(report),
                    // A panicking runner is a bug; the dispatch still answers without that hook.
                    Err(e) => tracing::error!(error = %e, "hook task failed"),
                }
            }
            out
        };
        reports.sort_by_key(|r| r.hook.rule_index);
        let verdict = aggregate(&event, &reports, stop);
        let hook_fired = HookFired::for_dispatch(&event, &verdict, matched.len());
        let duration = started.elapsed();
        self.metrics.dispatch(true, duration);
        if let Some(f) = hook_fired
            .as_ref()
            .filter(|_| self.fired.receiver_count() > 0)
        {
            // A subscriber may have left since the check: `send` then fails, which is fine.
            let _ = self.fired.send(f.clone());
        }
        let dispatch = Dispatch {
            warnings: warnings(&reports),
            event,
            verdict,
            hook_fired,
            reports,
            matched_rule_count: matched.len(),
            duration,
        };
        self.record_replay(&dispatch);
        dispatch
    }

    /// Identical command handlers of one plugin run once (Claude Code dedups identical
    /// handlers; a different plugin's copy stays separate).
    fn dedup(&self, loaded: &Loaded, matched: &[usize], event: &Event) -> Vec<Job> {
        let mut seen: Vec<(usize, String, &'static str)> = Vec::new();
        let mut jobs = Vec::with_capacity(matched.len());
        for &pos in matched {
            let rule = &loaded.set.rules()[pos];
            if let (true, Handler::Command(c)) = (self.policy.dedup_commands, &rule.handler) {
                let key = (rule.plugin, c.label(), rule.dialect.as_str());
                if seen.contains(&key) {
                    tracing::debug!(rule = pos, event = %event.name, "identical command handler deduplicated");
                    continue;
                }
                seen.push(key);
            }
            jobs.push(Job { pos });
        }
        jobs
    }

    async fn run_rule(
        &self,
        loaded: &Loaded,
        pos: usize,
        event: &Arc<Event>,
        payloads: &Payloads,
    ) -> HookReport {
        let rule: &Rule = &loaded.set.rules()[pos];
        let started = Instant::now();
        let span = tracing::info_span!("hook", rule = pos, kind = rule.handler.handler_type().as_str(), label = %rule.handler.label());
        let (effect, exit_code, output) = async {
            match &rule.handler {
                Handler::Prompt { prompt } => (prompt_effect(prompt, event), None, None),
                Handler::Http(_) => {
                    let out = RunOutput::Failed(hookbox_core::output::HookFailure::new(
                        hookbox_core::output::FailureClass::HttpError,
                        "http hooks are not run by this host",
                    ));
                    (
                        effect_of(rule, event, &out, self.policy.fail_mode),
                        None,
                        None,
                    )
                }
                Handler::Command(_) | Handler::Wasm(_) => {
                    let (out, text) = match &rule.handler {
                        Handler::Command(spec) => {
                            self.run_command(loaded, rule, spec, event, payloads).await
                        }
                        _ => self.run_wasm(loaded, pos, rule, event, payloads).await,
                    };
                    let exit = match &out {
                        RunOutput::Command(raw) => raw.exit_code,
                        _ => None,
                    };
                    (
                        effect_of(rule, event, &out, self.policy.fail_mode),
                        exit,
                        text,
                    )
                }
            }
        }
        .instrument(span)
        .await;
        let plugin = loaded
            .set
            .plugins()
            .get(rule.plugin)
            .map(|p| p.name.clone())
            .unwrap_or_else(|| rule.source.plugin.clone());
        self.metrics.hook(
            rule.handler.handler_type(),
            effect.failure.as_ref().map(|f| f.class),
            !effect.warnings.is_empty(),
        );
        HookReport {
            hook: HookRef {
                rule_index: rule.index,
                plugin,
                hook_name: rule.handler.label(),
                handler_type: rule.handler.handler_type(),
                hook_event: event.name,
            },
            effect,
            duration_ms: started.elapsed().as_secs_f64() * 1000.0,
            exit_code,
            output,
        }
    }
}

/// stdout, then stderr under a separator, for reports and replay.
pub(crate) fn combined_output(stdout: &str, stderr: &str) -> Option<String> {
    match (stdout.is_empty(), stderr.is_empty()) {
        (true, true) => None,
        (false, true) => Some(stdout.to_owned()),
        (true, false) => Some(format!("[stderr]\n{stderr}")),
        (false, false) => Some(format!("{stdout}\n[stderr]\n{stderr}")),
    }
}
