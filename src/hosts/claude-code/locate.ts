/**
 * Where Claude Code keeps its transcripts (reference/claude-code-codex.md §1.1):
 * `<config dir>/projects/<encoded cwd>/<sessionId>.jsonl`, the config dir being `$CLAUDE_CONFIG_DIR`
 * (a comma-separated list is accepted, as ccusage does) or else `~/.claude` and `~/.config/claude`
 * (used since v1.0.30). Sub-agents: inline `isSidechain` lines (1.0.x), flat `agent-<id>.jsonl`
 * beside the session (2.0.x), `<sessionId>/subagents/agent-<id>.jsonl` + `.meta.json` (2.1.2+).
 */
import { readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';

/** Config dirs to look in, in order (they may not exist). */
export function claudeConfigDirs(env: NodeJS.ProcessEnv, home: string): string[] {
  const fromEnv = (env.CLAUDE_CONFIG_DIR ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return fromEnv.length ? fromEnv : [join(home, '.claude'), join(home, '.config', 'claude')];
}

/** Session id form of a main transcript's file name (`<uuid>.jsonl`). */
export const SESSION_FILE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl$/i;
/** A sub-agent transcript's file name (`agent-<id>.jsonl`, also `agent-acompact-<id>.jsonl`). */
export const AGENT_FILE = /^agent-[\w-]+\.jsonl$/;

/**
 * Claude Code's folder name for a cwd: `/`, `.`, space and `~` (and any other character that is
 * not a letter, digit or `-`) become `-` (observed: `/tmp/prefix-lens-cc-lab/project` →
 * `-tmp-prefix-lens-cc-lab-project`). The mapping is not reversible; the transcript's `cwd` is used
 * when present.
 */
export function encodeCwd(cwd: string): string {
  return cwd.replace(/[^A-Za-z0-9-]/g, '-');
}

async function names(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch {
    return [];
  }
}

/** Main session files under the config dirs' `projects/` folders. */
export async function locateClaudeSessions(env: NodeJS.ProcessEnv, home: string): Promise<string[]> {
  const out: string[] = [];
  for (const dir of claudeConfigDirs(env, home)) {
    const projects = join(dir, 'projects');
    for (const p of await names(projects)) for (const f of await names(join(projects, p))) if (SESSION_FILE.test(f)) out.push(join(projects, p, f));
  }
  return out;
}

/**
 * Sub-agent files of a session: `<dir>/<id>/subagents/agent-*.jsonl` and flat `<dir>/agent-*.jsonl`
 * (the flat ones belong to this session only when their lines say so; the caller checks).
 */
export async function subagentFiles(sessionFile: string, sessionId: string): Promise<{ nested: string[]; flat: string[] }> {
  const dir = sessionFile.slice(0, sessionFile.lastIndexOf('/'));
  const sub = join(dir, sessionId, 'subagents');
  const nested = (await names(sub)).filter((f) => AGENT_FILE.test(f)).map((f) => join(sub, f));
  const flat = (await names(dir)).filter((f) => AGENT_FILE.test(f)).map((f) => join(dir, f));
  return { nested, flat };
}

/**
 * The cache stamp of a Claude Code session (SessionRef.stamp): the transcript's size (bytes) and
 * mtime (ms), then `name:size:mtime` of each of its sub-agent files (subagentFiles, nested first),
 * joined by `|`; a result is dropped when the transcript or any sub-agent file changes, is added or
 * is removed. Discovery and the CLI's warm entry (src/cli/warm.ts) both take it here, so they agree.
 * @param size, mtimeMs the transcript's, as stat gives them
 */
export async function claudeStamp(sessionFile: string, sessionId: string, size: number, mtimeMs: number): Promise<string> {
  const { nested, flat } = await subagentFiles(sessionFile, sessionId);
  const parts = [`${size}:${mtimeMs}`];
  for (const f of [...nested, ...flat]) {
    const s = await stat(f).catch(() => null);
    if (s) parts.push(`${basename(f)}:${s.size}:${s.mtimeMs}`);
  }
  return parts.join('|');
}
