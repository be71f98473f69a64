/**
 * Discover step: turns a CLI/extension argument into sessions by asking each host reader.
 * Accepts a Pi, Claude Code or Codex session file (.jsonl) or folder of them, an OpenCode data dir /
 * database, or a folder of captured bodies. `<host>:<id prefix>` arguments are the registry's
 * (resolveArg): one that reaches here matched nothing, and the error names where it looked.
 */
import { readdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Session } from '../core/model.js';
import { readCaptureSessions } from './capture/index.js';
import { kindOf, missingPathText } from './files.js';
import { checkSessionNumbers } from './numbers.js';
import { readOpenCode } from './opencode/index.js';
import { readPiSession } from './pi/index.js';
import { claudeRef } from './claude-code/discover.js';
import { readClaudeSession } from './claude-code/index.js';
import { codexRef } from './codex/discover.js';
import { readCodexSession } from './codex/index.js';
import { RolloutLookup } from './codex/locate.js';
import { hostArg, noSessionText } from './registry.js';

/** Options for opening sessions. `requestsDir`: captured bodies of the same session (wire mode). */
export interface OpenOptions {
  requestsDir?: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * Opens every session an argument names.
 * @throws Error with the argument in the message when nothing there can be read
 */
export async function openSessions(arg: string, opts: OpenOptions = {}): Promise<Session[]> {
  // The numeric boundary for every host: bad times and token counts become diagnostics here.
  return (await openAny(arg, opts)).map(checkSessionNumbers);
}

async function openAny(arg: string, opts: OpenOptions): Promise<Session[]> {
  // The registry resolves `<host>:<id prefix>`; reaching here means it matched nothing. OpenCode's
  // store is still read when it is there: a damaged database says what is wrong with it.
  const named = hostArg(arg);
  if (named) {
    const env = opts.env ?? process.env;
    if (named.host.id === 'opencode') {
      const sessions = await readOpenCode(arg, opts);
      // One diagnostic or none and no request: no store there, or no such session in it (no damage to report).
      if (sessions.some((s) => s.requests.length) || sessions.flatMap((s) => s.diagnostics).length > 1) return sessions;
    }
    throw new Error((await noSessionText(arg, { env, home: homedir() }))!);
  }
  let st;
  try {
    st = await stat(arg);
  } catch (e) {
    throw new Error(missingPathText(arg, e));
  }
  if (st.isFile()) {
    if (arg.endsWith('.jsonl') && (await claudeRef(arg, true))) return readClaudeSession(arg, { requestsDir: opts.requestsDir });
    if (arg.endsWith('.jsonl') && (await codexRef(arg, true))) return readCodexSession(arg, { requestsDir: opts.requestsDir });
    if (arg.endsWith('.jsonl')) return [await readPiSession(arg, { requestsDir: opts.requestsDir })];
    if (/\.(db|sqlite)$/.test(arg)) return readOpenCode(arg, opts);
    throw new Error(`${arg}: not a session file this version reads (.jsonl: Claude Code, Codex, Pi or PI-Desktop transcripts; opencode.db; a BotHarness session.jsonl.zstd; *.body.json captures in a folder)`);
  }
  if (!st.isDirectory()) throw new Error(`${arg}: ${kindOf(st)}, not a session file or folder; not read`);
  const names = await readdir(arg);
  if (names.includes('opencode.db') || names.includes('storage')) return readOpenCode(arg, opts);
  if (names.some((n) => n.endsWith('.body.json'))) return readCaptureSessions(arg);
  const jsonl = names.filter((n) => n.endsWith('.jsonl')).sort();
  if (jsonl.length) {
    const out: Session[] = [];
    // A fork's parent: one listing of its Codex home for every rollout of the folder.
    const lookup = new RolloutLookup();
    for (const n of jsonl) {
      const f = join(arg, n);
      if (await claudeRef(f, false)) out.push(...(await readClaudeSession(f, { requestsDir: opts.requestsDir })));
      else if (await codexRef(f, false)) out.push(...(await readCodexSession(f, { requestsDir: opts.requestsDir, lookup })));
      else if (!/^agent-/.test(n)) out.push(await readPiSession(f, { requestsDir: opts.requestsDir }));
    }
    return out;
  }
  throw new Error(`${arg}: no sessions found (looked for Claude Code, Codex, Pi and PI-Desktop .jsonl transcripts, an OpenCode data dir or opencode.db, BotHarness session logs and *.body.json captures, in every folder below it)`);
}
