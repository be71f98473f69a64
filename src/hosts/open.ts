/**
 * Discover step: turns a CLI/extension argument into sessions by asking each host reader.
 * Accepts a Pi, Claude Code or Codex session file (.jsonl) or folder of them, `pi:<id prefix>` (`pi:` alone
 * = the newest session), `claude:` / `codex:` prefixes (through the registry), an OpenCode data dir /
 * database / `opencode:<id prefix>`, or a folder of captured bodies.
 */
import { readdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Session } from '../core/model.js';
import { readCaptureSessions } from './capture/index.js';
import { kindOf, missingPathText } from './files.js';
import { checkSessionNumbers } from './numbers.js';
import { readOpenCode } from './opencode/index.js';
import { locatePiSessions, readPiSession } from './pi/index.js';
import { claudeRef } from './claude-code/discover.js';
import { readClaudeSession } from './claude-code/index.js';
import { codexRef } from './codex/discover.js';
import { readCodexSession } from './codex/index.js';
import { hostOf, resolveArg } from './registry.js';
import { dshHome, listDshLogs } from './botharness/index.js';

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
  if (arg.startsWith('opencode:')) return readOpenCode(arg, opts);
  if (/^(claude|claude-code|codex):/.test(arg)) {
    const refs = await resolveArg(arg, { env: opts.env ?? process.env, home: homedir() });
    if (!refs.length) throw new Error(`${arg}: no session with that id prefix`);
    const out: Session[] = [];
    for (const ref of refs) out.push(...(await hostOf(ref.host).open(ref, { requestsDir: opts.requestsDir })));
    return out;
  }
  if (arg.startsWith('pi:')) return openPi(arg.slice(3), opts);
  if (arg.startsWith('botharness:')) {
    // The registry resolves botharness:<id prefix>; reaching here means nothing matched.
    const home = dshHome(opts.env ?? process.env, homedir());
    const n = (await listDshLogs(home)).length;
    throw new Error(`${arg}: no BotHarness session with that id prefix in ${join(home, 'sessions')} (${n} session log(s) found; DSH_HOME sets the folder)`);
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
    for (const n of jsonl) {
      const f = join(arg, n);
      if (await claudeRef(f, false)) out.push(...(await readClaudeSession(f, { requestsDir: opts.requestsDir })));
      else if (await codexRef(f, false)) out.push(...(await readCodexSession(f, { requestsDir: opts.requestsDir })));
      else if (!/^agent-/.test(n)) out.push(await readPiSession(f, { requestsDir: opts.requestsDir }));
    }
    return out;
  }
  throw new Error(`${arg}: no sessions found (looked for Claude Code, Codex, Pi and PI-Desktop .jsonl transcripts, an OpenCode data dir or opencode.db, BotHarness session logs and *.body.json captures, in every folder below it)`);
}

/**
 * `pi:<id prefix>`: the sessions Pi's own locations hold (`$PI_CODING_AGENT_DIR` or `~/.pi/agent`,
 * `PI_CODING_AGENT_SESSION_DIR`) whose id starts with the prefix; an empty prefix = the newest one.
 * @throws Error when none matches
 */
async function openPi(prefix: string, opts: OpenOptions): Promise<Session[]> {
  const found = await locatePiSessions(opts.env ?? process.env, homedir());
  const picked = prefix ? found.filter((f) => f.id.startsWith(prefix)) : found.slice(0, 1);
  if (!picked.length) {
    throw new Error(prefix ? `pi:${prefix}: no Pi session with that id prefix (${found.length} sessions found)` : 'pi: no Pi sessions found');
  }
  return Promise.all(picked.map((f) => readPiSession(f.file, { requestsDir: opts.requestsDir })));
}
