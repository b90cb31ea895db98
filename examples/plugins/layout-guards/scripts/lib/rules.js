// The Bash guard's rules, loaded by bash_guard.js through __dirname.
const RULES = [
  [/\brm\s+-[a-z]*r[a-z]*f[a-z]*\s+(~|\/)(\s|\/?$)/, "deletes a home or root folder"],
  [/\bgit\s+checkout\s+--\s+\./, "throws away every uncommitted change"],
];

function refusal(command) {
  for (const [re, why] of RULES) {
    if (re.test(command)) return `refused '${command}' — ${why}`;
  }
  return null;
}

module.exports = { refusal };
