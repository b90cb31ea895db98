"""A scripted model on loopback, speaking the four API styles the agents use.

- Anthropic Messages (Claude Code): POST /v1/messages, SSE; /v1/messages/count_tokens.
- OpenAI Responses (Codex): POST /v1/responses, SSE.
- OpenAI chat completions (Copilot CLI, Qwen Code, kimi-cli): POST /v1/chat/completions, streamed
  or not.
- Gemini REST (Gemini CLI): POST /v1beta/models/M:streamGenerateContent?alt=sse,
  :generateContent, :countTokens.

The script of one run (a JSON file): `command`, the shell command the model asks to run on its
first turn of a conversation (none: it answers in text at once), and `final`, its text once a tool
result is in the conversation. A request offering no shell tool (a title, a summary, a quota
check) gets a short text answer. Every request is logged, one JSON object a line (path and body),
so a case can read what the agent sent after a hook answered.

Standard library only: it runs inside the test's network namespace with the agents.
"""

import json
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# The shell tool each agent offers, by name, and the argument that carries the command line.
SHELL_TOOLS = {
    "Bash": "command",  # Claude Code
    "exec_command": "cmd",  # Codex
    "shell": "command",  # Codex (older): a list of words
    "run_shell_command": "command",  # Gemini CLI, Qwen Code
    "bash": "command",  # Copilot CLI
    "Shell": "command",  # kimi-cli
}


def default_for(schema):
    """A harmless value for a required argument the script does not set."""
    if not isinstance(schema, dict):
        return "x"
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "string")
    return {
        "string": "hookbox e2e",
        "boolean": False,
        "integer": 30,
        "number": 30,
        "array": [],
        "object": {},
    }.get(t, "x")


def sample(schema, depth=0):
    """A value that satisfies `schema` (JSON Schema, or Gemini's with upper-case types): the
    answer to a side request that asks for structured output (Gemini CLI's model router)."""
    if not isinstance(schema, dict) or depth > 8:
        return "x"
    if schema.get("enum"):
        return schema["enum"][0]
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "string")
    t = (t or "object").lower()
    if t == "object":
        props = schema.get("properties") or {}
        return {k: sample(v, depth + 1) for k, v in props.items()}
    if t == "array":
        return [sample(schema.get("items") or {}, depth + 1)]
    return {"string": "simple", "integer": 10, "number": 10, "boolean": False}.get(t, "x")


def shell_args(name, schema, command):
    """The arguments of a call to the shell tool `name` running `command`."""
    key = SHELL_TOOLS[name]
    args = {key: ["bash", "-lc", command] if name == "shell" else command}
    props = (schema or {}).get("properties", {}) or {}
    for req in (schema or {}).get("required", []) or []:
        if req not in args:
            args[req] = default_for(props.get(req))
    if name == "exec_command" and "yield_time_ms" in props:
        args.setdefault("yield_time_ms", 10000)
    return args


class Script:
    def __init__(self, path, log):
        with open(path) as f:
            self.cfg = json.load(f)
        self.log_path = log
        self.lock = threading.Lock()
        self.requests = 0

    def record(self, path, body):
        with self.lock:
            self.requests += 1
            with open(self.log_path, "a") as f:
                f.write(json.dumps({"path": path, "body": body, "t": time.time()}) + "\n")

    def turn(self, tools, tool_results):
        """('call', name, args) or ('text', text) for a conversation offering `tools`
        ({name: schema}) with `tool_results` tool results so far."""
        shell = next((n for n in tools if n in SHELL_TOOLS), None)
        if shell is None:
            return ("text", "ok")
        command = self.cfg.get("command")
        if command and tool_results == 0:
            return ("call", shell, shell_args(shell, tools[shell], command))
        return ("text", self.cfg.get("final", "done"))


def text_of(v):
    """Every string inside a JSON value, joined: what a check searches."""
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        return "\n".join(text_of(x) for x in v.values())
    if isinstance(v, list):
        return "\n".join(text_of(x) for x in v)
    return ""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    script: Script = None  # set by main

    def log_message(self, fmt, *args):
        pass

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            raw = self.rfile.read(n)
        elif "chunked" in (self.headers.get("Transfer-Encoding") or ""):
            raw = b""
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    break
                raw += self.rfile.read(size)
                self.rfile.readline()
        else:
            raw = b""
        enc = self.headers.get("Content-Encoding")
        if enc == "gzip":
            import gzip

            raw = gzip.decompress(raw)
        elif enc == "zstd":
            sys.stderr.write("mock: zstd request body not supported\n")
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {"_raw": raw.decode("utf-8", "replace")}

    def send_json(self, obj, status=200):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def start_sse(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def sse(self, data, event=None):
        out = ""
        if event:
            out += f"event: {event}\n"
        out += f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n"
        self.wfile.write(out.encode())
        self.wfile.flush()

    def do_GET(self):
        path = self.path.split("?")[0]
        self.script.record(self.path, None)
        if path.endswith("/models"):
            self.send_json(
                {
                    "object": "list",
                    "data": [{"id": "mock-model", "object": "model", "owned_by": "hookbox"}],
                    "models": [],
                }
            )
            return
        self.send_json({})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        body = self.body()
        self.script.record(self.path, body)
        path = self.path.split("?")[0]
        if path.endswith("/messages/count_tokens"):
            self.send_json({"input_tokens": 10})
        elif path.endswith("/messages"):
            self.anthropic(body)
        elif path.endswith("/responses"):
            self.openai_responses(body)
        elif path.endswith("/chat/completions"):
            self.chat(body)
        elif ":countTokens" in path:
            self.send_json({"totalTokens": 10})
        elif ":streamGenerateContent" in path or ":generateContent" in path:
            self.gemini(body, stream=":streamGenerateContent" in path)
        else:
            self.send_json({"error": {"message": f"mock: no route {path}"}}, 404)

    # --- Anthropic Messages --------------------------------------------------------------
    def anthropic(self, body):
        tools = {t.get("name"): t.get("input_schema") for t in body.get("tools") or []}
        results = sum(
            1
            for m in body.get("messages", [])
            if isinstance(m.get("content"), list)
            for c in m["content"]
            if isinstance(c, dict) and c.get("type") == "tool_result"
        )
        step = self.script.turn(tools, results)
        mid = "msg_" + uuid.uuid4().hex[:20]
        model = body.get("model", "mock")
        usage = {"input_tokens": 10, "output_tokens": 5}
        if not body.get("stream"):
            if step[0] == "call":
                content = [
                    {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:20], "name": step[1], "input": step[2]}
                ]
                stop = "tool_use"
            else:
                content = [{"type": "text", "text": step[1]}]
                stop = "end_turn"
            self.send_json(
                {"id": mid, "type": "message", "role": "assistant", "model": model, "content": content,
                 "stop_reason": stop, "stop_sequence": None, "usage": usage}
            )
            return
        self.start_sse()
        self.sse(
            {"type": "message_start", "message": {"id": mid, "type": "message", "role": "assistant", "model": model,
                                                  "content": [], "stop_reason": None, "stop_sequence": None,
                                                  "usage": {"input_tokens": 10, "output_tokens": 1}}},
            "message_start",
        )
        if step[0] == "call":
            self.sse({"type": "content_block_start", "index": 0,
                      "content_block": {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:20], "name": step[1],
                                        "input": {}}}, "content_block_start")
            self.sse({"type": "content_block_delta", "index": 0,
                      "delta": {"type": "input_json_delta", "partial_json": json.dumps(step[2])}},
                     "content_block_delta")
            stop = "tool_use"
        else:
            self.sse({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                     "content_block_start")
            self.sse({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": step[1]}},
                     "content_block_delta")
            stop = "end_turn"
        self.sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
        self.sse({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                  "usage": {"output_tokens": 5}}, "message_delta")
        self.sse({"type": "message_stop"}, "message_stop")

    # --- OpenAI Responses --------------------------------------------------------------
    def openai_responses(self, body):
        tools = {}
        for t in body.get("tools") or []:
            if t.get("type") == "function":
                tools[t.get("name")] = t.get("parameters")
        results = sum(
            1 for item in body.get("input") or [] if isinstance(item, dict) and item.get("type") in (
                "function_call_output", "custom_tool_call_output", "local_shell_call_output")
        )
        step = self.script.turn(tools, results)
        rid = "resp_" + uuid.uuid4().hex[:20]
        self.start_sse()
        self.sse({"type": "response.created", "response": {"id": rid}}, "response.created")
        if step[0] == "call":
            item = {"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:16], "call_id": "call_" + uuid.uuid4().hex[:16],
                    "name": step[1], "arguments": json.dumps(step[2]), "status": "completed"}
        else:
            item = {"type": "message", "id": "msg_" + uuid.uuid4().hex[:16], "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": step[1], "annotations": []}]}
            self.sse({"type": "response.output_item.added", "output_index": 0,
                      "item": dict(item, content=[], status="in_progress")}, "response.output_item.added")
            self.sse({"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0,
                      "content_index": 0, "delta": step[1]}, "response.output_text.delta")
        self.sse({"type": "response.output_item.done", "output_index": 0, "item": item}, "response.output_item.done")
        self.sse({"type": "response.completed",
                  "response": {"id": rid, "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                                                    "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                                                    "total_tokens": 15}}},
                 "response.completed")

    # --- OpenAI chat completions -------------------------------------------------------------
    def chat(self, body):
        tools = {}
        for t in body.get("tools") or []:
            f = t.get("function") or {}
            tools[f.get("name")] = f.get("parameters")
        results = sum(1 for m in body.get("messages") or [] if m.get("role") == "tool")
        step = self.script.turn(tools, results)
        cid = "chatcmpl-" + uuid.uuid4().hex[:20]
        created = int(time.time())
        model = body.get("model", "mock-model")
        if step[0] == "call":
            call = {"index": 0, "id": "call_" + uuid.uuid4().hex[:16], "type": "function",
                    "function": {"name": step[1], "arguments": json.dumps(step[2])}}
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
        else:
            message = {"role": "assistant", "content": step[1]}
            finish = "stop"
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if not body.get("stream"):
            msg = dict(message)
            if "tool_calls" in msg:
                msg["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in msg["tool_calls"]]
            self.send_json({"id": cid, "object": "chat.completion", "created": created, "model": model,
                            "choices": [{"index": 0, "message": msg, "finish_reason": finish}], "usage": usage})
            return
        self.start_sse()
        base = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model}
        self.sse(dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]))
        delta = {"tool_calls": message["tool_calls"]} if step[0] == "call" else {"content": step[1]}
        self.sse(dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}]))
        self.sse(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}], usage=usage))
        self.sse("[DONE]")

    # --- Gemini ------------------------------------------------------------------------------
    def gemini(self, body, stream):
        tools = {}
        for t in body.get("tools") or []:
            for f in t.get("functionDeclarations") or t.get("function_declarations") or []:
                tools[f.get("name")] = f.get("parameters") or f.get("parametersJsonSchema")
        results = sum(
            1 for c in body.get("contents") or [] for p in c.get("parts") or []
            if isinstance(p, dict) and ("functionResponse" in p or "function_response" in p)
        )
        step = self.script.turn(tools, results)
        gen = body.get("generationConfig") or {}
        schema = gen.get("responseJsonSchema") or gen.get("responseSchema")
        if not tools and schema:
            step = ("text", json.dumps(sample(schema)))
        if step[0] == "call":
            part = {"functionCall": {"name": step[1], "args": step[2]}}
        else:
            part = {"text": step[1]}
        chunk = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                 "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
                 "modelVersion": "mock"}
        if not stream:
            self.send_json(chunk)
            return
        self.start_sse()
        self.sse(chunk)


def main():
    script_path, log_path, port_file = sys.argv[1:4]
    Handler.script = Script(script_path, log_path)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os

    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
