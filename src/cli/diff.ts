/**
 * `prefix-lens diff <path | --examples> <N> [<M>] [--session ID] [--requests DIR | --captures DIR] [--context N]`
 * — request N of a session beside request M (default: the request the analysis compared N with,
 * else the request sent before N) as a unified diff of their prefixes (src/report/requestText.ts: one section per
 * block under a header line, canonical bytes split after `\n` escapes), after one line with the
 * judge's verdict (when M is the request it compared N with) and where the prefixes first differ.
 * The path is anything `analyze` takes; when it holds several sessions (a folder, a Claude Code
 * session with its sub-agents), the session the path names itself is taken, or `--session`'s.
 * `--examples` instead of a path: the bundled example sessions (each with its request bodies),
 * one of which `--session` names.
 * N and M are request numbers as every report shows them (core/numbering.ts): `9` = the ninth
 * agent request in any evidence mode, `8.1` = the first side request (summary, title) after it.
 *
 * Exit code: 0 printed (also when M's prefix is a prefix of N's: "no break", the added blocks
 * shown); 1 when the session has no request N or M; 2 usage error or unreadable input.
 */
import { namedFoldersProblem } from './folders.js';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createTwoFilesPatch } from 'diff';
import { analyzeSession } from '../core/analyze.js';
import { parseRequestNumber } from '../core/numbering.js';
import { familyFor } from '../core/rules.js';
import type { Session } from '../core/model.js';
import { sessionsAt } from './pipeline.js';
import { compareRequests, comparisonLine } from '../report/requestText.js';
import { plural } from '../plural.js';
import { safe } from '../sanitize.js';
import { argsErrorText, diagnosticText } from './text.js';
import { diffOutputLines } from './diffLines.js';

/** The options `diff` accepts (each is in DIFF_USAGE and the README; test/unit/cli/usage-flags.test.ts). */
export const DIFF_OPTIONS = { session: { type: 'string' }, examples: { type: 'boolean' }, requests: { type: 'string' }, captures: { type: 'string', multiple: true }, context: { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const;

export const DIFF_USAGE = 'usage: prefix-lens diff <path | --examples> <N> [<M>] [--session ID] [--requests DIR | --captures DIR] [--context LINES]';

/** One bundled example as examples/index.json lists it: a path, with its request bodies when recorded (absolute). */
export interface ExampleInput {
  path: string;
  requests?: string;
}

/**
 * Runs `diff`. `argv`: the arguments after `diff`. Writes the diff with `out` (one call per line,
 * each passed through the CLI's terminal sanitizer by the caller) and errors with `err`.
 * `examples` lists the bundled examples (`--examples`; main.ts reads examples/index.json).
 */
export async function diffCommand(argv: string[], out: (s: string) => void, err: (s: string) => void, examples: () => Promise<ExampleInput[]> = async () => []): Promise<number> {
  let args;
  try {
    args = parseArgs({
      args: argv,
      allowPositionals: true,
      options: DIFF_OPTIONS,
    });
  } catch (e) {
    err(`prefix-lens diff: ${argsErrorText(e)}\n${DIFF_USAGE}`);
    return 2;
  }
  if (args.values.help) {
    out(DIFF_USAGE);
    return 0;
  }
  // --examples stands where the path would.
  const fromExamples = args.values.examples === true;
  const [path, n, m, ...extra] = fromExamples ? ['--examples', ...args.positionals] : args.positionals;
  // Digits only: Number() also takes "0x3", "1e3" and " 3 ", and rounds beyond 2^53.
  const count = (x: string | undefined) => (x !== undefined && /^\d+$/.test(x) && Number.isSafeInteger(Number(x)) ? Number(x) : NaN);
  const number = n === undefined ? null : parseRequestNumber(n);
  const base = m === undefined ? undefined : parseRequestNumber(m);
  const context = args.values.context === undefined ? 3 : count(args.values.context);
  const problem =
    !path || !n
      ? 'a session and a request number are needed'
      : extra.length
        ? `unexpected argument "${safe(extra[0])}"`
        : args.values.requests && args.values.captures
          ? '--captures and --requests exclude each other'
          : fromExamples && args.values.requests
            ? '--examples reads the bundled example sessions: it takes no --requests (they have their own request bodies)'
          : number === null || base === null
            ? `"${safe(number === null ? n : m!)}" is not a request number (agent requests 1, 2, …; side requests after #8: 8.1, 8.2, …)`
            : !Number.isInteger(context) || context < 0
              ? '--context is a whole number'
              : base === number
                ? `request #${number} compared with itself`
                : null;
  if (problem) {
    err(`prefix-lens diff: ${problem}\n${DIFF_USAGE}`);
    return 2;
  }
  const folder = namedFoldersProblem(args.values);
  if (folder) {
    err(`prefix-lens diff: ${folder}`);
    return 2;
  }
  const saved = process.env.PREFIX_LENS_CAPTURE_DIRS;
  if (args.values.captures) process.env.PREFIX_LENS_CAPTURE_DIRS = args.values.captures.map((d) => resolve(d)).join(':');
  let found: { sessions: Session[]; named: Set<string> };
  const warn = (w: string) => err(`prefix-lens diff: warning: ${safe(w)}`);
  try {
    if (fromExamples) {
      found = { sessions: [], named: new Set() };
      for (const e of await examples()) {
        const at = await sessionsAt(e.path, e.requests, process.env, warn);
        found.sessions.push(...at.sessions);
        for (const id of at.named) found.named.add(id);
      }
    } else found = await sessionsAt(path, args.values.requests === undefined ? undefined : resolve(args.values.requests), process.env, warn);
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
    const at = fromExamples ? 'in the bundled examples' : `at ${safe(path)}`;
    err(`prefix-lens diff: ${!found.sessions.length ? `no session ${at}` : want && !candidates.length ? `no session ${at} has an id starting with "${safe(want)}" (${found.sessions.map((x) => safe(x.id)).slice(0, 8).join(', ')})` : `${plural(all.length, 'session')} ${at}; name one with --session <id prefix>: ${list}`}`);
    return 2;
  }
  const s = candidates[0];
  // A session that could not be read (a file that is not a session, an OpenCode id not in the database) says why.
  const errors = s.diagnostics.filter((d) => d.severity === 'error');
  if (!s.requests.length && errors.length) {
    for (const d of errors) err(`prefix-lens diff: ${diagnosticText(d)}`);
    return 2;
  }
  // The judge numbers the requests (core/numbering.ts) and gives N's verdict and the request it compared N with (the default M).
  const analysis = analyzeSession(s).requests;
  const numbers = analysis.map((a) => a.number);
  const at = numbers.indexOf(number!);
  const req = at >= 0 ? s.requests[at] : undefined;
  const judged = req ? analysis[at] : undefined;
  const other = base !== undefined ? numbers.indexOf(base as string) : judged?.matched != null ? judged.matched - 1 : at - 1;
  const prev = other >= 0 ? s.requests[other] : undefined;
  if (!req || !prev) {
    const missing = !req ? `no request #${number}` : base === undefined ? `request #${number} has no earlier request to compare with` : `no request #${base}`;
    // A side request the transcript does not record is known only from the bodies the host sent.
    const wanted = !req ? number! : base;
    const hint = wanted?.includes('.') && s.requests.every((r) => r.evidence === 'reconstructed') ? ' (requests the transcript does not record, such as summary and title requests, need --requests DIR or --captures DIR)' : '';
    err(`prefix-lens diff: ${safe(s.title ?? s.id)} has ${numberedText(numbers)}; ${missing}${hint}`);
    return 1;
  }
  const name = s.title ?? s.id;
  const c = compareRequests(prev, req, name, familyFor(req.model, req.api).renderOrder);
  const [baseNumber, reqNumber] = [numbers[other], numbers[at]];
  out(comparisonLine(name, baseNumber, reqNumber, c.difference, judged && judged.matched === prev.index ? { verdict: judged.verdict, causes: judged.causes.map((x) => x.kind), breakSegment: judged.break?.segment ?? null } : undefined));
  const patch = createTwoFilesPatch(`request #${baseNumber}`, `request #${reqNumber}`, c.base.text, c.request.text, undefined, undefined, { context });
  // jsdiff starts with a "=====" separator (and an "Index:" line when both names are equal): the ---/+++ lines and hunks are the diff, long lines cut.
  for (const line of diffOutputLines(patch)) out(line);
  return 0;
}

/** A session's request numbers in words: `16 requests: #1–#13, side requests #8.1, #8.2, #9.1`, `1 request: #1`. */
function numberedText(numbers: string[]): string {
  const agents = numbers.filter((x) => !x.includes('.')).length;
  const sides = numbers.filter((x) => x.includes('.'));
  const list = `${sides.slice(0, 8).map((x) => `#${x}`).join(', ')}${sides.length > 8 ? `, … (${sides.length})` : ''}`;
  const parts = [agents ? (agents === 1 ? '#1' : `#1–#${agents}`) : '', sides.length ? `side request${sides.length > 1 ? 's' : ''} ${list}` : ''].filter(Boolean);
  return `${plural(numbers.length, 'request')}${parts.length ? `: ${parts.join(', ')}` : ''}`;
}
