/**
 * `prefix-lens diff <path> <N> [<M>] [--requests DIR | --captures DIR] [--context N]` — request N
 * of a session beside request M (default: the request the analysis compared N with, else N − 1)
 * as a unified diff of their prefixes (src/report/requestText.ts: one section per block under a
 * header line, canonical bytes split after `\n` escapes), after one line naming the break's place.
 * The path is anything `analyze` takes that holds one session (or name it: `pi:<id prefix>`, …).
 *
 * Exit code: 0 printed (also when M's prefix is a prefix of N's: "no break", the added blocks
 * shown); 1 when the session has no request N or M; 2 usage error or unreadable input.
 */
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createTwoFilesPatch } from 'diff';
import { analyzeSession } from '../core/analyze.js';
import { familyFor } from '../core/rules.js';
import type { Session } from '../core/model.js';
import { openSessions } from '../hosts/open.js';
import { openRef, resolveArg } from '../hosts/registry.js';
import { compareRequests } from '../report/requestText.js';
import { safe } from '../sanitize.js';

export const DIFF_USAGE = 'usage: prefix-lens diff <path> <N> [<M>] [--requests DIR | --captures DIR] [--context LINES]';

/** The sessions at `path` (with wire bodies from `requestsDir` when given), as `analyze` finds them. */
async function sessionsAt(path: string, requestsDir: string | undefined): Promise<Session[]> {
  const refs = await resolveArg(path, { env: process.env, home: homedir() });
  if (!refs.length) return openSessions(path, { requestsDir, env: process.env });
  const out: Session[] = [];
  for (const ref of refs) out.push(...(await openRef(ref, { requestsDir, env: process.env })));
  return out;
}

/**
 * Runs `diff`. `argv`: the arguments after `diff`. Writes the diff with `out` (one call per line,
 * each passed through the CLI's terminal sanitizer by the caller) and errors with `err`.
 */
export async function diffCommand(argv: string[], out: (s: string) => void, err: (s: string) => void): Promise<number> {
  let args;
  try {
    args = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { requests: { type: 'string' }, captures: { type: 'string', multiple: true }, context: { type: 'string' }, help: { type: 'boolean' } },
    });
  } catch (e) {
    err(`prefix-lens diff: ${safe((e as Error).message)}\n${DIFF_USAGE}`);
    return 2;
  }
  if (args.values.help) {
    out(DIFF_USAGE);
    return 0;
  }
  const [path, n, m, ...extra] = args.positionals;
  const index = Number(n);
  const base = m === undefined ? undefined : Number(m);
  const context = args.values.context === undefined ? 3 : Number(args.values.context);
  const whole = (x: number | undefined) => x === undefined || (Number.isInteger(x) && x >= 1);
  if (!path || !n || extra.length || !whole(index) || !whole(base) || !Number.isInteger(context) || context < 0 || (args.values.requests && args.values.captures)) {
    err(`prefix-lens diff: ${!path || !n ? 'a session and a request number are needed' : extra.length ? `unexpected argument "${safe(extra[0])}"` : args.values.requests && args.values.captures ? '--captures and --requests exclude each other' : 'request numbers and --context are whole numbers (requests from 1)'}\n${DIFF_USAGE}`);
    return 2;
  }
  const saved = process.env.PREFIX_LENS_CAPTURE_DIRS;
  if (args.values.captures) process.env.PREFIX_LENS_CAPTURE_DIRS = args.values.captures.map((d) => resolve(d)).join(':');
  let sessions: Session[];
  try {
    sessions = await sessionsAt(path, args.values.requests);
  } catch (e) {
    err(`prefix-lens diff: ${safe((e as Error).message)}`);
    return 2;
  } finally {
    if (saved === undefined) delete process.env.PREFIX_LENS_CAPTURE_DIRS;
    else process.env.PREFIX_LENS_CAPTURE_DIRS = saved;
  }
  if (sessions.length !== 1) {
    err(`prefix-lens diff: ${sessions.length ? `${sessions.length} sessions at ${safe(path)}; name one (its file, or <host>:<id prefix>): ${sessions.slice(0, 5).map((s) => safe(`${s.host}:${s.id}`)).join(', ')}${sessions.length > 5 ? ', …' : ''}` : `no session at ${safe(path)}`}`);
    return 2;
  }
  const s = sessions[0];
  const req = s.requests.find((r) => r.index === index);
  // The request the judge compared N with, unless one is named.
  const other = base ?? (req ? (analyzeSession(s).requests.find((a) => a.request.index === index)?.matched ?? (index > 1 ? index - 1 : undefined)) : undefined);
  const prev = other === undefined ? undefined : s.requests.find((r) => r.index === other);
  if (!req || !prev) {
    err(`prefix-lens diff: ${safe(s.title ?? s.id)} has ${s.requests.length} request(s); ${!req ? `no request #${index}` : other === undefined ? `request #${index} has no earlier request to compare with` : `no request #${other}`}`);
    return 1;
  }
  const name = s.title ?? s.id;
  const c = compareRequests(prev, req, { base: `${name} · request #${prev.index}`, request: `${name} · request #${index}` }, familyFor(req.model, req.api).renderOrder);
  out(`${name}: #${prev.index} ↔ #${index} (${c.break ? `break: ${c.break.segment} · ${c.break.path} @${c.break.byteOffset}` : `no break: #${index} extends #${prev.index}`})`);
  const patch = createTwoFilesPatch(`request #${prev.index}`, `request #${index}`, c.base.text, c.request.text, undefined, undefined, { context });
  // The patch's first line is "Index:"-less "===…" in jsdiff; drop the separator, keep ---/+++ and hunks.
  for (const line of patch.split('\n')) if (!/^={10,}$/.test(line) && line !== '') out(line);
  return 0;
}
