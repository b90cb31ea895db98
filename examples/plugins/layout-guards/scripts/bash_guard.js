// A PreToolUse guard for Bash, as node plugins are written: its rules live in a module beside
// it, found through __dirname. If the module cannot be loaded the hook exits 1 (a non-blocking
// error) — which is how a guard fails open when a host runs it from somewhere else.
const path = require("path");
const { refusal } = require(path.join(__dirname, "lib", "rules.js"));

let input = "";
process.stdin.on("data", (c) => (input += c));
process.stdin.on("end", () => {
  const command = (JSON.parse(input).tool_input || {}).command || "";
  const why = refusal(command);
  if (why) {
    process.stdout.write(
      JSON.stringify({
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: `layout-guards: ${why}`,
        },
      }),
    );
  }
});
