"""How each published agent is set up and run headless against the mock model (facts from
/work/shared/reference/driving-agents.md, checked against the pinned versions).

An `AgentSpec` knows the agent's `hookbox install` arguments, the files it needs in a private home
folder (model endpoint, telemetry and update checks off, the project trusted), and its headless
command line and environment. Nothing here talks to the network: the only endpoint any agent is
given is the mock's loopback address.
"""

import json
import os
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Run:
    """One headless run of an agent."""

    argv: list
    env: dict
    stdin: bytes = b""


@dataclass
class AgentSpec:
    name: str  # hookbox's --agent name
    display: str
    api: str  # the mock's API style, for the docs
    install_args: list = field(default_factory=list)  # beyond --agent/--plugin
    # The agent's version, as the lock files pin it (filled by the runner).
    version: str = ""

    def prepare(self, home: Path, project: Path, port: int, tools: "Tools") -> None:
        """Writes the agent's own settings (not its hooks: `hookbox install` does that)."""
        raise NotImplementedError

    def run(self, home: Path, project: Path, port: int, prompt: str, tools: "Tools") -> Run:
        raise NotImplementedError


@dataclass
class Tools:
    """Where the installed agents are."""

    node_bin: Path  # node_modules/.bin
    kimi_python: Path  # the venv's python, with kimi-cli
    hookbox: Path


def base_env(home: Path) -> dict:
    """A clean environment: the machine's PATH, a private HOME, no proxy, no colour."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "USER": "root",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "TMPDIR": str(home / "tmp"),
    }
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return env


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def claude_binary(tools: "Tools") -> Path:
    """Claude Code's native binary, from its platform package: with install scripts off (as the
    suite installs), `bin/claude.exe` stays the placeholder its postinstall would replace."""
    import platform

    arch = {"x86_64": "x64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    native = tools.node_bin.parent / f"@anthropic-ai/claude-code-linux-{arch}/claude"
    return native if native.exists() else tools.node_bin / "claude"


def node_liftoff_only(script: Path, *args: str) -> list:
    """`node SCRIPT ARGS` (what the agent's npm bin runs: its `#!/usr/bin/env node` line) with one
    V8 flag. Gemini CLI and Qwen Code parse each shell command with tree-sitter's Bash grammar,
    1.4 MB of WebAssembly, which V8 recompiles with TurboFan in the background once it is warm;
    node waits for that compile before it exits: 4-20 s of CPU after each run that parsed a
    command was over (measured: tests/agents-e2e/README.md). `--liftoff-only` keeps WebAssembly
    on V8's baseline compiler: the same parse, no background compile. NODE_OPTIONS cannot carry
    the flag (node refuses V8 flags there), hence the script called by path."""
    return ["node", "--liftoff-only", *map(str, (script, *args))]


def copilot_pkg(tools: "Tools") -> Path:
    """Where Copilot CLI's native binary finds its unpacked app (`COPILOT_PKG_CACHE_HOME`): beside
    the installed agents in the cache, unpacked once by `run` (the binary's own
    `COPILOT_SEA_EXTRACT_ONLY=1` mode) and only read by the runs."""
    return tools.node_bin.parent.parent / "copilot-pkg"


class Claude(AgentSpec):
    def __init__(self):
        super().__init__("claude", "Claude Code", "Anthropic Messages (SSE)")

    def prepare(self, home, project, port, tools):
        pass

    def run(self, home, project, port, prompt, tools):
        env = base_env(home)
        env.update(
            ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}",
            ANTHROPIC_API_KEY="dummy",
            # --dangerously-skip-permissions as root.
            IS_SANDBOX="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_TELEMETRY="1",
            DISABLE_AUTOUPDATER="1",
            DISABLE_ERROR_REPORTING="1",
        )
        argv = [str(claude_binary(tools)), "-p", prompt, "--output-format", "stream-json", "--verbose",
                "--dangerously-skip-permissions"]
        return Run(argv, env)


class Codex(AgentSpec):
    def __init__(self):
        # Codex skips an untrusted hook without a word: hookbox records Codex's trust in its
        # entries (their hashes in $CODEX_HOME/config.toml), as a user would with this flag.
        super().__init__("codex", "Codex", "OpenAI Responses (SSE)", install_args=["--trust-codex"])

    def prepare(self, home, project, port, tools):
        write(
            home / ".codex/config.toml",
            f"""model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:{port}/v1"
wire_api = "responses"

[projects."{project}"]
trust_level = "trusted"
""",
        )

    def run(self, home, project, port, prompt, tools):
        env = base_env(home)
        env["CODEX_HOME"] = str(home / ".codex")
        argv = [str(tools.node_bin / "codex"), "exec", "--json", "--skip-git-repo-check", "-C", str(project),
                prompt]
        return Run(argv, env)


class Gemini(AgentSpec):
    def __init__(self):
        super().__init__("gemini", "Gemini CLI", "Gemini REST (SSE)")

    def prepare(self, home, project, port, tools):
        settings = {
            # The API key alone selects an auth type that is rejected.
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        }
        write(home / ".gemini/settings.json", json.dumps(settings))
        # Project hooks run only in a trusted folder.
        write(home / ".gemini/trustedFolders.json", json.dumps({str(project): "TRUST_FOLDER"}))

    def run(self, home, project, port, prompt, tools):
        env = base_env(home)
        env.update(
            GOOGLE_GEMINI_BASE_URL=f"http://127.0.0.1:{port}",
            GEMINI_API_KEY="dummy",
            # Gemini CLI starts itself a second time with a larger heap (--max-old-space-size): a
            # second load of its bundle, ~1-4 s of CPU per run, for a heap a one-prompt run never uses.
            GEMINI_CLI_NO_RELAUNCH="true",
        )
        bundle = tools.node_bin.parent / "@google/gemini-cli/bundle/gemini.js"
        return Run(node_liftoff_only(bundle, "-p", prompt, "--yolo"), env)


class Copilot(AgentSpec):
    def __init__(self):
        super().__init__("copilot", "GitHub Copilot CLI", "OpenAI chat completions (streamed)")

    def prepare(self, home, project, port, tools):
        # Repository hooks load in -p mode only for a trusted folder.
        write(home / ".copilot/config.json", json.dumps({"trustedFolders": [str(project)]}))

    def run(self, home, project, port, prompt, tools):
        env = base_env(home)
        env.update(
            # Bring-your-own-model mode: no GitHub login.
            COPILOT_PROVIDER_BASE_URL=f"http://127.0.0.1:{port}/v1",
            COPILOT_PROVIDER_API_KEY="dummy",
            COPILOT_MODEL="mock-model",
            COPILOT_OFFLINE="true",
            COPILOT_AUTO_UPDATE="false",
            # The native binary carries its app as a tarball it unpacks (235 MB) into this folder
            # on first start, under a spawned `copilot --binary-version`: in a fresh folder that is
            # most of a run. `run` unpacks it once into the cache; every run reads it from there.
            COPILOT_PKG_CACHE_HOME=str(copilot_pkg(tools)),
        )
        return Run([str(tools.node_bin / "copilot"), "-p", prompt, "--allow-all-tools"], env)


class Qwen(AgentSpec):
    def __init__(self):
        super().__init__("qwen", "Qwen Code", "OpenAI chat completions (streamed)")

    def prepare(self, home, project, port, tools):
        settings = {
            "security": {"auth": {"selectedType": "openai"}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        }
        write(home / ".qwen/settings.json", json.dumps(settings))
        write(home / ".qwen/trustedFolders.json", json.dumps({str(project): "TRUST_FOLDER"}))

    def run(self, home, project, port, prompt, tools):
        env = base_env(home)
        env.update(
            OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1",
            OPENAI_API_KEY="dummy",
            OPENAI_MODEL="mock-model",
            QWEN_CODE_SUPPRESS_YOLO_WARNING="1",
            # Qwen Code, like Gemini CLI, starts itself again with a larger heap: a third load of
            # its bundle (after the entry's --expose-gc one), ~4 s of CPU per run.
            QWEN_CODE_NO_RELAUNCH="true",
        )
        # What the `qwen` entry (cli-entry.js) starts: `node --expose-gc cli.js ARGS` with the
        # entry's path in QWEN_CODE_CLI, here without --liftoff-only's background compile
        # (node_liftoff_only). The entry's own work (its update pointer, QWEN_HOME from a .env)
        # has nothing to do in a fresh home.
        package = tools.node_bin.parent / "@qwen-code/qwen-code"
        env["QWEN_CODE_CLI"] = str(package / "cli-entry.js")
        argv = node_liftoff_only(package / "cli.js", "-p", prompt, "--yolo")
        argv.insert(1, "--expose-gc")
        return Run(argv, env)


# kimi-cli's original CLI, with sys.exit's meaning of its result (None 0, a text printed and 1),
# ending with os._exit once the output is flushed (why: Kimi.run).
KIMI_MAIN = """
import os, sys
from kimi_cli.__main__ import run_original_cli
code = run_original_cli(sys.argv[1:])
if isinstance(code, str):
    print(code, file=sys.stderr)
    code = 1
sys.stdout.flush()
sys.stderr.flush()
os._exit(code or 0)
"""


class Kimi(AgentSpec):
    def __init__(self):
        # Kimi has only a user configuration (~/.kimi/config.toml).
        super().__init__("kimi", "kimi-cli", "OpenAI chat completions (streamed)", install_args=["--user"])

    def prepare(self, home, project, port, tools):
        write(
            home / ".kimi/config.toml",
            f"""default_model = "mock"
telemetry = false

[providers.mock]
type = "openai_legacy"
base_url = "http://127.0.0.1:{port}/v1"
api_key = "dummy"

[models.mock]
provider = "mock"
model = "mock-model"
max_context_size = 100000
""",
        )

    def run(self, home, project, port, prompt, tools):
        env = base_env(home)
        # 1.52.0's `kimi` entry point is a stub that downloads an installer and pipes it to bash:
        # start the original CLI it still ships, never the bare command.
        # Once it has returned, the run is over (its session, hooks and output are written):
        # flush and leave without the interpreter's teardown of its imported modules, which takes
        # ~2 s of CPU per run and changes nothing the case looks at.
        code = KIMI_MAIN
        argv = [str(tools.kimi_python), "-c", code, "--print", "--yolo", "-w", str(project), "-p", prompt]
        return Run(argv, env)


AGENTS = {a.name: a for a in [Claude(), Codex(), Gemini(), Copilot(), Qwen(), Kimi()]}
