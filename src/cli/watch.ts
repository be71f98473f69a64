/**
 * `prefix-lens analyze --watch`: the sessions' reports, then each new request as it lands.
 *
 * Each session is a LiveAnalysis (src/live/session.ts): an appended Pi request is judged from the
 * kept state, not by reading the file again. Changes are noticed through `fs.watch` on the
 * session files (and their folders, for a WAL or a replaced file), with a poll every second as a
 * fallback where file events are not delivered (network file systems).
 *
 * Text: the usual report per session, then one row per new request (with the session's id when
 * several are watched), a line for earlier requests whose verdict moved and one per diagnostic of
 * the appended lines (as the report lists them). `--json`: NDJSON, one event per line:
 * `{"event":"session","report":…}` at start and after a re-read,
 * `{"event":"request","session":id,"path":…,"request":…}`, `{"event":"revised",…,"requests":[…]}`,
 * `{"event":"diagnostic",…,"diagnostic":{"file","line","message","severity"}}`.
 */
import { watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import type { SessionRef } from '../hosts/registry.js';
import { LiveAnalysis, type LiveUpdate, type ResetCause } from '../live/session.js';
import { modelWidthOf, renderDiagnostic, renderRequest, renderSession, safe } from './text.js';
import { n } from '../report/reason.js';
import { jsonText } from '../sanitize.js';
import { plural } from '../plural.js';

/** Options of watchSessions. */
export interface WatchOptions {
  json: boolean;
  out: (line: string) => void;
  err: (line: string) => void;
  /** Ends the watch (the CLI: SIGINT/SIGTERM). */
  signal: AbortSignal;
  /** Fallback poll interval, ms (default 1000). */
  pollMs?: number;
}

/** bytes as "1,234 bytes", "1 byte". */
const bytes = (count: number | null): string => plural(count ?? 0, 'byte', { shown: n(count ?? 0) });

/**
 * The line printed when a watched session was read again: what happened to its file
 * (live/session.ts ResetCause) and what the report below it is.
 */
export function resetText(c: ResetCause | null): string {
  switch (c?.kind) {
    case 'deleted':
      return 'the file was deleted; nothing to read until it is written again';
    case 'created':
      return `the file was created again (${bytes(c.to)}); read`;
    case 'replaced':
      return `the file was replaced by another file (${bytes(c.from)} → ${bytes(c.to)}); read again`;
    case 'truncated':
      return `the file was truncated (${bytes(c.from)} → ${bytes(c.to)}); read again`;
    case 'grew':
      return `the file grew (${bytes(c.from)} → ${bytes(c.to)}); read again`;
    case 'changed':
      return 'the database changed; read again';
    case 'parent':
      return 'the parent rollout it was forked from changed; read again';
    default:
      return `the file was rewritten${c ? ` (${bytes(c.to)})` : ''}; read again`;
  }
}

/** Watches the sessions until `signal` aborts. @returns the exit code (0) */
export async function watchSessions(refs: SessionRef[], o: WatchOptions): Promise<number> {
  // One NDJSON event, its strings' DEL, C1 and bidi marks as \u escapes, as `analyze --json` writes them (the values parse back the same).
  const json = (event: object) => o.out(jsonText(JSON.stringify(event)));
  const lives: Array<{ live: LiveAnalysis; width: number }> = [];
  for (const ref of refs) {
    const live = await LiveAnalysis.open(ref);
    lives.push({ live, width: modelWidthOf(live.report.requests) });
    if (o.json) json({ event: 'session', report: live.report });
    else {
      if (lives.length > 1) o.out('');
      renderSession(live.report, o.out, true);
    }
  }
  if (!o.json) o.err(`prefix-lens: watching ${plural(refs.length, 'session')} for new requests (Ctrl-C to stop)`);

  const show = (l: { live: LiveAnalysis; width: number }, u: LiveUpdate) => {
    // The session's id and path without its report: after an append judged alone, the report (its
    // sums over every request) is built only when read, and only a reset prints it.
    const id = l.live.sessionId;
    const path = l.live.sessionPath;
    if (o.json) {
      if (u.change === 'reset') json({ event: 'session', report: u.report });
      else for (const r of u.added) json({ event: 'request', session: id, path, request: r });
      if (u.change !== 'reset' && u.revised.length) json({ event: 'revised', session: id, path, requests: u.revised });
      for (const d of u.diagnostics) json({ event: 'diagnostic', session: id, path, diagnostic: d });
      return;
    }
    if (u.change === 'reset') {
      const s = u.report;
      o.out('');
      if (u.cause?.kind === 'deleted') {
        // Its report is an empty one carrying the read error, under the file's name: the line says it all.
        o.out(`${l.live.ref.host} session ${safe(l.live.ref.id)}: ${resetText(u.cause)}`);
        return;
      }
      o.out(`${s.host} session ${safe(s.id)}: ${resetText(u.cause)}`);
      renderSession(s, o.out, true);
      l.width = modelWidthOf(s.requests);
      return;
    }
    if (!u.added.length && !u.revised.length && !u.diagnostics.length) return;
    const who = lives.length > 1 ? `${l.live.ref.host} ${safe(id)}` : null;
    if (who) o.out(`${who}:`);
    for (const r of u.added) renderRequest(r, l.width, o.out);
    if (u.revised.length) {
      o.out(`      re-judged with the new token estimate: ${u.revised.map((r) => `#${r.number} ${r.verdict}`).join(', ')}`);
    }
    for (const d of u.diagnostics) renderDiagnostic(d, o.out);
  };

  // One update at a time per session; a change noticed during an update runs it once more.
  const state = lives.map(() => ({ running: false, again: false }));
  const update = async (i: number) => {
    const st = state[i];
    if (st.running) {
      st.again = true;
      return;
    }
    st.running = true;
    try {
      do {
        st.again = false;
        show(lives[i], await lives[i].live.update());
      } while (st.again && !o.signal.aborted);
    } catch (e) {
      o.err(`prefix-lens: ${safe(lives[i].live.ref.path)}: ${safe((e as Error).message)}`);
    } finally {
      st.running = false;
    }
  };

  const watchers: FSWatcher[] = [];
  lives.forEach(({ live }, i) => {
    for (const p of new Set([live.ref.path, dirname(live.ref.path)])) {
      try {
        const w = watch(p, { persistent: true }, () => void update(i));
        w.on('error', () => w.close());
        watchers.push(w);
      } catch {
        // not watchable here: the poll below still notices changes
      }
    }
  });
  const poll = setInterval(() => lives.forEach((_, i) => void update(i)), o.pollMs ?? 1000);
  await new Promise<void>((resolve) => {
    if (o.signal.aborted) resolve();
    o.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  clearInterval(poll);
  for (const w of watchers) w.close();
  // Let an update in flight finish its output.
  while (state.some((s) => s.running)) await new Promise((r) => setTimeout(r, 10));
  return 0;
}
