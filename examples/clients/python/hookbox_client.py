"""A client for `hookbox serve`, for agent runtimes written in Python (standard library only).

    from hookbox_client import HookboxClient

    hooks = HookboxClient("http://127.0.0.1:7433", token=os.environ["HOOKBOX_TOKEN"])
    verdict = hooks.dispatch("acme", "PreToolUse",
                             {"session_id": sid, "tool_name": "Bash",
                              "tool_input": {"command": "rm -rf /"}})
    if verdict.blocked:
        refuse_tool_call(verdict.reason)

`dispatch` sends one event (the payload in any dialect hookbox reads: Claude Code's flat object,
or Agentao's `{"event", "data"}` envelope) to `POST /v1/tenants/{tenant}/dispatch` and returns
the aggregated verdict (the server's lean answer; `full_report=True` asks for every hook's
report and the HookFired record too, in `Verdict.raw`). Errors the server answers (a wrong token, a malformed payload, an
overloaded server) raise `HookboxError` with the HTTP status, the error code and the field at
fault; an unreachable server raises `HookboxError` with status 0. What a failure means for the
agent (fail open or closed) is the caller's decision: hookbox cannot answer when it is down.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Optional

__all__ = ["HookboxClient", "HookboxError", "Verdict"]


class HookboxError(Exception):
    """An error answer of the server (or no answer at all: `status` 0)."""

    def __init__(self, status: int, code: str, message: str, field: Optional[str] = None):
        super().__init__(f"hookbox: {status} {code}: {message}" + (f" (field `{field}`)" if field else ""))
        self.status = status
        self.code = code
        self.message = message
        self.field = field


@dataclass
class Verdict:
    """The aggregated answer to one event.

    `outcome` is `allow` or `block` (Stop adds `continue`, `continue_at_max_iter`,
    `reentry_capped`). For PreToolUse, `decision` is `allow`, `deny`, `ask`, `defer` or None (no
    hook decided: the agent's own permission flow applies) and `updated_input` a replacement tool
    input. `additional_contexts` go to the model; for UserPromptSubmit, `rendered` is what the
    agent does with the turn (`{"proceed": ...}`, `{"blocked": ...}` or `{"stopped": ...}`).
    `raw` is the whole answer: the verdict, `system_messages` and `warnings`; with
    `full_report=True` also every hook's report (`hooks`) and the HookFired record.
    """

    event: str
    outcome: str
    decision: Optional[str] = None
    reason: Optional[str] = None
    updated_input: Any = None
    additional_contexts: list = field(default_factory=list)
    blocking_error: Optional[str] = None
    follow_up_message: Optional[str] = None
    rendered: Any = None
    raw: dict = field(default_factory=dict)

    @property
    def blocked(self) -> bool:
        """Whether the agent must not go ahead (a denied tool call, a blocked prompt)."""
        return self.outcome == "block"

    @classmethod
    def from_answer(cls, answer: dict) -> "Verdict":
        v = answer.get("verdict") or {}
        return cls(
            event=answer.get("event", ""),
            outcome=answer.get("outcome", "allow"),
            decision=v.get("decision"),
            reason=v.get("reason"),
            updated_input=v.get("updated_input"),
            additional_contexts=list(v.get("additional_contexts") or []),
            blocking_error=v.get("blocking_error"),
            follow_up_message=v.get("follow_up_message"),
            rendered=answer.get("rendered"),
            raw=answer,
        )


class HookboxClient:
    """Dispatches events to one `hookbox serve` with one tenant token."""

    def __init__(self, base_url: str, token: str, timeout: float = 30.0):
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def dispatch(
        self,
        tenant: str,
        event: str,
        payload: Optional[dict] = None,
        stop_reentries: Optional[int] = None,
        *,
        full_report: bool = False,
    ) -> Verdict:
        """Runs `event` through the tenant's hooks and returns the verdict; `full_report` asks
        for every hook's report and the HookFired record as well (`?report=full`)."""
        body: dict = {"event": event, "payload": payload or {}}
        if stop_reentries is not None:
            body["stop_reentries"] = stop_reentries
        path = f"/v1/tenants/{_segment(tenant)}/dispatch" + ("?report=full" if full_report else "")
        return Verdict.from_answer(self._post(path, body))

    def claude_code(self, tenant: str, payload: dict) -> dict:
        """What a Claude Code `"type": "http"` hook gets: Claude Code's JSON answer."""
        return self._post(f"/v1/tenants/{_segment(tenant)}/claude-code", payload)

    def _post(self, path: str, body: dict) -> dict:
        req = urllib.request.Request(
            self.base_url + path,
            data=json.dumps(body).encode("utf-8"),
            method="POST",
            headers={
                "Authorization": f"Bearer {self.token}",
                "Content-Type": "application/json",
                "Accept": "application/json",
            },
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as res:
                return json.loads(res.read().decode("utf-8"))
        except urllib.error.HTTPError as e:
            raise _error(e.code, e.read()) from None
        except (urllib.error.URLError, OSError) as e:
            raise HookboxError(0, "unreachable", str(getattr(e, "reason", e))) from None


def _segment(tenant: str) -> str:
    return urllib.parse.quote(tenant, safe="")


def _error(status: int, body: bytes) -> HookboxError:
    try:
        err = json.loads(body.decode("utf-8"))["error"]
        return HookboxError(status, err.get("code", "error"), err.get("message", ""), err.get("field"))
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return HookboxError(status, "error", body[:200].decode("utf-8", "replace"))
