/**
 * Result cache: the report entries of one session, stored per SessionRef outside the host's
 * folders (CLI: `$XDG_CACHE_HOME/prefix-lens`, default `~/.cache/prefix-lens`; the extension passes
 * its global storage folder). An unchanged session is never read again.
 *
 * An entry is valid only when its identity (identity.ts: format, version, code, rules, key, host,
 * size, mtime, head/tail SHA-256, OpenCode's row stamp, the capture folders' stamp) matches what
 * is on disk now. OpenCode sessions are identified by their `stamp` (row counts and latest update
 * times of the session's messages and parts), since the database's own size and mtime change with
 * every other session.
 * A corrupt, truncated, foreign or stale entry is ignored and rewritten; entries are written to a
 * temporary file and renamed into place, so a reader never sees half an entry.
 */
import { createWriteStream, mkdirSync } from 'node:fs';
import { rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { analyzeSession } from '../core/analyze.js';
import { defaultRules, type ProviderRules } from '../core/rules.js';
import { readLines } from '../hosts/lines.js';
import { openRef, type SessionRef } from '../hosts/registry.js';
import { sessionReport, type SessionReport } from '../report/json.js';
import { attachPhux } from '../report/phux.js';
import { releaseBetweenSessions } from '../memory.js';
import { entryFile, identityWithRules, rulesHash, sameIdentity, type Identity } from './identity.js';
import { cachedOutputAt } from './output.js';
import { analyzePiWithState, blockReport, continueReport, dropTail, loadTail, saveTail, type TailBody } from './tail.js';

export { defaultCacheDir, entryFile, sameIdentity, type Identity } from './identity.js';

/** The identity of a ref as it is on disk now (identity.ts); null when the file cannot be checked (then never cached). */
export function identityOf(ref: SessionRef, rules: ProviderRules): Promise<Identity | null> {
  return identityWithRules(ref, rulesHash(rules));
}

/** Options of analyzeRefCached. */
export interface CacheOptions {
  /** Folder of the entries (created when missing). */
  cacheDir: string;
  /** Provider rules to judge with (part of the entry's identity). Default: the bundled rules. */
  rules?: ProviderRules;
  /** Analysis of a ref on a miss; default: read it with its host's reader and analyze it here. */
  analyze?: (ref: SessionRef, rules: ProviderRules) => Promise<SessionReport[]>;
  /** Called with 'hit' or 'miss' (statistics, tests). */
  onResult?: (kind: 'hit' | 'miss', ref: SessionRef) => void;
  /**
   * Set when the caller stores the ref's `--json` output entry (output.ts) under the identity the
   * ref has now (the CLI's `analyze --json`): the reports are then not stored a second time as a
   * result entry (a second serialization of every request); `lookup` reads them from the output
   * entry.
   */
  reportsInOutput?: boolean;
  /**
   * Set when `analyze` reads a ref as `openRef(ref, { env })` and analyzes it with `rules` as
   * analyzeRefUncached does (the extension's worker): a Pi session without captured bodies under
   * `env` then gets a continuation state too (tail.ts), as with the default `analyze`.
   */
  continuable?: { env: NodeJS.ProcessEnv };
}

/** Reads and analyzes a ref in this thread (the cache's default `analyze`). */
export async function analyzeRefUncached(ref: SessionRef, rules: ProviderRules = defaultRules): Promise<SessionReport[]> {
  const reports = await readAndReport(ref, rules);
  // The sessions and their analyses are garbage now (only the reports are left): collected
  // before the reports are written, whose text is garbage too. Else V8 lets the heap grow over
  // them to a multiple of the live heap at the read's end (the 100 MiB bench session: ~120 MiB
  // live, then ~225 MiB used while writing).
  releaseBetweenSessions();
  return reports;
}

async function readAndReport(ref: SessionRef, rules: ProviderRules): Promise<SessionReport[]> {
  const sessions = await openRef(ref);
  // The reader's transcript objects are garbage now: collect before the analysis grows the heap.
  releaseBetweenSessions();
  return sessions.map((s) => attachPhux(sessionReport(analyzeSession(s, rules), rules), s));
}

/**
 * The report entries of a ref (one per session it holds), from the cache when the entry is
 * valid, else analyzed and stored. A cache folder that cannot be written only costs the caching
 * (the result is still returned).
 * @throws what `analyze` throws (readers do not throw for bad content)
 */
export async function analyzeRefCached(ref: SessionRef, opts: CacheOptions): Promise<SessionReport[]> {
  const rules = opts.rules ?? defaultRules;
  const id = await identityOf(ref, rules);
  const file = entryFile(opts.cacheDir, ref.key);
  const hit = id && (await lookup(file, id));
  if (hit) {
    opts.onResult?.('hit', ref);
    return hit;
  }
  opts.onResult?.('miss', ref);
  // A Pi session without captured bodies: continued from the state saved with the entry of the
  // bytes it grew from (tail.ts: only the appended lines read), else read in full saving one.
  const stateful = await continuableRef(ref, id, rules, opts);
  let withState: { reports: SessionReport[]; state: TailBody | null } | null = null;
  if (stateful && id) {
    const state = await loadTail(opts.cacheDir, ref.key);
    // The earlier requests' entries: the result entry saved with the state, or (after a `--json`
    // run that continued, which writes the output entry and the state) the output entry's.
    const saved = state && (await lookup(file, state.identity));
    const c = state && saved?.length === 1 ? await continueReport(ref, state, saved[0], id, { rules }) : null;
    if (c) withState = { reports: [c.report], state: c.state };
  }
  if (stateful && !withState) withState = await analyzePiWithState(ref, { rules });
  const reports = withState ? withState.reports : await (opts.analyze ?? analyzeRefUncached)(ref, rules);
  // The session and its analysis are garbage (the reports and the state are left): collected
  // before the entry and the output are written (see analyzeRefUncached).
  releaseBetweenSessions();
  // The file may have changed while it was read: store only under the identity seen before and after.
  const after = id && (await identityOf(ref, rules));
  if (id && after && sameIdentity(after, id)) {
    if (!opts.reportsInOutput) await store(file, id, reports);
    if (withState?.state) await saveTail(opts.cacheDir, ref.key, { ...withState.state, identity: id });
    else if (stateful) await dropTail(opts.cacheDir, ref.key);
  }
  return reports;
}

/** True when a ref's analysis may save and continue a state (tail.ts): a Pi file, no captured bodies, the plain analysis. */
async function continuableRef(ref: SessionRef, id: Identity | null, rules: ProviderRules, opts: CacheOptions): Promise<boolean> {
  if (ref.host !== 'pi' || !id || id.captures !== null || id.size === null) return false;
  if (!opts.analyze) return true;
  if (!opts.continuable) return false;
  // The caller's environment names the capture folders its analysis joins: none may hold bodies of this session.
  const own = await identityWithRules(ref, id.rules, opts.continuable.env);
  return own !== null && own.captures === null;
}

/**
 * The reports of a valid entry for `id`, or null (missing, corrupt, foreign, stale, cut short).
 * Layout (one JSON value per line, so neither reading nor writing needs a string of a whole
 * session): the identity with `sessions: n`; then per session a line
 * `{"keys":[…],"report":{…without requests},"requests":m}` followed by its m requests.
 * A stale entry is rejected after its first line. Without a valid result entry, the reports are
 * read from the output entry of `id` (reportsOfOutput), which `analyze --json` writes instead.
 */
async function lookup(file: string, id: Identity): Promise<SessionReport[] | null> {
  return (await lookupEntry(file, id)) ?? reportsOfOutput(file.replace(/\.json$/, '.out'), id);
}

async function lookupEntry(file: string, id: Identity): Promise<SessionReport[] | null> {
  try {
    const lines = readLines(file);
    const next = async (): Promise<unknown> => {
      const r = await lines.next();
      if (r.done || !r.value.eol) throw new Error('entry cut short');
      return JSON.parse(r.value.text);
    };
    try {
      const head = (await next()) as { sessions?: unknown };
      if (!sameIdentity(head, id) || typeof head.sessions !== 'number') return null;
      const out: SessionReport[] = [];
      for (let i = 0; i < head.sessions; i++) {
        const s = (await next()) as { keys?: unknown; report?: Record<string, unknown>; requests?: unknown };
        if (!Array.isArray(s.keys) || !s.report || typeof s.report !== 'object' || typeof s.requests !== 'number') return null;
        const requests: unknown[] = [];
        for (let j = 0; j < s.requests; j++) requests.push(await next());
        // The report's own key order (the JSON output follows it).
        const report: Record<string, unknown> = {};
        for (const k of s.keys as string[]) report[k] = k === 'requests' ? requests : s.report[k];
        out.push(report as unknown as SessionReport);
      }
      return (await lines.next()).done ? out : null;
    } finally {
      await lines.return(undefined);
    }
  } catch {
    return null; // missing or corrupt: rewritten by the next analysis
  }
}

/**
 * The reports an output entry (output.ts, in `file`) holds for identity `id`, or null (missing,
 * stale, not laid out as JsonReportWriter writes it): each block parsed request by request
 * (tail.ts blockReport), values as the result entry would hold them.
 */
async function reportsOfOutput(file: string, id: Identity): Promise<SessionReport[] | null> {
  const out = cachedOutputAt(file, id);
  if (!out) return null;
  const reports: SessionReport[] = [];
  for (let i = 0; i < out.blocks.length; i++) {
    const r = await blockReport(out, i, out.blocks[i].requests);
    if (!r) return null;
    reports.push(r);
  }
  return reports;
}

/**
 * The cached reports of a ref when its entry is valid, else null; never analyzes. Lets a caller
 * answer hits itself and send only misses elsewhere (the CLI's worker threads).
 */
export async function cachedReports(ref: SessionRef, opts: { cacheDir: string; rules?: ProviderRules }): Promise<SessionReport[] | null> {
  const id = await identityOf(ref, opts.rules ?? defaultRules);
  return id ? lookup(entryFile(opts.cacheDir, ref.key), id) : null;
}

async function store(file: string, id: Identity, reports: SessionReport[]): Promise<void> {
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    mkdirSync(join(file, '..'), { recursive: true });
    const out = createWriteStream(tmp);
    const failed = new Promise<never>((_, reject) => out.once('error', reject));
    failed.catch(() => {});
    const write = (v: unknown) => Promise.race([failed, new Promise<void>((ok) => (out.write(`${JSON.stringify(v)}\n`) ? ok() : out.once('drain', ok)))]);
    await write({ ...id, sessions: reports.length });
    for (const r of reports) {
      const { requests, ...rest } = r;
      await write({ keys: Object.keys(r), report: rest, requests: requests.length });
      for (const q of requests) await write(q);
    }
    await Promise.race([failed, new Promise<void>((ok) => out.end(ok))]);
    await rename(tmp, file);
  } catch {
    await unlink(tmp).catch(() => {});
  }
}
