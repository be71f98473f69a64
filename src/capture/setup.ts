/**
 * The one line to set per host so it sends its requests through the capture proxy. Each is what
 * this project's recorders set to point the real host at a loopback server (scripts/record/:
 * record.mjs for Claude Code and Codex, record-pi.sh for Pi, opencode/record.mjs for OpenCode).
 * Pure.
 */

/** One host's setting: where it goes and the text to put there. */
export interface HostSetup {
  host: string;
  where: string;
  line: string;
}

/** The settings for a proxy at `url` (`http://127.0.0.1:<port>`). */
export function hostSetup(url: string): HostSetup[] {
  return [
    { host: 'Claude Code', where: 'environment', line: `ANTHROPIC_BASE_URL=${url}` },
    { host: 'Codex', where: '~/.codex/config.toml, your [model_providers.<name>] entry', line: `base_url = "${url}/v1"` },
    { host: 'Pi', where: '~/.pi/agent/models.json, your provider', line: `"baseUrl": "${url}/v1"   (anthropic-messages providers: "${url}", no /v1)` },
    { host: 'OpenCode', where: 'opencode.json, your provider', line: `"options": { "baseURL": "${url}/v1" }` },
  ];
}

/** The setup as printed by `prefix-lens capture --help` and at start: one line per host. */
export function hostSetupText(url: string): string[] {
  const rows = hostSetup(url);
  const w = Math.max(...rows.map((r) => r.host.length));
  return rows.map((r) => `  ${r.host.padEnd(w)}  ${r.line}   (${r.where})`);
}

/**
 * The variables the VS Code toggle sets for new integrated terminals: hosts that read their base
 * URL from the environment. Claude Code reads `ANTHROPIC_BASE_URL` (reference/claude-code-codex.md
 * §0); the OpenAI SDKs read `OPENAI_BASE_URL` (openai-node `ClientOptions.baseURL` default).
 */
export function baseUrlVariables(url: string): Record<string, string> {
  return { ANTHROPIC_BASE_URL: url, OPENAI_BASE_URL: `${url}/v1` };
}
