/**
 * Plain-text rendering of the report for the terminal. Transcript strings are untrusted: control
 * characters (including ESC, so no terminal escape sequences get through) are replaced.
 */
import type { PersonaReport } from '../core/persona.js';
import type { PhuxSessionJson } from '../phux/stream.js';
import { plural } from '../plural.js';
import type { DiagnosticReport, Report, RequestReport, SessionReport } from '../report/json.js';
import { agreementText, hostMissText } from '../report/hostmiss.js';
import { numberAt } from '../report/numbers.js';
import type { Diagnostic } from '../core/model.js';
import { safe } from '../sanitize.js';

/** One cell of untrusted text (src/sanitize.ts, the one sanitizer): control characters made visible, one line. */
export { safe };

/**
 * A diagnostic as one line of text: `file:line: message`, or `file: message` for one of no line
 * (line 0: a database, a folder, a whole file), both made visible (safe).
 */
export const diagnosticText = (d: Pick<Diagnostic, 'file' | 'line' | 'message'>): string => `${safe(d.file)}${d.line > 0 ? `:${d.line}` : ''}: ${safe(d.message)}`;

/**
 * A command-line parser's error (node:util parseArgs) as one line for stderr: its message made
 * visible (safe) with its line breaks joined by spaces (parseArgs words some errors, e.g. an
 * option value that starts with a dash, over three lines).
 */
export const argsErrorText = (e: unknown): string => safe(String(e instanceof Error ? e.message : e).replace(/\s*\n\s*/g, ' '));

function pad(s: string, n: number, right = false): string {
  const t = s.length > n ? `${s.slice(0, n - 1)}…` : s;
  return right ? t.padStart(n) : t.padEnd(n);
}

function tokens(n: number | null | undefined): string {
  if (n === null || n === undefined) return '-';
  return n >= 10000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

/**
 * USD as the cost column and the check lines show it, as the timeline does (media/format.ts):
 * `$0`, `$0.00558`, `$0.06628` (five places below $0.1), `$1.25`; `-` = prices unknown.
 */
export function usd(n: number | null): string {
  if (n === null) return '-';
  if (n === 0) return '$0';
  return n < 0.1 ? `$${n.toFixed(5)}` : `$${n.toFixed(2)}`;
}

/**
 * The days a session's requests were sent on, for its header: ` on 2026-12-01 (UTC)`, ` from
 * 2026-12-01 to 2026-12-03 (UTC)`; '' when no request has a time. ISO times, so text order is time order.
 */
function daysText(requests: RequestReport[]): string {
  const days = requests.flatMap((r) => (r.time ? [r.time.slice(0, 10)] : [])).sort();
  if (!days.length) return '';
  const [first, last] = [safe(days[0]), safe(days[days.length - 1])];
  return first === last ? ` on ${first} (UTC)` : ` from ${first} to ${last} (UTC)`;
}

function time(iso: string | null): string {
  return iso ? iso.slice(11, 19) : '--:--:--';
}

/** Where the break is, in words: the item within its segment and the byte offset. */
function breakText(r: RequestReport): string {
  if (!r.break) return '';
  const b = r.break;
  if (b.segment === 'params') return `params: ${b.path}`;
  if (b.segment === 'head') return 'head (opaque)';
  const item = b.segment === 'messages' ? 'message' : b.segment === 'tools' ? 'tool' : 'system';
  return `${item} ${b.blockIndex} @${b.byteOffset}`;
}

function causeText(r: RequestReport): string {
  return r.causes.map((c) => `${c.kind}${c.certainty === 'likely' ? '?' : ''}: ${c.detail}`).join('; ');
}

const HEAD = ['#', 'time', 'model', 'read', 'write', 'uncached', 'prefix', 'verdict', 'break', 'cost', 'cause'];

/** The model column's text: the id, with the kind for requests besides the agent loop. */
function modelText(r: RequestReport): string {
  return safe(r.model) + (r.kind === 'agent' ? '' : ` (${r.kind})`);
}

/** Width of the model column for these requests: the longest model text, within 22..40. */
export function modelWidthOf(requests: RequestReport[]): number {
  return Math.min(40, Math.max(22, ...requests.map((r) => modelText(r).length)));
}

/** The header row of the request table. */
export function headerRow(modelWidth: number): string {
  return [pad(HEAD[0], 4, true), pad(HEAD[1], 8), pad(HEAD[2], modelWidth), pad(HEAD[3], 7, true), pad(HEAD[4], 7, true), pad(HEAD[5], 8, true), pad(HEAD[6], 12), pad(HEAD[7], 16), pad(HEAD[8], 22), pad(HEAD[9], 9, true), HEAD[10]].join(' ');
}

/** One request: its row, then the break's location and bytes and the error, when any. */
export function renderRequest(r: RequestReport, modelWidth: number, out: (line: string) => void): void {
  const u = r.usage;
  out(
    [
      pad(r.number, 4, true),
      pad(time(r.time), 8),
      pad(modelText(r), modelWidth),
      pad(tokens(u?.cacheRead), 7, true),
      pad(tokens(u?.cacheWrite), 7, true),
      pad(tokens(u?.uncached), 8, true),
      pad(r.prefixHash ?? '-', 12),
      pad(r.verdict + (r.error ? '!' : ''), 16),
      pad(safe(breakText(r)), 22),
      pad(usd(r.costUSD), 9, true),
      safe(causeText(r)),
    ].join(' '),
  );
  if (r.break && r.break.segment !== 'params') {
    const vs = r.matchedNumber ? ` (vs #${r.matchedNumber})` : '';
    const reads =
      r.observedRead !== null && r.expectedRead !== null ? `; read ${r.observedRead}, ~${r.expectedRead} expected up to the change` : '';
    const lost = r.lostTokens ? `; ~${r.lostTokens} tokens re-billed` : '';
    out(`${' '.repeat(14)}at ${safe(r.break.path)}${vs}${reads}${lost}`);
    if (r.break.before || r.break.after) {
      out(`${' '.repeat(14)}before: ${safe(r.break.before)}`);
      out(`${' '.repeat(14)}after:  ${safe(r.break.after)}`);
    }
  }
  if (r.systemDeltas) renderDeltas(r, out);
  // The host's own verdict, where it says more than "no miss, and we agree".
  const h = r.hostMiss;
  if (h && (h.type !== null || h.agrees === false)) out(`${' '.repeat(14)}${safe(h.host)} says: ${safe(hostMissText(h))}; ${agreementText(h.agrees)}${h.agrees === false ? ` with our ${r.verdict}` : ''}`);
  if (r.error) out(`${' '.repeat(14)}error: ${safe(r.error).slice(0, 160)}`);
}

/** What keeping system deltas in place saves (or costs, when the other shape re-bills less). */
function savedText(tokens: number): string {
  return tokens >= 0 ? `kept in place saves ~${tokens} tokens` : `kept in place re-bills ~${-tokens} tokens more`;
}

/** A shape's re-billed tokens and cost, e.g. `~192 tokens ($0.00005)`. */
function shapeText(c: { rebilledTokens: number; costUSD: number | null }): string {
  return `~${c.rebilledTokens} tokens${c.costUSD ? ` (${usd(c.costUSD)})` : ''}`;
}

/** The system deltas a request first carries, then what they re-bill in each shape. */
function renderDeltas(r: RequestReport, out: (line: string) => void): void {
  const d = r.systemDeltas!;
  const indent = ' '.repeat(14);
  for (const x of d.deltas) {
    const secs = x.sections.map((s) => `${s.name} ${s.change}`);
    const tools = [...x.toolsAdded.map((t) => `+${t}`), ...x.toolsRemoved.map((t) => `-${t}`)];
    const what = [secs.length ? `section ${secs.join(', ')}` : '', tools.length ? `tools ${tools.join(' ')}` : ''].filter(Boolean).join('; ') || 'no section changed';
    out(`${indent}system delta (line ${x.line}, ${safe(x.id)}): ${safe(what)}${x.cause ? ` — ${x.cause.kind}: ${safe(x.cause.detail)}` : ''}`);
  }
  const sent = (shape: string) => (d.used === shape ? (d.known ? ' [sent]' : ' [sent: route unknown]') : '');
  const at = (c: RequestReport['systemDeltas'] extends infer T ? (T extends { collapsed: infer C } ? C : never) : never) =>
    c.break ? ` at ${c.break.segment} ${c.break.blockIndex} @${c.break.byteOffset}` : ', tail only';
  out(
    `${indent}re-billed vs #${d.comparedWithNumber ?? '-'}: collapsed ${shapeText(d.collapsed)}${at(d.collapsed)}${sent('collapsed')}; ` +
      `mid-conversation ${shapeText(d.midConversation)}${at(d.midConversation)}${sent('mid-conversation')}; ${savedText(d.savedTokens)}`,
  );
}

/**
 * Renders one session: header, one row per request, totals, diagnostics. A session of no requests
 * (unreadable, or nothing in it yet) is its header and what was found instead (diagnostics,
 * ignored entries): no empty table, no totals, unless `table` (a live view whose rows come later).
 * @returns whether the request table was printed (the legend explains it)
 */
export function renderSession(s: SessionReport, out: (line: string) => void, table = false): boolean {
  out(`${s.host} session ${safe(s.id)}${s.title ? ` "${safe(s.title)}"` : ''}`);
  out(`  ${safe(s.path)}`);
  if (!s.requests.length && !table) {
    out('  0 requests');
    renderFindings(s, out);
    return false;
  }
  const evidence = new Set(s.requests.map((r) => r.evidence));
  out(`  ${plural(s.requests.length, 'request')}${daysText(s.requests)}, evidence: ${[...evidence].join(', ') || 'none'}`);
  // Notes shared by several requests describe the session; one-off notes stay in the JSON.
  const counts = new Map<string, number>();
  for (const n of s.requests.flatMap((r) => r.notes)) counts.set(n, (counts.get(n) ?? 0) + 1);
  for (const [n, c] of counts) if (c > 1 || s.requests.length === 1) out(`  note: ${safe(n)}`);
  out('');
  // The model column fits the longest model id with its kind (`claude-sonnet-4-5 (summary)`), within 22..40.
  const modelWidth = modelWidthOf(s.requests);
  out(headerRow(modelWidth));
  // The time column is UTC time of day: a request on another day than the one before it is
  // preceded by its date.
  let day: string | null = null;
  for (const r of s.requests) {
    const d = r.time ? r.time.slice(0, 10) : null;
    if (d && day && d !== day) out(`${' '.repeat(5)}── ${safe(d)} ──`);
    if (d) day = d;
    renderRequest(r, modelWidth, out);
  }
  const t = s.totals;
  out('');
  out(
    `  totals: read ${t.cacheRead}, write ${t.cacheWrite}, uncached ${t.uncached}, output ${t.output} tokens; ` +
      `hit rate ${t.hitRate === null ? '-' : `${(t.hitRate * 100).toFixed(1)}%`}; ${plural(t.breaks, 'break')}; ` +
      `re-billed ~${t.lostTokens} tokens${t.costUSD ? ` (${usd(t.costUSD)})` : ''}`,
  );
  if (s.systemShapes) {
    const x = s.systemShapes;
    out(
      `  system deltas: ${x.deltas} in ${plural(x.requestsWithDeltas, 'request')}; re-billed collapsed ${shapeText(x.collapsed)} vs mid-conversation ${shapeText(x.midConversation)}; ` +
        `sent ${x.used.join(' and ')}${x.unknownRoute ? ' (route flag unknown: collapsed assumed)' : ''}; ${savedText(x.savedTokens)}`,
    );
  }
  if (s.hostMiss) {
    const h = s.hostMiss;
    out(
      `  ${safe(h.host)} cache diagnostics: ${plural(h.requests, 'request')}; ${h.agree} agree with our verdict, ${h.disagree} disagree` +
        `${h.disagree ? ` (${h.disagreeing.map((i) => `#${numberAt(s.requests, i)}`).join(', ')})` : ''}${h.notCompared ? `, ${h.notCompared} not compared` : ''}`,
    );
  }
  renderFindings(s, out);
  return true;
}

/** A session's lines under its table (or its header): phux stream, persona, ignored entries, diagnostics. */
function renderFindings(s: SessionReport, out: (line: string) => void): void {
  if (s.phux) renderPhux(s.phux, out);
  if (s.persona) renderPersona(s.persona, (i) => numberAt(s.requests, i), out);
  const ignored = Object.entries(s.ignored);
  if (ignored.length) out(`  ignored entries: ${ignored.map(([k, v]) => `${safe(k)} ×${v}`).join(', ')}`);
  for (const d of s.diagnostics) renderDiagnostic(d, out);
}

/** One diagnostic as the report lists it under a session: `  error: <file>:<line>: <message>` (no `:<line>` for line 0), escaped. */
export function renderDiagnostic(d: DiagnosticReport, out: (line: string) => void): void {
  out(`  ${d.severity}: ${diagnosticText(d)}`);
}

/** One line for the phux context stream, then one per ADR-0067 violation. */
function renderPhux(p: PhuxSessionJson, out: (line: string) => void): void {
  const chain = p.messages.map((m) => `${m.kind === 'checkpoint' ? 'C' : 'Δ'}${m.seq}${m.placement === 'head' ? '(head)' : ''}`).join(' ');
  out(`  phux context: ${plural(p.messages.length, 'message')} [${chain}], ${p.cost.bytes} bytes (~${p.cost.estimatedTokens} tokens)` +
      `${p.cost.outsideBytes ? ` + ${p.cost.outsideBytes} bytes outside the messages` : ''}` +
      `${p.restarts.length ? `, restarts at line ${p.restarts.join(', ')}` : ''}; ${plural(p.violations.length, 'ADR-0067 violation')}`);
  for (const v of p.violations) out(`    line ${v.line}: ${safe(v.rule)}: ${safe(v.message)}`);
}

/**
 * One line for the persona snapshot (BotHarness): its hash, size, time and bot, the session's
 * verdict and the events by request; then, per drift, the changed bytes before and after.
 */
function renderPersona(p: PersonaReport, numberOf: (index: number) => string, out: (line: string) => void): void {
  const snap = p.snapshot;
  const what =
    snap.state === 'body'
      ? `snapshot ${snap.hash} (${snap.bytes} bytes${snap.takenAt ? `, taken ${safe(snap.takenAt)}` : ''}${snap.botSlug ? `, bot ${safe(snap.botSlug)}` : ''})`
      : snap.state === 'empty'
        ? `empty snapshot${snap.takenAt ? ` (taken ${safe(snap.takenAt)})` : ''}`
        : snap.state === 'none'
          ? 'no snapshot taken yet'
          : 'snapshot unknown';
  const events = p.events.map((e) => `#${numberOf(e.request)} ${e.kind}`).join(', ');
  out(`  persona: ${what}; ${p.verdict}${events ? `; ${events}` : ''}`);
  for (const e of p.events) {
    if (e.kind === 'drift' || e.kind === 'memory-head' || e.kind === 'refreshed' || e.kind === 'reowned') {
      out(`    #${numberOf(e.request)} ${e.kind}${e.offset !== undefined ? ` at system byte ${e.offset}` : ''}: ${safe(e.detail)}`);
      if (e.before !== undefined) out(`      before: ${safe(e.before)}`);
      if (e.after !== undefined) out(`      after:  ${safe(e.after)}`);
    }
  }
  for (const n of p.notes) out(`    note: ${safe(n)}`);
}

/** What the columns and marks mean; printed once under the report. */
export const LEGEND = [
  '#: agent requests 1, 2, 3… in send order; 8.1, 8.2… = the other requests sent after #8: the host\'s side requests',
  '  ((summary)/(title) after the model) and attempts the transcript does not record. The same with or without --requests.',
  'time: UTC time of day the request was sent; the header gives the days, a "── date ──" line each new day.',
  'read/write/uncached: prompt tokens the provider reported (cache read, cache write, neither); - = no usage recorded.',
  'verdict: cold = first request of its lineage here (it may still read an entry another session wrote); hit; break;',
  '  ttl-expired; below-minimum (too short to cache); model-switch; unexplained-miss (prefix unchanged, read collapsed);',
  '  unknown (! = the request failed).',
  'break: the first changed item (message/tool/system index within its segment) and byte offset (wire: in the body).',
  'cost: extra USD the break caused; $0 = nothing extra; - = prices unknown. cause? = likely, not certain.',
  'Below a break: its JSON path, the request compared with, the tokens read (reported) and expected up to the change',
  '  (~0 for a change before the first cache breakpoint) and re-billed (~ = estimated from bytes, calibrated on the',
  '  session\'s usage), and the bytes before/after the first change.',
  'system delta (PI-Desktop): a system message after the first; re-billed both ways = if folded into the first system',
  '  message (collapsed) or kept in place (mid-conversation), vs the same earlier request (Nib ADR 0337).',
];

/** Renders a whole report, then the legend when some request table was printed. */
export function renderReport(report: Report, out: (line: string) => void): void {
  let tables = 0;
  report.sessions.forEach((s, i) => {
    if (i) out('');
    if (renderSession(s, out)) tables++;
  });
  if (!report.sessions.length) {
    out('no sessions found');
    return;
  }
  if (!tables) return;
  out('');
  for (const line of LEGEND) out(line);
}
