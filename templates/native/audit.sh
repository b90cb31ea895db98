#!/bin/sh
# {{name}}: an audit of tool calls (PostToolUse, every tool). Appends one line per call — the time
# and the tool's name — to audit.log in the plugin's data folder (CLAUDE_PLUGIN_DATA: kept by
# hookbox outside the project, per plugin). Says nothing to the agent.
payload=$(cat)
tool=$(printf '%s' "$payload" | sed -n 's/.*"tool_name":"\([A-Za-z0-9_.:-]*\)".*/\1/p')
printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "${tool:-unknown}" \
  >> "${CLAUDE_PLUGIN_DATA:?hookbox sets CLAUDE_PLUGIN_DATA}/audit.log"
exit 0
