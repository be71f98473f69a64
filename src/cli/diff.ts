/**
 * `prefix-lens diff <path> <N> [<M>] [--session ID] [--requests DIR | --captures DIR] [--context N]`
 * — request N of a session beside request M (default: the request the analysis compared N with,
 * else N − 1) as a unified diff of their prefixes (src/report/requestText.ts: one section per
 * block under a header line, canonical bytes split after `\n` escapes), after one line with the
 * judge's verdict (when M is the request it compared N with) and where the prefixes first differ.
 * The path is anything `analyze` takes; when it holds several sessions (a folder, a Claude Code
 * session with its sub-agents), the session the path names itself is taken, or `--session`'s.
 *
 * Exit code: 0 printed (also when M's prefix is a prefix of N's: "no break", the added blocks
 * shown); 1 when the session has no request N or M; 2 usage error or unreadable input.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createTwoFilesPatch } from 'diff';
import { analyzeSession } from '../core/analyze.js';
import { familyFor } from '../core/rules.js';
import type { Session } from '../core/model.js';
import { sessionsAt } from './pipeline.js';
import { compareRequests, comparisonLine } from '../report/requestText.js';
import { safe } from '../sanitize.js';

/** The options `diff` accepts (each is in DIFF_USAGE and the README; test/unit/cli/usage-flags.test.ts). */
export const DIFF_OPTIONS = { session: { type: 'string' }, requests: { type: 'string' }, captures: { type: 'string', multiple: true }, context: { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const;

export const DIFF_USAGE = 'usage: prefix-lens diff <path> <N> [<M>] [--session ID] [--requests DIR | --captures DIR] [--context LINES]';

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
      options: DIFF_OPTIONS,
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
  // Digits only: Number() also takes "0x3", "1e3" and " 3 ", and rounds beyond 2^53.
  const count = (x: string | undefined) => (x !== undefined && /^\d+$/.test(x) && Number.isSafeInteger(Number(x)) ? Number(x) : NaN);
  const index = count(n);
  const base = m === undefined ? undefined : count(m);
  const context = args.values.context === undefined ? 3 : count(args.values.context);
  const whole = (x: number | undefined) => x === undefined || (Number.isInteger(x) && x >= 1);
  const problem =
    !path || !n
      ? 'a session and a request number are needed'
      : extra.length
        ? `unexpected argument "${safe(extra[0])}"`
        : args.values.requests && args.values.captures
          ? '--captures and --requests exclude each other'
          : !whole(index) || !whole(base) || !Number.isInteger(context) || context < 0
            ? 'request numbers and --context are whole numbers (requests from 1)'
            : base === index
              ? `request #${index} compared with itself`
              : null;
  if (problem) {
    err(`prefix-lens diff: ${problem}\n${DIFF_USAGE}`);
    return 2;
  }
  const saved = process.env.PREFIX_LENS_CAPTURE_DIRS;
  if (args.values.captures) process.env.PREFIX_LENS_CAPTURE_DIRS = args.values.captures.map((d) => resolve(d)).join(':');
  let found: { sessions: Session[]; named: Set<string> };
  try {
    found = await sessionsAt(path, args.values.requests, process.env, (w) => err(`prefix-lens diff: warning: ${safe(w)}`));
  } catch (e) {
    err(`prefix-lens diff: ${safe((e as Error).message)}`);
    return 2;
  } finally {
    if (saved === undefined) delete process.env.PREFIX_LENS_CAPTURE_DIRS;
    else process.env.PREFIX_LENS_CAPTURE_DIRS = saved;
  }
  const want = args.values.session;
  const candidates = want ? found.sessions.filter((x) => x.id.startsWith(want)) : found.sessions.length > 1 ? found.sessions.filter((x) => found.named.has(x.id)) : found.sessions;
  if (candidates.length !== 1) {
    const all = (want ? candidates : found.sessions).map((x) => safe(x.id));
    const list = `${all.slice(0, 8).join(', ')}${all.length > 8 ? `, … (${all.length})` : ''}`;
    err(`prefix-lens diff: ${!found.sessions.length ? `no session at ${safe(path)}` : want && !candidates.length ? `no session at ${safe(path)} has an id starting with "${safe(want)}" (${found.sessions.map((x) => safe(x.id)).slice(0, 8).join(', ')})` : `${all.length} sessions at ${safe(path)}; name one with --session <id prefix>: ${list}`}`);
    return 2;
  }
  const s = candidates[0];
  // A session that could not be read (a file that is not a session, an OpenCode id not in the database) says why.
  const errors = s.diagnostics.filter((d) => d.severity === 'error');
  if (!s.requests.length && errors.length) {
    for (const d of errors) err(`prefix-lens diff: ${safe(d.file)}${d.line > 0 ? `:${d.line}` : ''}: ${safe(d.message)}`);
    return 2;
  }
  const req = s.requests.find((r) => r.index === index);
  // The judge's verdict on N and the request it compared N with (the default M).
  const judged = req ? analyzeSession(s).requests.find((a) => a.request.index === index) : undefined;
  const other = base ?? judged?.matched ?? (index > 1 ? index - 1 : undefined);
  const prev = other === undefined ? undefined : s.requests.find((r) => r.index === other);
  if (!req || !prev) {
    err(`prefix-lens diff: ${safe(s.title ?? s.id)} has ${s.requests.length} request(s); ${!req ? `no request #${index}` : other === undefined ? `request #${index} has no earlier request to compare with` : `no request #${other}`}`);
    return 1;
  }
  const name = s.title ?? s.id;
  const c = compareRequests(prev, req, name, familyFor(req.model, req.api).renderOrder);
  out(comparisonLine(name, prev.index, index, c.difference, judged && judged.matched === prev.index ? { verdict: judged.verdict, causes: judged.causes.map((x) => x.kind) } : undefined));
  const patch = createTwoFilesPatch(`request #${prev.index}`, `request #${index}`, c.base.text, c.request.text, undefined, undefined, { context });
  // jsdiff starts with a "=====" separator (and an "Index:" line when both names are equal): the ---/+++ lines and hunks are the diff.
  for (const line of patch.split('\n')) if (/^(---|\+\+\+|@@|[ +\-\\])/.test(line)) out(line);
  return 0;
}
