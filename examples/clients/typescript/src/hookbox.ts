/**
 * A client for `hookbox serve`, for agent runtimes written in TypeScript/JavaScript. It uses
 * the platform's `fetch` (Node >= 18, Deno, Bun, browsers) and nothing else.
 *
 * ```ts
 * import { HookboxClient } from "./hookbox.js";
 *
 * const hooks = new HookboxClient("http://127.0.0.1:7433", process.env.HOOKBOX_TOKEN!);
 * const verdict = await hooks.dispatch("acme", "PreToolUse", {
 *   session_id: sid, tool_name: "Bash", tool_input: { command: "rm -rf /" },
 * });
 * if (verdict.blocked) refuseToolCall(verdict.reason);
 * ```
 *
 * `dispatch` sends one event (the payload in any dialect hookbox reads) to
 * `POST /v1/tenants/{tenant}/dispatch` and resolves to the aggregated verdict (the server's lean
 * answer; `fullReport` asks for every hook's report and the HookFired record too, in `raw`). An error answer
 * of the server rejects with a `HookboxError` carrying the status, the error code and the field
 * at fault; an unreachable server rejects with status 0. Whether the agent then fails open or
 * closed is the caller's decision.
 */

/** An error answer of the server (status 0: no answer at all). */
export class HookboxError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(`hookbox: ${status} ${code}: ${message}${field ? ` (field \`${field}\`)` : ""}`);
    this.name = "HookboxError";
  }
}

/** The aggregated answer to one event. */
export interface Verdict {
  event: string;
  /** `allow` or `block`; Stop adds `continue`, `continue_at_max_iter`, `reentry_capped`. */
  outcome: string;
  /** Whether the agent must not go ahead (a denied tool call, a blocked prompt). */
  blocked: boolean;
  /** PreToolUse: `allow`, `deny`, `ask`, `defer`, or undefined when no hook decided. */
  decision?: string;
  reason?: string;
  /** PreToolUse: a replacement for the whole tool input. */
  updatedInput?: unknown;
  additionalContexts: string[];
  blockingError?: string;
  /** Stop: the next user message when a hook keeps the turn going. */
  followUpMessage?: string;
  /** UserPromptSubmit: `{proceed}`, `{blocked}` or `{stopped}`. */
  rendered?: unknown;
  /**
   * The whole answer: the verdict, `system_messages`, `warnings`; with `fullReport` also every
   * hook's report (`hooks`) and the HookFired record (`hook_fired`).
   */
  raw: Record<string, any>;
}

export class HookboxClient {
  private readonly baseUrl: string;

  constructor(
    baseUrl: string,
    private readonly token: string,
    private readonly timeoutMs = 30_000,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
  }

  /**
   * Runs `event` through the tenant's hooks and resolves to the verdict; `fullReport` asks for
   * every hook's report and the HookFired record as well (`?report=full`).
   */
  async dispatch(
    tenant: string,
    event: string,
    payload: Record<string, unknown> = {},
    stopReentries?: number,
    fullReport = false,
  ): Promise<Verdict> {
    const body: Record<string, unknown> = { event, payload };
    if (stopReentries !== undefined) body.stop_reentries = stopReentries;
    const query = fullReport ? "?report=full" : "";
    const answer = await this.post(`/v1/tenants/${encodeURIComponent(tenant)}/dispatch${query}`, body);
    const v = answer.verdict ?? {};
    return {
      event: answer.event,
      outcome: answer.outcome,
      blocked: answer.outcome === "block",
      decision: v.decision ?? undefined,
      reason: v.reason ?? undefined,
      updatedInput: v.updated_input ?? undefined,
      additionalContexts: v.additional_contexts ?? [],
      blockingError: v.blocking_error ?? undefined,
      followUpMessage: v.follow_up_message ?? undefined,
      rendered: answer.rendered ?? undefined,
      raw: answer,
    };
  }

  /** What a Claude Code `"type": "http"` hook gets: Claude Code's JSON answer. */
  async claudeCode(tenant: string, payload: Record<string, unknown>): Promise<Record<string, any>> {
    return this.post(`/v1/tenants/${encodeURIComponent(tenant)}/claude-code`, payload);
  }

  private async post(path: string, body: unknown): Promise<Record<string, any>> {
    let res: Response;
    try {
      res = await fetch(this.baseUrl + path, {
        method: "POST",
        headers: {
          authorization: `Bearer ${this.token}`,
          "content-type": "application/json",
          accept: "application/json",
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      const cause = (e as { cause?: { message?: string } }).cause?.message;
      throw new HookboxError(0, "unreachable", cause ?? String(e));
    }
    const text = await res.text();
    if (!res.ok) {
      try {
        const err = JSON.parse(text).error;
        throw new HookboxError(res.status, err.code, err.message, err.field ?? undefined);
      } catch (e) {
        if (e instanceof HookboxError) throw e;
        throw new HookboxError(res.status, "error", text.slice(0, 200));
      }
    }
    return JSON.parse(text);
  }
}
