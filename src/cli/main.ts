/**
 * `prefix-lens` command line: analyze, check, diff, fleet, capture.
 * Exit codes: 0 done (analyze always, when it could read its input); 1 `check` found a break
 * that fails its gate (gate.ts); 2 usage error or unreadable input.
 */
import { createWriteStream, existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Report, RequestReport, SessionReport } from '../report/json.js';
import { analyzeRefCached, cachedReports, defaultCacheDir, identityOf, type Identity } from '../cache/results.js';
import { rulesHash, type RefIdentityFields } from '../cache/identity.js';
import { cachedOutput, OutputEntryWriter } from '../cache/output.js';
import { continueFromCache, dropTail, saveTail, type TailBody } from '../cache/tail.js';
import { pruneCache } from '../cache/prune.js';
import { defaultRules } from '../core/rules.js';
import { createHtmlReportWriter, loadWebviewAssets, type HtmlReportWriter } from '../report/html.js';
import { defaultFolders, discoverSessions, locatedByText, noSessionText, resolveArg, type SessionRef } from '../hosts/registry.js';
import { homedir } from 'node:os';
import { fleetCommand } from './fleet.js';
import { captureCommand } from './capture.js';
import { diffCommand, type ExampleInput } from './diff.js';
import { htmlTargetProblem } from './htmlTarget.js';
import { namedFoldersProblem } from './folders.js';
import { watchSessions } from './watch.js';
import { releaseBetweenSessions, type NextSession } from '../memory.js';
import { WorkerPool, isAnalysisWorker, setWorkerBoot, workerCount, workerMain, type WorkerBoot } from './workers.js';
import { JsonReportWriter, refResults, sessionJsonLines, sessionReports, unreadable, type Input, type RenderedSession } from './pipeline.js';
import { jsonText, terminalText } from '../sanitize.js';
import { plural } from '../plural.js';
import { stdoutFailed } from './stdoutError.js';
import { LEGEND, argsErrorText, diagnosticText, renderSession, safe, usd } from './text.js';
import { gateText, parseGate, passReason, type Gate } from './gate.js';
import { CAUSE_KINDS } from '../core/classify.js';
import { treeStamp, warmPaths, writeManifest } from './warm.js';

/** The cause names (core/classify.ts CAUSE_KINDS) for the usage text, in lines of at most 98 characters, indented by 2. */
function causeLines(): string {
  const lines: string[] = [];
  let line = '';
  for (const c of CAUSE_KINDS) {
    const next = line ? `${line}, ${c}` : `  ${c}`;
    if (next.length > 98 && line) {
      lines.push(`${line},`);
      line = `  ${c}`;
    } else line = next;
  }
  return [...lines, line].join('\n');
}

/** `prefix-lens --help`: every command with every option it takes, what they do, the exit codes. */
export const USAGE = `usage:
  prefix-lens analyze [path… | --all | --examples] [--requests DIR | --captures DIR…] [--json] [--html FILE] [--no-cache] [--watch]
  prefix-lens check   [path… | --all | --examples] [--requests DIR | --captures DIR…] [--no-cache] [--min-tokens N] [--min-usd X] [--ignore CAUSE…]
  prefix-lens diff    <path | --examples> <N> [<M>] [--session ID] [--requests DIR | --captures DIR…] [--context LINES]
  prefix-lens fleet   [--json] [--phux-bin PATH] [--socket S] [--timeout-ms N]
  prefix-lens capture [--port N] [--upstream URL…] [--out DIR] [--max-mb N] [--quiet]
(… = repeatable; <command> --help for diff, fleet and capture: capture's says how to point each host at it)

analyze: one row per request (verdict, break, cause, cost), then a legend. --json: the report as
JSON (version 1) instead. --html FILE: the timeline as one self-contained HTML file instead of the
text report (one line on stderr says what was written; - = the HTML on stdout). --watch: then each
new request as it lands. --no-cache: read everything again (results are cached in
$XDG_CACHE_HOME/prefix-lens). --requests DIR: the request bodies the host sent (*.body.json, wire
evidence); without it, bodies the capture proxy saved are found in
$XDG_STATE_HOME/prefix-lens/captures (--captures DIR: there instead).
check, the CI gate: lists every break of an agent request with what it re-billed; one fails when
it re-billed at least --min-tokens N tokens (default 1: a compaction or branch that re-billed
nothing passes; 0 = every break fails), cost at least --min-usd X dollars when given (unknown
prices are not let through), and has a cause besides those named by --ignore CAUSE (or a
comma-separated list):
${causeLines()}.
diff: request N beside M (default: the one it was compared with) as a unified diff of the prefixes
(--examples: of one of the bundled example sessions, named by --session).

path: a Pi, Claude Code, Codex or PI-Desktop session (.jsonl), an OpenCode data dir or opencode.db,
a DSH home ($DSH_HOME, ~/.dsh) or a DSH session log (session[.vN].jsonl[.zstd]) for BotHarness, a
PI-Desktop data dir ($PI_DESKTOP_DATA_DIR, ~/.pi-desktop), a folder of captured request bodies
(*.body.json), or any folder with sessions below it (e.g. ~/.claude, ~/.codex, Pi's agent dir);
pi:, claude:, codex:, pidesktop:, botharness:<id prefix> (alone = that host's newest session),
opencode:<id prefix> (alone = every session). No path (or --examples): the bundled example
sessions. --all: every session of every host in its default folders (the ones host: looks in:
~/.claude, ~/.codex, ~/.pi/agent, …, moved by the hosts' variables), newest first; not with
--requests or --watch.

Exit codes: 0 done (check: no break failed the gate); 1 check: a break failed the gate (diff: no
request N or M); 2 usage error, or no input could be read (--all: no session in the default
folders; check: any input could not be read or held no session). prefix-lens --version: the version.`;

/**
 * What a usage error prints after saying what was wrong: the commands' synopsis (USAGE's first
 * paragraph) and where the rest is, not the whole help text (35 lines that bury the error).
 */
export const USAGE_HINT = `${USAGE.slice(0, USAGE.indexOf('\n\n'))}\nprefix-lens --help: what each option does, the paths it reads, the exit codes`;

/** The options of analyze and check, each with the commands that take it (in USAGE and the README; test/unit/cli/usage-flags.test.ts). */
export const REPORT_OPTIONS = {
  json: { type: 'boolean', commands: ['analyze'] },
  html: { type: 'string', commands: ['analyze'] },
  requests: { type: 'string', commands: ['analyze', 'check'] },
  captures: { type: 'string', multiple: true, commands: ['analyze', 'check'] },
  'no-cache': { type: 'boolean', commands: ['analyze', 'check'] },
  examples: { type: 'boolean', commands: ['analyze', 'check'] },
  all: { type: 'boolean', commands: ['analyze', 'check'] },
  watch: { type: 'boolean', commands: ['analyze'] },
  'min-tokens': { type: 'string', commands: ['check'] },
  'min-usd': { type: 'string', commands: ['check'] },
  ignore: { type: 'string', multiple: true, commands: ['check'] },
  help: { type: 'boolean', short: 'h', commands: ['analyze', 'check'] },
} as const;

/** The package root: the nearest folder above this module that has examples/index.json. */
export function packageRoot(from: string = __dirname): string {
  for (let d = from; ; d = dirname(d)) {
    if (existsSync(resolve(d, 'examples/index.json'))) return d;
    if (dirname(d) === d) return from;
  }
}

/** The bundled examples (`--examples`): examples/index.json's list, its paths relative to the package root made absolute. */
async function examples(root: string): Promise<ExampleInput[]> {
  const list = JSON.parse(await readFile(resolve(root, 'examples/index.json'), 'utf8')) as { examples: ExampleInput[] };
  return list.examples.map((e) => ({ path: resolve(root, e.path), requests: e.requests && resolve(root, e.requests) }));
}

/** The inputs of the paths given: made absolute, duplicates dropped, each with `requestsDir`. */
function pathInputs(paths: string[], requestsDir: string | undefined): Input[] {
  // `host:<id>` names a session, not a path; only paths are made absolute for de-duplication.
  // The bodies' folder absolute too: its files are named in diagnostics like every other file.
  const requests = requestsDir === undefined ? undefined : resolve(requestsDir);
  return [...new Set(paths.map((p) => (/^[a-z][a-z0-9-]+:/i.test(p) ? p : resolve(p))))].map((p) => ({ path: p, requests }));
}


/**
 * Reads and analyzes the inputs into the version-1 report, all in memory (library use; the CLI
 * streams with `sessionReports`): the paths given, or with none the bundled examples, as the CLI.
 * Unreadable inputs go to `errors`.
 */
export async function buildReport(paths: string[], requestsDir: string | undefined, root: string): Promise<{ report: Report; errors: string[] }> {
  const errors: string[] = [];
  const sessions: SessionReport[] = [];
  const inputs = paths.length ? pathInputs(paths, requestsDir) : await examples(root);
  for await (const s of sessionReports(inputs, { env: process.env, onError: (e) => errors.push(e) })) sessions.push(s);
  return { report: { version: 1, sessions }, errors };
}


/**
 * What `command --all` says when the hosts' default folders hold no session (exit 2): the
 * folders looked in, per host with the variables that move them, and the two ways on (name
 * the sessions, or read the bundled examples).
 */
function noDefaultSessionsText(command: string, env: NodeJS.ProcessEnv, home: string): string {
  const hosts = defaultFolders({ env, home }).map(({ label, folders, locatedBy }) => {
    const vars = locatedBy.length ? ` (${locatedByText(locatedBy)})` : '';
    return `  ${label}: ${folders.map(safe).join(', ')}${vars}`;
  });
  return [
    "prefix-lens: no sessions found in the hosts' default folders:",
    ...hosts,
    `To read other sessions, name them: prefix-lens ${command} <path | host:id>…`,
    `To read the bundled example sessions: prefix-lens ${command} (no path)`,
  ].join('\n');
}

/** Where a request is, for messages: `file:line`, or `file (row)` for database rows (untrusted: pass through `safe`). */
function where(r: RequestReport): string {
  return r.line > 0 ? `${r.file}:${r.line}` : `${r.file}${r.row ? ` (${r.row})` : ''}`;
}

/**
 * `check`'s line for each break of an agent request (verdict `break`: not a cold start, expiry or
 * model switch), with what it re-billed, and whether it fails `gate` (a passing one says why).
 */
function breaksOf(s: SessionReport, gate: Gate): Array<{ line: string; fails: boolean }> {
  const out: Array<{ line: string; fails: boolean }> = [];
  for (const r of s.requests) {
    if (r.verdict === 'break' && r.kind === 'agent') {
      const pass = passReason(r, gate);
      const cost = `~${r.lostTokens} tokens re-billed, ${r.costUSD === null ? 'cost unknown' : usd(r.costUSD)}`;
      out.push({
        line: `${safe(where(r))}: ${s.host} session ${safe(s.id)} request #${r.number} breaks the cache (${r.causes.map((c) => c.kind).join(', ')}): ${cost}${pass ? `; passes: ${pass}` : ''}`,
        fails: pass === null,
      });
    }
  }
  return out;
}


/** The `--html FILE` output: sessions written as they come; false = a write failed (reported). */
interface HtmlFile {
  toStdout: boolean;
  session(s: SessionReport): Promise<boolean>;
  end(sessions: number): Promise<boolean>;
}

/**
 * Streams the standalone HTML report to `file` (`-` = stdout through `out`, one line per chunk:
 * the breaks fall where whitespace is harmless), session by session, with backpressure. A write
 * error is reported on `err` and makes `session`/`end` return false (the CLI then exits 2).
 */
function htmlFile(file: string, assets: ReturnType<typeof loadWebviewAssets>, out: (s: string) => void | Promise<void>, err: (s: string) => void): HtmlFile {
  let writer: HtmlReportWriter;
  let close: () => Promise<void> = async () => {};
  let requests = 0;
  if (file === '-') {
    writer = createHtmlReportWriter((c) => out(c), assets);
  } else {
    const stream = createWriteStream(file);
    const failed = new Promise<never>((_, reject) => stream.once('error', reject));
    failed.catch(() => {});
    writer = createHtmlReportWriter(
      (chunk) => Promise.race([failed, new Promise<void>((ok) => (stream.write(chunk) ? ok() : stream.once('drain', () => ok())))]),
      assets,
    );
    close = () => Promise.race([failed, new Promise<void>((ok) => stream.end(() => ok()))]);
  }
  const fail = (e: unknown) => {
    err(`prefix-lens: --html ${safe(file)}: ${safe((e as Error).message)}`);
    return false;
  };
  return {
    toStdout: file === '-',
    async session(s) {
      requests += s.requests.length;
      return writer.session(s).then(() => true, fail);
    },
    async end(sessions) {
      try {
        await writer.end();
        await close();
      } catch (e) {
        return fail(e);
      }
      if (file !== '-') err(`prefix-lens: wrote the timeline of ${plural(sessions, 'session')}, ${plural(requests, 'request')} to ${safe(resolve(file))}`);
      return true;
    },
  };
}

/**
 * An output sink; a promise it returns resolves once the destination took the text
 * (backpressure). Any other return value is ignored.
 */
export type Sink<T> = (chunk: T) => unknown;

/** What a sink returned, as something to await: its promise, or nothing. */
function settled(r: unknown): void | Promise<void> {
  return r instanceof Promise ? (r as Promise<void>) : undefined;
}

/**
 * Runs the CLI; returns the exit code.
 * @param rawOut receives each printed line (without its newline); may return a promise when its
 *   destination is full (a slow pipe): the report is not produced faster than it is taken
 * @param rawBytes optional: receives cached `--json` bytes as they are (newlines included), in
 *   order with `rawOut`'s lines; without it they are decoded and passed to `rawOut`
 */
export async function main(
  argv: string[],
  sinkOut: Sink<string>,
  rawErr: (s: string) => void,
  root = packageRoot(),
  sinkBytes?: Sink<Uint8Array>,
): Promise<number> {
  const rawOut = (s: string) => settled(sinkOut(s));
  const rawBytes = sinkBytes && ((b: Uint8Array) => settled(sinkBytes(b)));
  // The output sink: every line printed passes the one sanitizer (src/sanitize.ts), whatever it
  // quotes (arguments in parseArgs errors, file names, transcript text, phux output). Text mode
  // prints line by line without awaiting; `drained` waits for the last full write.
  let backlog: void | Promise<void>;
  const out = (s: string) => (backlog = rawOut(terminalText(s)));
  const drained = async () => {
    const b = backlog;
    backlog = undefined;
    await b;
  };
  const err = (s: string) => rawErr(terminalText(s));
  const [command, ...rest] = argv;
  if (command === 'fleet') return fleetCommand(rest, out, { err });
  if (command === 'capture') return captureCommand(rest, out, err);
  if (command === 'diff') {
    const code = await diffCommand(rest, out, err, () => examples(root));
    await drained();
    return code;
  }
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    out(USAGE);
    return 0;
  }
  if (command === '--version' || command === '-V' || command === 'version') {
    // The package's own version (package.json beside examples/, at the package root).
    out((JSON.parse(await readFile(resolve(root, 'package.json'), 'utf8')) as { version: string }).version);
    return 0;
  }
  if (command !== 'analyze' && command !== 'check') {
    err(`prefix-lens: unknown command "${safe(command)}"\n${USAGE_HINT}`);
    return 2;
  }
  let args;
  try {
    args = parseArgs({
      args: rest,
      allowPositionals: true,
      options: REPORT_OPTIONS,
    });
  } catch (e) {
    // parseArgs quotes the offending argument as given: one line, made visible.
    err(`prefix-lens: ${argsErrorText(e)}\n${USAGE_HINT}`);
    return 2;
  }
  if (args.values.help) {
    out(USAGE);
    return 0;
  }
  // One parser for both commands: an option of the other command is a usage error, not ignored.
  const foreign = (Object.keys(REPORT_OPTIONS) as Array<keyof typeof REPORT_OPTIONS>).find(
    (o) => args.values[o] !== undefined && !(REPORT_OPTIONS[o].commands as readonly string[]).includes(command),
  );
  if (foreign) {
    err(`prefix-lens: --${foreign} is an option of ${REPORT_OPTIONS[foreign].commands.join(' and ')}, not ${command}\n${USAGE_HINT}`);
    return 2;
  }
  if (args.values.captures && args.values.requests) {
    err(`prefix-lens: --captures and --requests exclude each other (--requests names the bodies itself)\n${USAGE_HINT}`);
    return 2;
  }
  if (args.values.examples && args.values.all) {
    err(`prefix-lens: --examples and --all exclude each other (the bundled example sessions, or yours)\n${USAGE_HINT}`);
    return 2;
  }
  const only = args.values.examples ? '--examples' : args.values.all ? '--all' : null;
  if (!only && !args.positionals.length && args.values.requests) {
    err(`prefix-lens: --requests needs the sessions named: the bodies belong to the sessions they were sent for (no path reads the bundled examples, which have their own)\n${USAGE_HINT}`);
    return 2;
  }
  if (only && (args.positionals.length || args.values.requests)) {
    const what = only === '--examples' ? 'the bundled example sessions' : "every session in the hosts' default folders";
    const beside = args.positionals.length ? `no path (${safe(args.positionals[0])})` : `no --requests (${only === '--examples' ? 'they have their own request bodies' : 'bodies belong to the sessions they were sent for'})`;
    err(`prefix-lens: ${only} reads ${what}: it takes ${beside}\n${USAGE_HINT}`);
    return 2;
  }
  // A watch holds each session it follows in memory: not every session of the user's history. Nor
  // the bundled examples: finished recordings that never grow, read with request bodies a watch
  // does not join (--watch takes no --requests), so it would show less than `analyze` does.
  if (args.values.watch && !args.positionals.length) {
    const instead = args.values.all ? '--all' : `the bundled examples (${only ?? 'no path'}: finished recordings, read with their request bodies by analyze)`;
    err(`prefix-lens: --watch needs the sessions named: a path or host:id (e.g. claude:, the newest Claude Code session), not ${instead}\n${USAGE_HINT}`);
    return 2;
  }
  // Folders named on the command line: one that is not there is a usage error (exit 2, one line).
  const folder = namedFoldersProblem(args.values);
  if (folder) {
    err(`prefix-lens: ${folder}`);
    return 2;
  }
  // The capture roots reach every reader (and worker thread) through the environment.
  const savedCaptureDirs = process.env.PREFIX_LENS_CAPTURE_DIRS;
  if (args.values.captures) process.env.PREFIX_LENS_CAPTURE_DIRS = args.values.captures.map((d) => resolve(d)).join(':');
  try {
    return await run(command, args, out, err, root, rawOut, rawBytes, warmPaths(argv, process.cwd()), drained);
  } finally {
    if (savedCaptureDirs === undefined) delete process.env.PREFIX_LENS_CAPTURE_DIRS;
    else process.env.PREFIX_LENS_CAPTURE_DIRS = savedCaptureDirs;
  }
}

type Args = {
  values: { json?: boolean; html?: string; requests?: string; captures?: string[]; 'no-cache'?: boolean; examples?: boolean; all?: boolean; watch?: boolean; 'min-tokens'?: string; 'min-usd'?: string; ignore?: string[] };
  positionals: string[];
};

/** analyze / check once the arguments are parsed. */
async function run(
  command: 'analyze' | 'check',
  args: Args,
  out: (s: string) => void | Promise<void>,
  err: (s: string) => void,
  root: string,
  rawOut: (s: string) => void | Promise<void>,
  rawBytes: ((b: Uint8Array) => void | Promise<void>) | undefined,
  warm: string[] | null,
  drained: () => Promise<void>,
): Promise<number> {
  const gate = parseGate(args.values);
  if (typeof gate === 'string') {
    err(`prefix-lens: ${safe(gate)}\n${USAGE_HINT}`);
    return 2;
  }
  if (args.values.html !== undefined) {
    if (args.values.html === '-' && args.values.json) {
      err(`prefix-lens: --json and --html - both write to stdout; give --html a file\n${USAGE_HINT}`);
      return 2;
    }
    const target = args.values.html === '-' ? null : htmlTargetProblem(args.values.html, args.positionals);
    if (target) {
      err(`prefix-lens: --html ${safe(args.values.html)}: ${target}`);
      return 2;
    }
  }
  if (args.values.watch && (args.values.html !== undefined || args.values.requests)) {
    err(`prefix-lens: --watch is an option of analyze, without --html or --requests\n${USAGE_HINT}`);
    return 2;
  }
  // What a folder walk left out (too deep): said on stderr, the rest still read; such a run is not
  // answered by the warm entry next time (it would not say it again).
  let warned = false;
  const onWarning = (w: string) => {
    warned = true;
    err(`prefix-lens: warning: ${safe(w)}`);
  };
  let inputs: Input[];
  if (args.positionals.length) inputs = pathInputs(args.positionals, args.values.requests);
  else if (!args.values.all) inputs = await examples(root);
  else {
    // --all: every session of every host in its default folders, newest first (the discovery
    // the extension's Sessions view makes, without its folder settings).
    // $HOME as process.env says (homedir() reads the C environment, which an in-process caller
    // that replaced process.env does not change; the OpenCode locator reads env.HOME too).
    const home = process.env.HOME || homedir();
    const refs = await discoverSessions({ env: process.env, home, onWarning });
    if (!refs.length) {
      err(noDefaultSessionsText(command, process.env, home));
      return 2;
    }
    inputs = [{ refs }];
  }
  // Created once the inputs are known: a run that finds nothing leaves no empty report behind.
  let html: HtmlFile | null = null;
  if (args.values.html !== undefined) {
    try {
      html = htmlFile(args.values.html, loadWebviewAssets(resolve(root, 'dist')), out, err);
    } catch (e) {
      err(`prefix-lens: --html: ${safe((e as Error).message)}`);
      return 2;
    }
  }
  if (args.values.watch) {
    const refs: SessionRef[] = [];
    for (const input of inputs) {
      if ('refs' in input) {
        refs.push(...input.refs);
        continue;
      }
      try {
        const found = await resolveArg(input.path, { env: process.env, home: homedir(), onWarning: (w) => err(`prefix-lens: warning: ${safe(w)}`) });
        const none = found.length ? null : await noSessionText(input.path, { env: process.env, home: homedir() });
        if (none) err(`prefix-lens: ${safe(none)}`);
        refs.push(...found);
      } catch (e) {
        err(`prefix-lens: ${safe((e as Error).message)}`);
      }
    }
    if (!refs.length) {
      err('prefix-lens: --watch: no sessions found');
      return 2;
    }
    const stop = new AbortController();
    const end = () => stop.abort();
    process.once('SIGINT', end);
    process.once('SIGTERM', end);
    try {
      return await watchSessions(refs, { json: args.values.json === true, out, err, signal: stop.signal });
    } finally {
      process.off('SIGINT', end);
      process.off('SIGTERM', end);
    }
  }
  let errors = 0;
  let count = 0;
  /** Sessions printed with their request table (text mode): the legend explains them. */
  let tables = 0;
  const bad: SessionReport[] = [];
  /** Unreadable sessions copied from the output cache or rendered by a worker (only counted: --json prints no diagnostics list). */
  let badCached = 0;
  const breaks: Array<{ line: string; fails: boolean }> = [];
  // JSON lines: DEL, C1 and bidi marks inside strings become \u escapes (same values, safe to cat).
  // jsonText's output holds no character terminalText replaces (JSON.stringify escapes C0, the
  // indentation is spaces and newlines), so the chunks go to the raw sink: the output cache then
  // holds exactly the bytes printed.
  const json = args.values.json && command === 'analyze' ? new JsonReportWriter((chunk) => rawOut(chunk), rawBytes) : null;
  // --json alone may copy a session's cached bytes or take a worker's rendered text; with --html the
  // HTML needs each session's report as well, so every session comes as reports (the results cache
  // still serves them).
  const jsonOnly = json !== null && html === null;
  const onError = (e: string) => {
    errors++;
    err(`prefix-lens: ${safe(e)}`);
  };
  // One session at a time: read, analyzed, written and released (memory follows the largest one).
  // Results are cached per session file ($XDG_CACHE_HOME/prefix-lens); --no-cache reads everything.
  const cacheDir = defaultCacheDir(process.env);
  const noCache = args.values['no-cache'] === true;
  // --json stores each analyzed ref's output entry: its reports are read from there (results.ts), not stored twice.
  const analyzeRef = noCache ? undefined : (ref: SessionRef) => analyzeRefCached(ref, { cacheDir, reportsInOutput: jsonOnly });
  // --json: a ref whose printed bytes are cached is copied; the identity seen before a miss's
  // analysis is the one its output is stored under (only if the file still has it afterwards).
  const before = new Map<string, Identity>();
  const lookupOutput =
    jsonOnly && !noCache
      ? async (ref: SessionRef) => {
          const id = await identityOf(ref, defaultRules);
          const hit = id && (await cachedOutput(ref, { cacheDir, id }));
          if (!hit && id) before.set(ref.key, id);
          return hit || null;
        }
      : undefined;
  // --json, a Pi session that grew since its output entry: continued from the state saved with
  // it (cache/tail.ts), only the appended lines read; the new state is saved after the entry.
  const nextStates = new Map<string, TailBody | null>();
  const continued = lookupOutput
    ? async (ref: SessionRef): Promise<RenderedSession[] | null> => {
        const id = before.get(ref.key);
        const c = id ? await continueFromCache(ref, cacheDir, id, sessionJsonLines) : null;
        if (!c) return null;
        nextStates.set(ref.key, c.state);
        return [{ chunks: c.chunks, requests: c.requests, unreadable: c.unreadable }];
      }
    : undefined;
  // Several sessions: analyzed in worker threads, written here in order.
  let pool: WorkerPool | undefined;
  const parallel = (refs: number, bytes: readonly number[]) => {
    const n = workerCount(refs, process.env, bytes);
    if (n < 1) return undefined;
    // Hits are answered here; the workers start with the first miss.
    const start = () => (pool ??= new WorkerPool(n, noCache ? null : cacheDir));
    // --json: the worker renders the text (its bytes are transferred, not the report objects).
    const analyze = async (ref: SessionRef, next: NextSession) =>
      (noCache ? null : await cachedReports(ref, { cacheDir })) ?? (jsonOnly ? start().analyze(ref, true, next) : start().analyze(ref, false, next));
    return { analyze, ahead: n };
  };
  // A run the warm entry can answer next time (warm.ts): what discovery can see is stamped
  // before it looks; the manifest is written after the output entries.
  const trees = warm && !noCache ? warm.map(treeStamp) : null;
  const printed: RefIdentityFields[] = [];
  let direct = false;
  try {
    for await (const item of refResults(inputs, { env: process.env, onError, onWarning, analyzeRef, parallel, cachedOutput: lookupOutput, continued })) {
      if (item.ref) printed.push({ host: item.ref.host, key: item.ref.key, path: item.ref.path, id: item.ref.id, mtimeMs: item.ref.mtimeMs, parentId: item.ref.parentId, stamp: item.ref.stamp, startMs: item.ref.startMs, baseThread: item.ref.baseThread, basePath: item.ref.basePath });
      else direct = true;
      if ('output' in item) {
        for (let i = 0; i < item.output.blocks.length; i++) {
          count++;
          if (item.output.blocks[i].unreadable) badCached++;
          await json!.cached(item.output, i);
        }
        continue;
      }
      const id = item.ref && before.get(item.ref.key);
      if (item.ref) before.delete(item.ref.key);
      const entry = json && id && item.ref ? new OutputEntryWriter(item.ref, id, cacheDir) : null;
      if ('rendered' in item) {
        for (const r of item.rendered) {
          count++;
          if (r.unreadable) badCached++;
          await json!.rendered(r, entry ? (t) => entry.text(t) : undefined, entry ? (b) => entry.bytes(b) : undefined);
          entry?.endSession(r.requests, r.unreadable);
        }
        await entry?.commit();
        if (id && item.ref && nextStates.has(item.ref.key)) {
          const next = nextStates.get(item.ref.key)!;
          nextStates.delete(item.ref.key);
          if (next) await saveTail(cacheDir, item.ref.key, { ...next, identity: id });
          else await dropTail(cacheDir, item.ref.key);
        }
        // The chunks were written: let go and collected before they add up here (a worker's
        // bytes, freed into its malloc arena only when this thread collects them; memory.ts
        // externalAfter). The array is the one the pipeline and the worker's reply hold too.
        item.rendered.length = 0;
        if (pool) releaseBetweenSessions('idle');
        continue;
      }
      for (const s of item.reports) {
        count++;
        if (unreadable(s)) bad.push({ ...s, requests: [] });
        if (command === 'check') {
          breaks.push(...breaksOf(s, gate));
          // Read with damage (a malformed line skipped, a cut last line): the gate says where, on stderr.
          if (!unreadable(s)) for (const d of s.diagnostics) err(diagnosticText(d));
        }
        else {
          if (html && !(await html.session(s))) {
            await entry?.abort();
            return 2;
          }
          if (json) {
            await json.session(s, entry ? (t) => entry.text(t) : undefined, jsonText, entry ? (b) => entry.bytes(b) : undefined);
            entry?.endSession(s.requests.length, unreadable(s));
          } else if (html) {
            // The HTML report instead of the text one: what the text would have said of damage, on stderr.
            for (const d of s.diagnostics) if (d.severity !== 'info') err(diagnosticText(d));
          } else {
            if (count > 1) out('');
            if (renderSession(s, out)) tables++;
            // A session's lines are queued at most once: the next is read when they are taken.
            await drained();
          }
        }
      }
      await entry?.commit();
    }
  } finally {
    await pool?.close();
  }
  if (command === 'check') {
    for (const b of breaks) out(b.line);
    const fails = breaks.filter((b) => b.fails).length;
    const passed = breaks.length - fails;
    // The verb agrees with its count: "1 request breaks", "2 requests break".
    const pass = passed === 1 ? 'passes' : 'pass';
    if (fails) out(`${plural(fails, 'request')} ${fails === 1 ? 'breaks' : 'break'} the cache${passed ? `; ${plural(passed, 'break', { shown: `${passed} more` })} ${pass} the gate (${gateText(gate)})` : ''}`);
    else if (breaks.length || !(errors || bad.length)) out(passed ? `no cache breaks past the gate (${gateText(gate)}) in ${plural(count, 'session')}; ${plural(passed, 'break')} ${pass} it` : `no cache breaks in ${plural(count, 'session')}`);
    // A gate must not pass on input it could not read: the breaks of what it read are listed
    // above all the same (one stray empty file must not hide them), then exit 2.
    for (const s of bad) for (const d of s.diagnostics) err(diagnosticText(d));
    if (errors || bad.length) {
      err(`prefix-lens: ${plural(errors + bad.length, 'input')} could not be read or held no session`);
      return 2;
    }
    return fails ? 1 : 0;
  }
  if (html && !(await html.end(count))) return 2;
  if (!noCache && command === 'analyze') await pruneCache(cacheDir);
  if (json) {
    await json.end();
    if (warm && trees?.every((t) => t !== null) && !direct && errors === 0 && !warned && printed.length) {
      await writeManifest(cacheDir, { rules: rulesHash(defaultRules), paths: warm, trees: trees as string[], refs: printed });
    }
  }
  else if (html) {
    // The HTML report instead of the text one (its file named on stderr by html.end).
  } else if (!count) {
    // Each input that gave nothing was named on stderr with where it looked; else say it here.
    if (!errors) out('no sessions found');
  }
  else if (tables) {
    out('');
    for (const line of LEGEND) out(line);
  }
  // Nothing readable at all (every input missing or yielding only errors) is a failure.
  const unreadableCount = bad.length + badCached;
  return count === unreadableCount && (errors > 0 || unreadableCount > 0) ? 2 : 0;
}

/**
 * Resolves when stdout has written what it buffered ('drain'), or at once when it is closed
 * (the error handler, stdoutFailed, ends the process).
 */
let draining: Promise<void> | null = null;
function stdoutDrain(): Promise<void> {
  // Checked first: a wait that resolved at once must not stay behind as the shared one.
  if (!process.stdout.writableNeedDrain || process.stdout.destroyed) return Promise.resolve();
  // One wait shared by every write that found the buffer full (text mode does not await each line).
  draining ??= new Promise<void>((ok) => {
    const done = () => {
      process.stdout.off('drain', done);
      process.stdout.off('close', done);
      draining = null;
      ok();
    };
    process.stdout.once('drain', done);
    process.stdout.once('close', done);
  });
  return draining;
}

/**
 * Runs the CLI as a process: arguments from `process.argv`, output to stdout/stderr, the exit code
 * set (dist/cli.js calls it when its warm entry cannot answer, src/cli/entry.ts).
 * @param boot how the bin starts analysis workers (its script and the bundle's V8 data), when it
 *   loaded this bundle
 */
export function cli(boot?: WorkerBoot): void {
  setWorkerBoot(boot);
  // A closed pipe (`prefix-lens analyze | head`) ends the output; a full disk is one line and exit 2 (stdoutError.ts).
  process.stdout.on('error', stdoutFailed);
  main(
    process.argv.slice(2),
    (s) => (process.stdout.write(`${s}\n`) ? undefined : stdoutDrain()),
    (s) => process.stderr.write(`${s}\n`),
    undefined,
    (b) => (process.stdout.write(b) ? undefined : stdoutDrain()),
  ).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`prefix-lens: ${(e as Error).stack ?? String(e)}\n`);
      process.exitCode = 2;
    },
  );
}

if (isAnalysisWorker()) workerMain();
else if (require.main === module) cli();
