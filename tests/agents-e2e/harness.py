"""The real-agent suite's runner (started by `run`, inside a network namespace that has only
loopback): for every agent × case, a fresh home and project folder, the case's plugin installed
with `hookbox install --agent NAME` as the README says, the mock model started on loopback, the
agent run headless, and the case judged by what the agent did.

It refuses to run when any network interface but `lo` is up: no agent may reach anything but the
mock. The verdict × agent table it observed is compared with the one in docs/agents.md (between
the `e2e-table` markers); `--bless` writes it there instead.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from agents import AGENTS, Tools  # noqa: E402
from cases import CASES, Observed, plugin  # noqa: E402

REPO = HERE.parent.parent
DOCS = REPO / "docs/agents.md"
BEGIN = "<!-- e2e-table: begin (written by tests/agents-e2e/run --bless; do not edit by hand) -->"
END = "<!-- e2e-table: end -->"

# The longest one agent run may take: a hung agent (one waiting for a confirmation nobody gives)
# is killed and judged by what it did until then.
RUN_TIMEOUT_SECS = 90


def interface_up(name: str) -> bool:
    """Whether interface `name` of this process's network namespace is up (SIOCGIFFLAGS)."""
    import fcntl
    import socket
    import struct

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH14x", name.encode()[:15], 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s.fileno(), 0x8913, req))[1]
    return bool(flags & 0x1)


def refuse_unless_loopback_only():
    """Exits unless `lo` is the only interface that is up in this network namespace. The list
    comes from /proc/net/dev, which is per namespace (/sys/class/net shows the namespace sysfs
    was mounted in)."""
    names = [line.split(":")[0].strip() for line in Path("/proc/net/dev").read_text().splitlines()[2:]]
    up = [n for n in names if n != "lo" and interface_up(n)]
    if up:
        sys.exit(f"agents-e2e: refusing to run: interface(s) {', '.join(up)} are up; run inside "
                 "`unshare -n` with only lo (tests/agents-e2e/run does)")
    if "lo" not in names or not interface_up("lo"):
        sys.exit("agents-e2e: lo is down; bring it up first (`ip link set lo up`)")


def start_mock(work: Path, command, final):
    script = work / "script.json"
    script.write_text(json.dumps({"command": command, "final": final}))
    log = work / "requests.jsonl"
    log.touch()
    port_file = work / "port"
    proc = subprocess.Popen([sys.executable, str(HERE / "mock_model.py"), str(script), str(log), str(port_file)],
                            stdout=subprocess.DEVNULL, stderr=open(work / "mock.err", "w"))
    for _ in range(200):
        if port_file.exists():
            return proc, int(port_file.read_text()), log
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the mock model did not start")


def run_case(agent, case, tools: Tools, keep: Path | None):
    work = Path(tempfile.mkdtemp(prefix=f"e2e-{agent.name}-{case.name}-"))
    # For Claude Code the plugin lives inside the project, as a committed plugin does: install
    # names it relative to the project (no --project-dir), so every Claude case also proves that
    # `hookbox hook` finds it through CLAUDE_PROJECT_DIR. Elsewhere it stays outside: Gemini CLI,
    # Qwen Code and kimi-cli put the project's files in front of the model, and a case's context
    # marker, written in the plugin, would then reach the model whatever the hook did.
    home, project = work / "home", work / "project"
    plugins = project / ".plugins" if agent.name == "claude" else work / "plugins"
    for d in (home, project, plugins):
        d.mkdir()
    if case.victim:
        (project / "victim").mkdir()
        (project / "victim/keep.txt").write_text("keep me\n")
    plug = plugin(case, plugins, HERE / "hook.py")
    mock, port, log = start_mock(work, case.command, case.final)
    started = time.monotonic()
    try:
        agent.prepare(home, project, port, tools)
        r = agent.run(home, project, port, case.prompt, tools)
        install = [str(tools.hookbox), "install", "--agent", agent.name, "--plugin", str(plug), "--project-dir",
                   str(project), *agent.install_args]
        if case.trust:
            # The user's trust mode, and the plugin approved as it is installed (README, "Trust").
            (home / ".config/hookbox").mkdir(parents=True, exist_ok=True)
            (home / ".config/hookbox/settings.json").write_text(json.dumps({"trust": case.trust}))
            install += ["--approve", "--yes"]
        # The agent's own environment: its home, and where it keeps its configuration.
        inst = subprocess.run(install, cwd=project, env=r.env, capture_output=True, text=True, timeout=60)
        (work / "install.out").write_text(inst.stdout + inst.stderr)
        if inst.returncode != 0:
            return dict(agent=agent.name, case=case.name, seen="**install failed**", safe=False,
                        detail=inst.stdout + inst.stderr, work=str(work), secs=0)
        for name, text in case.edit.items():
            (plug / name).write_text(text)
        with open(work / "agent.out", "wb") as out, open(work / "agent.err", "wb") as err:
            agent_started = time.time()
            p = subprocess.Popen(r.argv, cwd=project, env=r.env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                 start_new_session=True)
            code, cpu, timed_out = wait_with_cpu(p, RUN_TIMEOUT_SECS)
            agent_ended = time.time()
        requests = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
        phases = f"{timeline(agent_started, agent_ended, requests)}; {cpu:.1f} s of CPU"
        obs = Observed(project, requests, code, timed_out, (work / "agent.out").read_text(errors="replace"),
                       (work / "agent.err").read_text(errors="replace"))
        seen, safe = case.check(obs)
        if timed_out and "did not end" not in seen:
            seen += f" (hung: killed after {RUN_TIMEOUT_SECS} s)"
        detail = "" if safe else f"exit {code}; see {work}"
        return dict(agent=agent.name, case=case.name, seen=seen, safe=safe, detail=detail, work=str(work),
                    secs=round(time.monotonic() - started, 1), phases=phases, cpu=cpu)
    finally:
        mock.kill()
        mock.wait()
        if keep is None and not os.environ.get("E2E_KEEP"):
            shutil.rmtree(work, ignore_errors=True)


def wait_with_cpu(p, timeout):
    """Waits for agent process `p` (killing its process group after `timeout` seconds) and returns
    (exit code, CPU seconds it and the children it waited for used, whether it was killed). The CPU
    time is what a run costs whatever else the machine is doing; wall-clock time is not."""
    deadline = time.monotonic() + timeout
    timed_out = False
    while True:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if not timed_out and time.monotonic() > deadline:
            timed_out = True
            os.killpg(p.pid, signal.SIGKILL)
        time.sleep(0.05)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, usage.ru_utime + usage.ru_stime, timed_out


def timeline(started, ended, requests):
    """Where one agent run spent its time (wall clock, from the mock's log): until its first model
    request (the agent's start-up), between its first and last (the conversation, hooks included),
    and from its last until it exited. A slow agent shows here which of the three to look at."""
    stamps = [r["t"] for r in requests if "t" in r]
    if not stamps:
        return f"no model request, exited after {ended - started:.1f} s"
    return (f"start {stamps[0] - started:.1f}, conversation {stamps[-1] - stamps[0]:.1f} ({len(stamps)} requests), "
            f"exit {ended - stamps[-1]:.1f} s")


def table(results, agents):
    cols = [AGENTS[a] for a in agents]
    head = "| verdict | " + " | ".join(f"{a.display} {a.version}" for a in cols) + " |"
    sep = "| --- |" + " --- |" * len(cols)
    rows = [head, sep]
    by = {(r["agent"], r["case"]): r["seen"] for r in results}
    for c in CASES:
        rows.append(f"| {c.verdict} | " + " | ".join(by.get((a.name, c.name), "—") for a in cols) + " |")
    return "\n".join(rows)


def docs_table():
    text = DOCS.read_text()
    if BEGIN not in text or END not in text:
        return None, text
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip(), text


def cells(documented):
    """docs/agents.md's table as {(verdict, column head): cell}."""
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in (documented or "").splitlines()]
    if len(rows) < 2:
        return {}
    head = rows[0]
    return {(r[0], head[i]): r[i] for r in rows[2:] for i in range(1, min(len(r), len(head)))}


def subset_differences(results, documented):
    """For a run of some agents or cases: each observed cell that is not what docs/agents.md says."""
    doc = cells(documented)
    verdict = {c.name: c.verdict for c in CASES}
    out = []
    for r in results:
        a = AGENTS[r["agent"]]
        key = (verdict[r["case"]], f"{a.display} {a.version}")
        if doc.get(key) != r["seen"]:
            out.append(f"  {a.display} {a.version}, {key[0]}: docs say {doc.get(key, 'nothing')!r}, "
                       f"the agent did {r['seen']!r}")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", action="append", help="only these agents (default: all)")
    ap.add_argument("--case", action="append", help="only these cases (default: all)")
    ap.add_argument("--bless", action="store_true", help="write the observed table into docs/agents.md")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeline", action="store_true",
                    help="print where each run spent its time (start-up, conversation, exit)")
    ap.add_argument("--node-bin", required=True)
    ap.add_argument("--kimi-python", required=True)
    ap.add_argument("--hookbox", required=True)
    ap.add_argument("--versions", required=True, help="JSON: agent name → version")
    args = ap.parse_args()
    refuse_unless_loopback_only()
    tools = Tools(Path(args.node_bin), Path(args.kimi_python), Path(args.hookbox))
    versions = json.loads(args.versions)
    agents = args.agent or list(AGENTS)
    for a in agents:
        AGENTS[a].version = versions.get(a, "?")
    cases = [c for c in CASES if not args.case or c.name in args.case]
    jobs = [(AGENTS[a], c) for a in agents for c in cases if not c.agents or a in c.agents]
    started = time.monotonic()
    results = []
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for r in pool.map(lambda j: run_case(j[0], j[1], tools, None), jobs):
            mark = "ok  " if r["safe"] else "FAIL"
            print(f"{mark} {r['agent']:8} {r['case']:15} {r['secs']:6.1f} s  {r['seen']}", flush=True)
            if r.get("phases") and args.timeline:
                print(f"     {r['phases']}", flush=True)
            if not r["safe"]:
                print(f"     {r['detail']}", flush=True)
            results.append(r)
    if args.timeline:
        print("\nper agent: runs, wall-clock seconds (summed over runs), CPU seconds")
        for a in agents:
            mine = [r for r in results if r["agent"] == a]
            print(f"  {a:8} {len(mine):3} {sum(r['secs'] for r in mine):7.1f} {sum(r.get('cpu', 0) for r in mine):7.1f}")
    failed = [r for r in results if not r["safe"]]
    observed = table(results, agents)
    full = not args.agent and not args.case
    documented, text = docs_table()
    differs = full and documented != observed
    if full and args.bless:
        if documented is None:
            sys.exit("agents-e2e: docs/agents.md has no e2e-table markers")
        before, rest = text.split(BEGIN, 1)
        after = rest.split(END, 1)[1]
        DOCS.write_text(f"{before}{BEGIN}\n{observed}\n{END}{after}")
        print("agents-e2e: docs/agents.md's verdict × agent table written")
        differs = False
    elif differs:
        print("\nagents-e2e: what the agents did differs from docs/agents.md's table:")
        old = (documented or "").splitlines()
        for line in observed.splitlines():
            if line not in old:
                print(f"  + {line}")
        for line in old:
            if line not in observed.splitlines():
                print(f"  - {line}")
        print("  (if the change is right, run `tests/agents-e2e/run --bless` and commit docs/agents.md)")
    else:
        print("\n" + observed)
    if not full:
        # A subset (--quick, --agent, --case): each cell it saw must still be what docs/agents.md says.
        mismatches = subset_differences(results, documented)
        if mismatches:
            print("\nagents-e2e: what the agents did differs from docs/agents.md's table:")
            print("\n".join(mismatches))
            differs = True
    secs = round(time.monotonic() - started)
    print(f"\n{len(results)} agent runs in {secs} s; the table {'differs' if differs else 'matches'}")
    print(f"agents-e2e: {len(results) - len(failed)} passed, {len(failed) + (1 if differs else 0)} failed")
    sys.exit(1 if failed or differs else 0)


if __name__ == "__main__":
    main()
