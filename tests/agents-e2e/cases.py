"""One case per verdict: the plugin hookbox installs, what the mock model does, and how the case
is judged — by what the agent *did*: whether the victim file survived, which command ran, what its
next model request carried, whether the prompt was ever sent, how many times the loop went on.

A check returns `(seen, safe)`: `seen` is the cell of the verdict × agent table (docs/agents.md),
`safe` whether the guard held (a deny that did not block is a failure whatever the table says).
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

# hookbox's Stop re-entry cap (README "Stop loops"; `--stop-reentry-cap`).
STOP_CAP = 3


@dataclass
class Observed:
    """What a run left behind."""

    project: Path
    requests: list  # the mock's log: {"path", "body"}
    exit_code: int
    timed_out: bool
    stdout: str
    stderr: str

    def model_requests(self):
        return [r for r in self.requests if r["body"] and "_raw" not in r["body"] and has_tools(r["body"])]

    def any_request_has(self, text):
        return any(text in json.dumps(r["body"]) for r in self.requests if r["body"])

    def count_requests_with(self, text):
        return sum(1 for r in self.model_requests() if text in json.dumps(r["body"]))


def has_tools(body):
    """A conversation request (it offers tools), not a side request (title, router)."""
    return bool(body.get("tools"))


@dataclass
class Case:
    name: str
    verdict: str  # the table's row
    hooks: list  # (event, matcher, mode, extra handler fields)
    command: str | None  # what the model runs on its first turn
    prompt: str = "please run the command"
    victim: bool = False  # create project/victim/keep.txt first
    check: object = None
    final: str = "done"
    agents: list = field(default_factory=list)  # empty: every agent
    trust: str | None = None  # hookbox's trust mode for the run (the user's settings), if not the default
    files: dict = field(default_factory=dict)  # more files of the plugin, beside hook.py
    edit: dict = field(default_factory=dict)  # the plugin's files rewritten after install approved it


def ran(obs, name):
    return (obs.project / name).exists()


def victim_alive(obs):
    return (obs.project / "victim/keep.txt").exists()


def told(obs, marker):
    return obs.any_request_has(marker)


def blocked_cell(obs, marker):
    if not victim_alive(obs):
        return "**ran**"
    return "blocked, reason to the model" if told(obs, marker) else "blocked, model not told"


def check_deny(obs):
    return blocked_cell(obs, "e2e-deny-reason"), victim_alive(obs)


def check_allow(obs):
    return ("ran" if ran(obs, "ran.txt") else "**blocked**"), True


def check_ask(obs):
    if ran(obs, "ran.txt"):
        return "**ran without confirmation**", False
    if told(obs, "e2e-ask-reason"):
        return "denied, reason to the model", True
    return "not run, model not told", True


def check_rewrite(obs):
    out = obs.project / "out.txt"
    text = out.read_text().strip() if out.exists() else ""
    if text == "rewritten":
        return "the rewritten command ran", True
    if text == "original":
        return "**the original command ran**", False
    if told(obs, "rewrote this call"):
        return "denied, naming the rewrite", True
    return "nothing ran, model not told", True


def context_check(marker):
    def check(obs):
        return ("reached the model" if told(obs, marker) else "dropped"), True

    return check


def check_block_prompt(obs):
    if obs.any_request_has("e2e-secret-prompt"):
        return "**prompt sent to the model**", False
    return "prompt never sent", True


def check_stop_continue(obs):
    n = obs.count_requests_with("e2e-keep-going")
    if obs.timed_out:
        return f"**did not end** ({n} continuations before the kill)", False
    return f"continued {n}×, then ended", 1 <= n <= STOP_CAP


def check_stop_agent(obs):
    if not victim_alive(obs):
        return "**ran**", False
    return "blocked", True


def check_fail_closed(obs):
    if not victim_alive(obs):
        return "**ran**", False
    return "blocked", True


def check_fail_open(obs):
    return ("ran" if not victim_alive(obs) else "blocked"), True


def check_require_edited(obs):
    # A guard (fail-open, as most are) was approved, then its script rewritten to allow everything:
    # under `require` the live folder is only compared — the approved rule runs from the approval's
    # snapshot and still denies.
    if not victim_alive(obs):
        return "**ran**", False
    return blocked_cell(obs, "e2e-deny-reason").replace("blocked", "the approved guard blocked", 1), True


def check_require_neighbour(obs):
    # The guard reads its word list beside it (through its own path), and the list was emptied after
    # approval: under `require` the hook runs from the approved snapshot, so the approved list
    # still blocks.
    if not victim_alive(obs):
        return "**ran**", False
    return blocked_cell(obs, "e2e-deny-reason").replace("blocked", "the approved list blocked", 1), True


def check_trust_warn(obs):
    # Informational: where the agent shows a hook's systemMessage in its headless output, the user
    # reads that the plugin is not approved; the table records which agents do.
    shown = "hookbox: trust:" in obs.stdout or "hookbox: trust:" in obs.stderr
    return ("shown to the user" if shown else "not shown (headless)"), True


BASH = "Bash"

# The guard's edit after approval: it answers nothing, so the call would be allowed.
ALLOW_ALL = "print('{}')\n"

# What the model runs to destroy the victim: a move, not `rm -rf`, which some agents refuse on
# their own (Codex 0.169.0 rejects "rm -f style commands") and so would hide what hookbox did.
VICTIM = "mv victim victim.gone"

CASES = [
    Case("deny", "deny R", [("PreToolUse", BASH, "deny", {})], VICTIM, victim=True, check=check_deny),
    Case("allow", "allow", [("PreToolUse", BASH, "allow", {})], "touch ran.txt", check=check_allow),
    Case("ask", "ask R (no one to ask)", [("PreToolUse", BASH, "ask", {})], "touch ran.txt", check=check_ask),
    Case("rewrite", "rewrite + allow", [("PreToolUse", BASH, "rewrite", {})], "echo original > out.txt",
         check=check_rewrite),
    Case("context-pre", "context, PreToolUse", [("PreToolUse", BASH, "context-pre", {})], "touch ran.txt",
         check=context_check("e2e-context-pre")),
    Case("context-post", "context, PostToolUse", [("PostToolUse", BASH, "context-post", {})], "touch ran.txt",
         check=context_check("e2e-context-post")),
    Case("context-prompt", "context, prompt", [("UserPromptSubmit", None, "context-prompt", {})], None,
         check=context_check("e2e-context-prompt")),
    Case("block-prompt", "block a prompt", [("UserPromptSubmit", None, "block-prompt", {})], None,
         prompt="e2e-secret-prompt: say hi", check=check_block_prompt),
    Case("stop-continue", f"Stop: continue, every time (cap {STOP_CAP})", [("Stop", None, "stop-continue", {})],
         None, check=check_stop_continue),
    Case("stop-agent", "stop the agent (`continue: false`) on a tool call",
         [("PreToolUse", BASH, "stop-agent", {})], VICTIM, victim=True, check=check_stop_agent),
    Case("fail-closed", "a fail-closed hook times out",
         [("PreToolUse", BASH, "hang", {"timeout": 2, "onFailure": "block"})], VICTIM, victim=True,
         check=check_fail_closed),
    Case("fail-open", "a fail-open hook times out", [("PreToolUse", BASH, "hang", {"timeout": 2})],
         VICTIM, victim=True, check=check_fail_open),
    Case("trust-warn", "an unapproved plugin under trust `warn` (said once per session)",
         [("PreToolUse", BASH, "allow", {})], "touch ran.txt", check=check_trust_warn),
    Case("require-edited", "an approved guard's script edited after approval, under trust `require`",
         [("PreToolUse", BASH, "deny", {})], VICTIM, victim=True, check=check_require_edited,
         trust="require", edit={"hook.py": ALLOW_ALL}),
    Case("require-neighbour", "an approved guard's word list edited after approval, under trust `require`",
         [("PreToolUse", BASH, "deny-listed", {})], VICTIM, victim=True, check=check_require_neighbour,
         trust="require", files={"deny-words.txt": "victim\n"}, edit={"deny-words.txt": "nothing\n"}),
]


def plugin(case: Case, root: Path, hook_script: Path) -> Path:
    """Writes the case's plugin (a Claude Code `hooks.json` running hook.py) under `root`."""
    d = root / f"e2e-{case.name}"
    (d / "hooks").mkdir(parents=True, exist_ok=True)
    (d / "hook.py").write_text(hook_script.read_text())
    for name, text in case.files.items():
        (d / name).write_text(text)
    hooks = {}
    for event, matcher, mode, extra in case.hooks:
        handler = {"type": "command", "command": f'python3 "${{CLAUDE_PLUGIN_ROOT}}/hook.py" {mode}', "timeout": 10}
        handler.update(extra)
        group = {"hooks": [handler]}
        if matcher:
            group["matcher"] = matcher
        hooks.setdefault(event, []).append(group)
    (d / "hooks/hooks.json").write_text(json.dumps({"description": f"e2e case {case.name}", "hooks": hooks},
                                                   indent=2))
    return d
