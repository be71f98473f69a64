/**
 * Discover step: turns a CLI/extension argument into sessions by asking each host reader.
 * Accepts a Pi session file (.jsonl), an OpenCode data dir / database / `opencode:<id>`, or a
 * folder of captured request bodies.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Session } from '../core/model.js';
import { readCaptureSession } from './capture/index.js';
import { readOpenCode } from './opencode/index.js';
import { readPiSession } from './pi/index.js';

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
  if (arg.startsWith('opencode:')) return readOpenCode(arg, { env: opts.env, requestsDir: opts.requestsDir });
  let st;
  try {
    st = await stat(arg);
  } catch {
    throw new Error(`${arg}: no such file or directory`);
  }
  if (st.isFile()) {
    if (arg.endsWith('.jsonl')) return [await readPiSession(arg, { requestsDir: opts.requestsDir })];
    if (/\.(db|sqlite)$/.test(arg)) return readOpenCode(arg, { env: opts.env, requestsDir: opts.requestsDir });
    throw new Error(`${arg}: not a session file this version reads (.jsonl for Pi, .db for OpenCode)`);
  }
  const names = await readdir(arg);
  if (names.includes('opencode.db') || names.includes('storage')) return readOpenCode(arg, { env: opts.env, requestsDir: opts.requestsDir });
  if (names.some((n) => n.endsWith('.body.json'))) return [await readCaptureSession(arg)];
  const jsonl = names.filter((n) => n.endsWith('.jsonl')).sort();
  if (jsonl.length) return Promise.all(jsonl.map((n) => readPiSession(join(arg, n), { requestsDir: opts.requestsDir })));
  throw new Error(`${arg}: no sessions found (expected Pi .jsonl files, an OpenCode data dir, or *.body.json captures)`);
}
