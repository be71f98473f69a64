/**
 * Persona snapshot verdicts (BotHarness ADR-0060, amended by ADR-0134; reference/botharness.md A.1,
 * A.2): is the persona section of every request's system prompt byte-identical to the Session's
 * snapshot, and when it is not, was the change sanctioned?
 *
 *  - `taken`: the first request whose system prompt carries the persona (the snapshot's first assembly);
 *  - `stable`: the system prompt was re-sent (header `resume`/`change`, a `system/message`), or a
 *    persona file was edited (Inbox memory change naming `SOUL.md`/`PERSONA.md`/`MEMORY.md`), and
 *    the persona section is byte-identical;
 *  - `refreshed`: the section changed at the first request after a compaction (`compaction/end`):
 *    `refreshPersonaSnapshot`, the one sanctioned point (issue #326);
 *  - `reowned`: the section changed outside a compaction, the ownership row was repaired
 *    (`provenance = 'repair'`) and the new section is the row's snapshot, taken between the two
 *    requests: `repair()` cleared the snapshot and the next assembly re-baselined it;
 *  - `memory-inbox`: a memory change reached the model as a user message at the bottom (ADR-0092;
 *    cache-neutral);
 *  - `memory-head`: the section changed outside a compaction inside its `## Core Memory (MEMORY.md)`
 *    part: a memory change rendered into the head (a break; cause `persona-drift`);
 *  - `drift`: any other change of the section outside a compaction (cause `persona-drift`).
 *
 * Where the section is: the snapshot body is found verbatim in one request's system prompt (the
 * anchor), and its bounds are carried to every other request through the changed region between
 * consecutive system prompts (common prefix and suffix). Pure: no I/O.
 */
import { createHash } from 'node:crypto';

/** The persona snapshot on the Session's `session_ownership` row. */
export interface PersonaSnapshot {
  /** `persona_snapshot`: null = none taken yet; '' = a real, empty snapshot. */
  body: string | null;
  /** `persona_snapshot_at` as stored (ISO 8601), or null. */
  takenAt: string | null;
  botSlug: string | null;
  /** `provenance` (created, fork, subagent, repair, legacy), or null. */
  provenance: string | null;
}

/** A memory change BotHarness admitted to the Bot Inbox (`inbox_admissions.reason = 'memory-change'`). */
export interface MemoryChange {
  sourceEventId: string;
  /** `observed_at` (ms since epoch), or null. */
  observedAtMs: number | null;
  /** Files the change names (from the source event's payload or body). */
  paths: string[];
}

/** What one request shows of the persona. */
export interface PersonaRequest {
  /** Request index (1-based send order). */
  index: number;
  /** Line of the request in the log. */
  line: number;
  timeMs: number | null;
  /** The system prompt in effect for this request, or null when none was recorded. */
  system: string | null;
  /** Reason of a `request/header` or `system/message` logged since the previous request, else null. */
  headerReason: string | null;
  /** Line of a `compaction/end` logged since the previous request, else null. */
  compactionLine: number | null;
  /** Inbox memory-change notices appended at the bottom since the previous request. */
  inbox: Array<{ line: number; sourceEventId: string; paths: string[] }>;
}

/** Everything the persona verdicts need, as the reader found it. */
export interface PersonaEvidence {
  /** The ownership row's snapshot; null when the Session has no row (or no database was found). */
  snapshot: PersonaSnapshot | null;
  /** False when the database predates the snapshot columns (generation < 9). */
  snapshotColumns: boolean;
  requests: PersonaRequest[];
  memoryChanges: MemoryChange[];
}

/** Persona event kinds, in the Timeline's persona lane. */
export type PersonaEventKind = 'taken' | 'stable' | 'refreshed' | 'drift' | 'reowned' | 'memory-inbox' | 'memory-head';

/** One persona event at a request. */
export interface PersonaEvent {
  /** Request (1-based index) the event belongs to. */
  request: number;
  /** Log line of the request (or of the Inbox notice for `memory-inbox`). */
  line: number;
  kind: PersonaEventKind;
  detail: string;
  /** UTF-8 byte offset in the request's system prompt where the change (or the section) starts. */
  offset?: number;
  /** Changed bytes of the section before and after (excerpt: the differing run with context). */
  before?: string;
  after?: string;
  /** Characters into `before` and `after` where they start to differ. */
  excerptAt?: number;
  /** 12-hex SHA-256 of the persona section in effect after the event; null when none (memory-inbox). */
  hash: string | null;
}

/** Per-session persona result (the view model's `persona` field). */
export interface PersonaReport {
  snapshot: {
    /** none = NULL (no snapshot yet); empty = a real empty snapshot; body; unknown = no row or no columns. */
    state: 'none' | 'empty' | 'body' | 'unknown';
    /** 12-hex SHA-256 of the snapshot body (UTF-8), null for none/unknown. */
    hash: string | null;
    takenAt: string | null;
    botSlug: string | null;
    /** UTF-8 bytes of the body, null for none/unknown. */
    bytes: number | null;
  };
  /** Summary: the worst event (drift > memory-head > reowned > refreshed > stable). */
  verdict: 'stable' | 'refreshed' | 'reowned' | 'drift' | 'none' | 'unknown';
  events: PersonaEvent[];
  notes: string[];
}

/** 12-hex SHA-256 of a text's UTF-8 bytes (the shown form of a hash, like prefix hashes). */
export function shortSha(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 12);
}

/** Files whose edit changes the persona body (ADR-0134: SOUL.md, formerly PERSONA.md, and MEMORY.md). */
const PERSONA_FILES = /(^|\/)(SOUL|PERSONA|MEMORY)\.md$/;
/** The `renderStandingPrompt` header of the MEMORY.md part (packages/core/src/memory/soul.ts). */
const CORE_MEMORY = '## Core Memory (MEMORY.md)';
/** Characters of context on each side of a changed run in before/after excerpts. */
const CONTEXT = 40;
/** Longest excerpt (characters) of one side. */
const EXCERPT_MAX = 400;

/** Characters of a section's start looked for again when a change begins before it. */
const LEAD_CHARS = 24;

type Bounds = [number, number];

/** Lengths of the common prefix and suffix of two strings (not overlapping). */
function commonEnds(a: string, b: string): { p: number; q: number } {
  const n = Math.min(a.length, b.length);
  let p = 0;
  while (p < n && a.charCodeAt(p) === b.charCodeAt(p)) p++;
  let q = 0;
  while (q < n - p && a.charCodeAt(a.length - 1 - q) === b.charCodeAt(b.length - 1 - q)) q++;
  return { p, q };
}

/** Section bounds in `to`, given bounds in `from` (the section is carried over what changed). */
function carry(from: string, to: string, [s, e]: Bounds): Bounds {
  if (from === to) return [s, e];
  const { p, q } = commonEnds(from, to);
  const d = to.length - from.length;
  if (from.length - q <= s) return [s + d, e + d]; // change before the section
  if (p >= e) return [s, e]; // change after it
  // Changes on both sides of an unchanged section make one changed run that covers it: the section
  // is unchanged when its exact text is still there.
  const same = e > s ? to.indexOf(from.slice(s, e), Math.min(s, p)) : -1;
  if (same >= 0) return [same, same + (e - s)];
  const end = to.length - Math.min(q, from.length - e);
  // A change that starts before the section (a re-owned Session's role prompt names the new bot):
  // the section still starts where its first characters (e.g. `## Soul (`) are found again.
  const lead = from.slice(s, Math.min(e, s + LEAD_CHARS));
  const again = p < s && lead ? to.indexOf(lead, p) : -1;
  return [again >= 0 && again <= end ? again : Math.min(s, p), end];
}

const utf8Len = (s: string) => Buffer.byteLength(s, 'utf8');

/** Excerpts of the differing run of two section texts, and where it starts (characters into them). */
function excerpts(a: string, b: string): { at: number; before: string; after: string; excerptAt: number } {
  const { p, q } = commonEnds(a, b);
  const from = Math.max(0, p - CONTEXT);
  const cut = (s: string, end: number) => {
    const t = s.slice(from, Math.min(s.length, end + CONTEXT));
    return t.length > EXCERPT_MAX ? `${t.slice(0, EXCERPT_MAX)}…` : t;
  };
  return { at: p, before: cut(a, a.length - q), after: cut(b, b.length - q), excerptAt: p - from };
}

/**
 * The persona verdicts of one session.
 * @returns snapshot summary, events in request order, and notes (e.g. the snapshot was found in no request)
 */
export function judgePersona(ev: PersonaEvidence): PersonaReport {
  const snap = ev.snapshot;
  const state: PersonaReport['snapshot']['state'] =
    !ev.snapshotColumns || !snap ? 'unknown' : snap.body === null ? 'none' : snap.body === '' ? 'empty' : 'body';
  const report: PersonaReport = {
    snapshot: {
      state,
      hash: snap?.body != null && ev.snapshotColumns ? shortSha(snap.body) : null,
      takenAt: snap?.takenAt ?? null,
      botSlug: snap?.botSlug ?? null,
      bytes: snap?.body != null && ev.snapshotColumns ? utf8Len(snap.body) : null,
    },
    verdict: state === 'unknown' ? 'unknown' : 'none',
    events: [],
    notes: [],
  };
  const reqs = ev.requests.filter((r) => r.system !== null);
  if (!ev.snapshotColumns) report.notes.push('botharness.db predates the persona snapshot columns (schema generation < 9): no snapshot to compare with');
  else if (!snap) report.notes.push('no session_ownership row for this session: not a BotHarness-owned Session, or no botharness.db found');
  else if (snap.body === null) report.notes.push('no persona snapshot taken yet (persona_snapshot is NULL): the Session contributes no persona');

  const push = (e: PersonaEvent) => report.events.push(e);
  inboxEvents(ev, push);

  const body = state === 'body' ? snap!.body! : null;
  if (state === 'empty' && reqs.length) {
    push({ request: reqs[0].index, line: reqs[0].line, kind: 'taken', detail: `empty snapshot taken${snap!.takenAt ? ` at ${snap!.takenAt}` : ''}: the bot has no SOUL.md/PERSONA.md, so no persona section`, hash: shortSha('') });
    report.verdict = 'stable';
  }
  if (body === null || !reqs.length) return finish(report);

  const anchor = reqs.findIndex((r) => r.system!.includes(body));
  if (anchor < 0) {
    report.notes.push(`the snapshot (${shortSha(body)}, ${utf8Len(body)} bytes) is in no request's system prompt: taken after the last request, or the prompt never carried it`);
    report.verdict = 'unknown';
    return finish(report);
  }
  // Section bounds (characters) in every request's system prompt, carried from the anchor.
  const bounds: Bounds[] = new Array(reqs.length);
  const at = reqs[anchor].system!.indexOf(body);
  bounds[anchor] = [at, at + body.length];
  for (let i = anchor + 1; i < reqs.length; i++) bounds[i] = carry(reqs[i - 1].system!, reqs[i].system!, bounds[i - 1]);
  for (let i = anchor - 1; i >= 0; i--) bounds[i] = carry(reqs[i + 1].system!, reqs[i].system!, bounds[i + 1]);
  const section = (i: number) => reqs[i].system!.slice(bounds[i][0], bounds[i][1]);
  const offsetOf = (i: number, chars: number) => utf8Len(reqs[i].system!.slice(0, chars));

  const first = section(0);
  push({
    request: reqs[0].index,
    line: reqs[0].line,
    kind: 'taken',
    detail: `persona snapshot in the system prompt (${utf8Len(first)} bytes)${first === body && snap!.takenAt ? `, taken at ${snap!.takenAt}` : ''}`,
    offset: offsetOf(0, bounds[0][0]),
    hash: shortSha(first),
  });
  let verdict = 'stable' as PersonaReport['verdict'];
  const rank = { stable: 0, refreshed: 1, reowned: 2, drift: 3 } as const;
  const worse = (v: 'refreshed' | 'reowned' | 'drift') => {
    if (rank[v] > rank[verdict as keyof typeof rank]) verdict = v;
  };
  let lastEdit = 0; // memory changes already reported as stable
  for (let i = 1; i < reqs.length; i++) {
    const r = reqs[i];
    const prev = section(i - 1);
    const now = section(i);
    if (prev !== now) {
      const x = excerpts(prev, now);
      const at = { request: r.index, line: r.line };
      const bytes = { offset: offsetOf(i, bounds[i][0] + x.at), before: x.before, after: x.after, excerptAt: x.excerptAt, hash: shortSha(now) };
      const takenAtMs = snap!.takenAt ? Date.parse(snap!.takenAt) : NaN;
      const prevTime = reqs[i - 1].timeMs;
      const reowned =
        snap!.provenance === 'repair' && now === body && Number.isFinite(takenAtMs) &&
        (prevTime === null || takenAtMs >= prevTime) && (r.timeMs === null || takenAtMs <= r.timeMs);
      const memoryAt = prev.indexOf(CORE_MEMORY);
      if (r.compactionLine !== null) {
        push({ ...at, kind: 'refreshed', detail: `persona snapshot refreshed at the compaction boundary (compaction/end line ${r.compactionLine}): sanctioned`, ...bytes });
        worse('refreshed');
      } else if (reowned) {
        push({ ...at, kind: 'reowned', detail: `Session re-owned${snap!.botSlug ? ` to bot ${snap!.botSlug}` : ''}: snapshot cleared and re-baselined at ${snap!.takenAt}`, ...bytes });
        worse('reowned');
      } else if (memoryAt >= 0 && x.at >= memoryAt + CORE_MEMORY.length) {
        push({ ...at, kind: 'memory-head', detail: 'a MEMORY.md change was rendered into the system prompt outside a compaction (persona-drift): it re-bills the cached head; ADR-0092 delivers it through the Inbox', ...bytes });
        worse('drift');
      } else {
        push({ ...at, kind: 'drift', detail: `persona section changed outside a compaction (persona-drift): ${utf8Len(prev)} → ${utf8Len(now)} bytes`, ...bytes });
        worse('drift');
      }
      continue;
    }
    const edits = ev.memoryChanges.filter(
      (m, k) =>
        k >= lastEdit && m.paths.some((p) => PERSONA_FILES.test(p)) && m.observedAtMs !== null &&
        // edits after the snapshot's first assembly and up to this request
        (reqs[0].timeMs === null || m.observedAtMs >= reqs[0].timeMs) && (r.timeMs === null || m.observedAtMs <= r.timeMs),
    );
    if (edits.length) lastEdit = ev.memoryChanges.indexOf(edits[edits.length - 1]) + 1;
    if (r.headerReason || edits.length) {
      const why = [
        r.headerReason ? `system prompt re-sent (${r.headerReason})${reqs[i - 1].system !== r.system ? ', changed outside the persona section' : ''}` : '',
        edits.length ? `${[...new Set(edits.flatMap((m) => m.paths.filter((p) => PERSONA_FILES.test(p))))].join(', ')} edited (source event ${edits.map((m) => m.sourceEventId).join(', ')})` : '',
      ].filter(Boolean);
      push({ request: r.index, line: r.line, kind: 'stable', detail: `${why.join('; ')}: persona section byte-identical to the snapshot`, offset: offsetOf(i, bounds[i][0]), hash: shortSha(now) });
    }
  }
  report.verdict = verdict;
  if (verdict !== 'drift' && section(reqs.length - 1) !== body) report.notes.push(`the last request's persona section (${shortSha(section(reqs.length - 1))}) is not the stored snapshot (${shortSha(body)}): refreshed or re-owned after the last request`);
  return finish(report);
}

/** `memory-inbox` events: memory changes delivered at the bottom (cache-neutral). */
function inboxEvents(ev: PersonaEvidence, push: (e: PersonaEvent) => void): void {
  for (const r of ev.requests) {
    for (const n of r.inbox) {
      push({ request: r.index, line: n.line, kind: 'memory-inbox', detail: `memory change delivered through the Bot Inbox at the bottom of the context (source event ${n.sourceEventId}${n.paths.length ? `: ${n.paths.join(', ')}` : ''}): cache-neutral`, hash: null });
    }
  }
}

/** Events in request order (stable: inbox notices of a request before its own verdict). */
function finish(report: PersonaReport): PersonaReport {
  report.events.sort((a, b) => a.request - b.request || (a.kind === 'memory-inbox' ? -1 : 0) - (b.kind === 'memory-inbox' ? -1 : 0));
  return report;
}

/**
 * The `persona-drift` cause of each request that has one: request index (1-based) → its first
 * drift (or memory-head) event in event order. One pass over the events (a lookup per request
 * in the event list was quadratic in the session's length).
 */
export function personaDrifts(report: PersonaReport): Map<number, PersonaEvent> {
  const out = new Map<number, PersonaEvent>();
  for (const e of report.events) if ((e.kind === 'drift' || e.kind === 'memory-head') && !out.has(e.request)) out.set(e.request, e);
  return out;
}
