/**
 * Worker-thread entry (bundled to dist/worker.js): discovery, reading and analysis run here, off
 * the extension host's thread, so a 100 MB session never blocks it. The extension terminates the
 * worker to cancel. Same pipeline as the CLI (`buildReport` in src/cli/main.ts):
 * registry → reader → analyzeSession → sessionReport → attachPhux.
 */
import { parentPort } from 'node:worker_threads';
import { analyzeSession } from '../core/analyze.js';
import { discoverSessions, findSessions, HOSTS, hostOf, openRef, releaseReaders, recognizeFile, resolveArg, watchRootsAdding, type DiscoverOptions, type SessionRef } from '../hosts/registry.js';
import { analyzeRefCached } from '../cache/results.js';
import { sessionReport, type SessionReport } from '../report/json.js';
import { attachPhux } from '../report/phux.js';
import { LiveAnalysis } from '../live/session.js';
import { stepOf } from './livePatch.js';
import { rulesWithOverrides } from './rules.js';
import type { RequestComparisonText, WorkerRequest, WorkerResponse } from './workerProtocol.js';
import { compareRequests } from '../report/requestText.js';
import { familyFor } from '../core/rules.js';
import type { Session } from '../core/model.js';

/**
 * Every host's default locations, plus the configured folders of each host (settings add to the
 * defaults; the registry's `paths` would replace them). Deduplicated by key, newest first.
 * `warnings`: what the walks left out (folders too deep) and configured folders that could not be
 * read (missing, not a folder, no permission), one sentence each: the rest is still listed.
 */
async function discover(opts: DiscoverOptions): Promise<{ refs: SessionRef[]; warnings: string[] }> {
  const warnings: string[] = [];
  const onWarning = (m: string) => warnings.push(m);
  const refs = await discoverSessions({ env: opts.env, home: opts.home, onWarning });
  for (const [id, paths] of Object.entries(opts.paths ?? {})) {
    for (const p of paths ?? []) {
      refs.push(...(await findSessions(p, [hostOf(id)], onWarning).catch((e: Error) => (warnings.push(`folder configured for ${hostOf(id).label}: ${e.message}`), []))));
    }
  }
  const seen = new Set<string>();
  return { refs: refs.filter((r) => !seen.has(r.key) && seen.add(r.key)).sort((a, b) => b.mtimeMs - a.mtimeMs || (a.key < b.key ? -1 : 1)), warnings };
}

/**
 * Followed Pi sessions (op `live`) by panel id: the session's key, its LiveAnalysis and the
 * overrides it was opened with (as JSON). `owed`: an `analyze` of the same session took a change
 * from it (the Sessions view summarizing the session a panel follows), so that panel's next step
 * is the whole report, not a patch.
 */
const followed = new Map<string, { key: string; live: LiveAnalysis; overrides: string; owed: boolean }>();

async function handle(msg: WorkerRequest): Promise<WorkerResponse> {
  const t0 = performance.now();
  const took = () => Math.round(performance.now() - t0);
  if (msg.op === 'discover') {
    const { refs, warnings } = await discover(msg.opts);
    const hosts = HOSTS.map((h) => ({ id: h.id, label: h.label }));
    const watchRoots = watchRootsAdding(msg.opts);
    return { id: msg.id, ok: true, op: 'discover', refs, hosts, watchRoots, warnings, ms: took() };
  }
  if (msg.op === 'resolve') return { id: msg.id, ok: true, op: 'resolve', refs: await resolveArg(msg.path, msg.opts), ms: took() };
  if (msg.op === 'diagnose') {
    const ref = msg.ref ?? (await recognizeFile(msg.path)).find((x) => x.path === msg.path) ?? null;
    const sessions = ref ? await analyze({ id: msg.id, op: 'analyze', ref, env: msg.env, overrides: msg.overrides, cacheDir: msg.cacheDir }) : [];
    return { id: msg.id, ok: true, op: 'diagnose', ref, sessions, ms: took() };
  }
  if (msg.op === 'compare') return { id: msg.id, ok: true, op: 'compare', comparison: await compare(msg), ms: took() };
  if (msg.op === 'live-close') {
    followed.delete(msg.panel);
    return { id: msg.id, ok: true, op: 'live-close', ms: took() };
  }
  if (msg.op === 'live') {
    if (msg.ref.host !== 'pi') {
      // Read again as it is now; the cache answers while the ref's identity (OpenCode: its row stamp) is unchanged.
      const [full] = await analyze({ id: msg.id, op: 'analyze', ref: msg.ref, env: msg.env, overrides: msg.overrides, cacheDir: msg.cacheDir });
      return { id: msg.id, ok: true, op: 'live', opened: false, full: full ?? null, patch: null, ms: took() } as WorkerResponse;
    }
    const overrides = JSON.stringify(msg.overrides);
    const have = followed.get(msg.panel);
    try {
      if (have && have.overrides === overrides && have.key === msg.ref.key) {
        const step = await have.live.update().then(stepOf, (e: unknown) => {
          // Whatever state it was left in, the next call reads the session afresh.
          followed.delete(msg.panel);
          throw e;
        });
        const owed = have.owed;
        have.owed = false;
        if (owed) return { id: msg.id, ok: true, op: 'live', opened: false, full: have.live.report, patch: null, ms: took() };
        return { id: msg.id, ok: true, op: 'live', opened: false, ...step, ms: took() };
      }
      followed.delete(msg.panel);
      const live = await LiveAnalysis.open(msg.ref, { rules: rulesWithOverrides(msg.overrides) });
      followed.set(msg.panel, { key: msg.ref.key, live, overrides, owed: false });
      return { id: msg.id, ok: true, op: 'live', opened: true, full: live.report, patch: null, ms: took() };
    } finally {
      releaseReaders();
    }
  }
  return { id: msg.id, ok: true, op: 'analyze', sessions: await analyze(msg), ms: took() };
}

/**
 * A `compare` job: from the session a panel follows when its two requests still have the prefix
 * hashes the user saw, else read afresh.
 * @throws Error when the session or either request is not in it, or its requests changed since the report
 */
async function compare(msg: Extract<WorkerRequest, { op: 'compare' }>): Promise<RequestComparisonText> {
  const pick = (sessions: Session[]) => {
    const s = sessions.find((x) => x.id === msg.sessionId);
    const at = (i: number) => s?.requests.find((r) => r.index === i);
    const [base, req] = [at(msg.base), at(msg.index)];
    const fits = base && req && (base.tail?.shortHash ?? null) === msg.hashes.base && (req.tail?.shortHash ?? null) === msg.hashes.index;
    return { s, base, req, fits };
  };
  const panel = msg.requestsDir ? undefined : [...followed.values()].find((f) => f.key === msg.ref.key);
  let got = panel ? pick([panel.live.session]) : undefined;
  if (!got?.fits) {
    try {
      got = pick(await openRef(msg.ref, { env: msg.env, requestsDir: msg.requestsDir }));
    } finally {
      releaseReaders();
    }
  }
  const { s, base, req, fits } = got;
  if (!s) throw new Error(`session ${msg.sessionId} is not in ${msg.ref.path}`);
  // Named by their numbers (core/numbering.ts) where the report gave them; the indices are positions.
  const [baseName, indexName] = [msg.numbers?.base ?? String(msg.base), msg.numbers?.index ?? String(msg.index)];
  if (!base || !req) throw new Error(`request #${!base ? baseName : indexName} is not in session ${msg.sessionId}`);
  if (!fits) throw new Error(`requests #${baseName} and #${indexName} of ${msg.sessionId} changed since the report was made (the file was rewritten, or a captured body was joined): open the Timeline again`);
  const c = compareRequests(base, req, s.title ?? s.id, familyFor(req.model, req.api).renderOrder);
  return { base: { text: c.base.text, changeAt: c.base.changeAt }, request: { text: c.request.text, changeAt: c.request.changeAt }, difference: c.difference };
}

/** An `analyze` job: from the live analysis of a panel following the session, else through the result cache. */
async function analyze(msg: Extract<WorkerRequest, { op: 'analyze' }>): Promise<SessionReport[]> {
  // A session a panel follows is summarized from its live analysis (the same results; no second full read).
  const overrides = JSON.stringify(msg.overrides);
  const panel = msg.requestsDir ? undefined : [...followed].find(([, f]) => f.key === msg.ref.key && f.overrides === overrides);
  if (panel) {
    const [id, have] = panel;
    try {
      const u = await have.live.update();
      if (u.change !== 'unchanged' || u.added.length || u.revised.length) have.owed = true;
      return [have.live.report];
    } catch {
      followed.delete(id);
    } finally {
      releaseReaders();
    }
  }
  const rules = rulesWithOverrides(msg.overrides);
  const read = async (ref: SessionRef, r: typeof rules): Promise<SessionReport[]> => {
    const sessions = await openRef(ref, { env: msg.env, requestsDir: msg.requestsDir });
    return sessions.map((s) => attachPhux(sessionReport(analyzeSession(s, r), r), s));
  };
  try {
    // The shared result cache (src/cache/results.ts, as the CLI uses it) unless wire bodies are given;
    // `read` is the plain one (openRef with msg.env), so a grown Pi session continues from its saved state.
    return msg.cacheDir && !msg.requestsDir ? await analyzeRefCached(msg.ref, { cacheDir: msg.cacheDir, rules, analyze: read, continuable: { env: msg.env } }) : await read(msg.ref, rules);
  } finally {
    // A database stays open between reads only within one job: the next job sees its newest rows.
    releaseReaders();
  }
}

parentPort?.on('message', (msg: WorkerRequest) => {
  handle(msg).then(
    (res) => parentPort?.postMessage(res),
    (e: unknown) => parentPort?.postMessage({ id: msg.id, ok: false, error: e instanceof Error ? e.message : String(e) } satisfies WorkerResponse),
  );
});
