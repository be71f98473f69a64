/**
 * The detail of the selected request (region "Request detail"): verdict and reason, segment
 * table, break location and before/after bytes with the first changed character marked, observed
 * vs expected read with their sources, re-billed tokens and cost, phux and persona events, notes,
 * errors and the transcript location. Text only (textContent).
 */
import { agreementText, hostMissText } from '../src/report/hostmiss.js';
import type { RequestReport, SessionReport } from '../src/report/json.js';
import { numberAt } from '../src/report/numbers.js';
import { plural } from '../src/plural.js';
import { h } from './dom.js';
import { bytes, duration, time, tokens, usd } from './format.js';
import { verdictStyle } from './verdicts.js';

/** Actions the detail offers (VS Code only: reveal in the transcript). */
export interface DetailActions {
  reveal?(r: RequestReport): void;
  /** Opens `r` beside request `base` in a diff editor (the extension only). */
  compare?(r: RequestReport, base: number): void;
}

const SOURCE_WORDS: Record<string, string> = {
  reported: 'reported by the provider',
  estimated: 'estimated from bytes',
  host: "the host's prices",
  rules: 'bundled provider prices',
  override: 'your price override (settings)',
};

function source(s: string | null): string {
  return s ? SOURCE_WORDS[s] ?? s : 'unknown';
}

/**
 * Evidence in words. `opaqueHead`: the head (system prompt + tools) is one opaque block; false when
 * the host recorded them (BotHarness/DSH `request/header`), so only the messages are reconstructed.
 */
export function evidenceWords(e: string | null, opaqueHead = true): string {
  if (e === 'wire') return 'wire: the exact request bytes';
  if (e === 'reconstructed') return opaqueHead ? 'reconstructed from the transcript (head opaque)' : 'reconstructed messages; system prompt and tools as the host recorded them';
  if (e === 'mixed') return 'mixed: some requests wire, some reconstructed';
  return 'none';
}

/** A system-message shape in words. */
function shapeWords(shape: string): string {
  return shape === 'collapsed' ? 'collapsed: later system messages folded into the first' : 'mid-conversation: later system messages kept in place';
}

/** Where a system change is, in words: `resumable` (section) — added, +138 B. */
function sectionWords(s: NonNullable<NonNullable<RequestReport['break']>['section']>): string {
  const kind = s.via === 'named' ? 'section' : s.via === 'heading' ? 'heading' : s.via === 'tag' ? 'element' : s.via === 'key' ? 'key' : '';
  const name = s.name === null ? 'no heading or tag around it' : `${s.via === 'tag' ? `<${s.name}>` : s.name} (${kind})`;
  const what = s.change === 'appended' ? (s.whole ? 'added' : 'text appended') : s.change === 'removed' ? (s.whole ? 'removed' : 'text removed') : 'edited';
  const within = s.within.length ? ` · in ${s.within.join(' › ')}` : '';
  return `${name} — ${what}, −${bytes(s.removedBytes)} +${bytes(s.addedBytes)}${within}`;
}

function row(label: string, ...value: Array<Node | string>): HTMLElement[] {
  return [h('dt', null, label), h('dd', null, ...value)];
}

/** Renders request `r` of `s` into `region` (replacing what was there). */
export function renderDetail(region: HTMLElement, s: SessionReport, r: RequestReport | null, actions: DetailActions): void {
  if (!r) {
    region.replaceChildren(h('p', { class: 'pl-empty' }, 'No request selected.'));
    return;
  }
  const parts: Node[] = [];
  parts.push(
    h(
      'h2',
      { class: 'pl-detail-title' },
      h('span', { class: `pl-badge pl-v-${r.verdict}` }, verdictStyle(r.verdict).glyph, ' ', r.verdict),
      ` Request ${r.number}`,
      r.kind !== 'agent' ? h('span', { class: 'pl-muted' }, ` (${r.kind})`) : null,
    ),
  );
  parts.push(h('p', { class: 'pl-reason' }, r.reason));

  // Causes
  if (r.causes.length) {
    parts.push(
      h(
        'ul',
        { class: 'pl-causes', 'aria-label': 'Causes' },
        ...r.causes.map((c) => h('li', null, h('strong', null, c.kind), c.certainty === 'likely' ? ' (likely)' : '', c.detail ? `: ${c.detail}` : '')),
      ),
    );
  }

  // Facts
  const where = r.line > 0 ? `${r.file}:${r.line}` : `${r.file}${r.row ? ` (${r.row})` : ''}`;
  const reveal =
    actions.reveal && r.file
      ? (() => {
          const b = h('button', { type: 'button', class: 'pl-button' }, 'Reveal in transcript');
          b.addEventListener('click', () => actions.reveal!(r));
          return b;
        })()
      : null;
  const compare =
    actions.compare && r.matched !== null
      ? (() => {
          const base = r.matched;
          const b = h('button', { type: 'button', class: 'pl-button', title: `Open request #${r.number} beside #${r.matchedNumber} in a diff editor, at the first changed byte` }, `Compare with #${r.matchedNumber}`);
          b.addEventListener('click', () => actions.compare!(r, base));
          return b;
        })()
      : null;
  parts.push(
    h(
      'dl',
      { class: 'pl-facts' },
      ...row('Time', time(r.time)),
      ...row('Model', `${r.provider}/${r.model}`, h('span', { class: 'pl-muted' }, ` · ${r.api}`)),
      ...row('Evidence', evidenceWords(r.evidence, r.segments.head !== null)),
      ...(r.systemShape ? row('System messages', shapeWords(r.systemShape.used), h('span', { class: 'pl-muted' }, ` · ${r.systemShape.known ? r.systemShape.source : "route flag unknown: pi-ai's collapsed default"}`)) : []),
      ...row('Prefix hash', h('code', null, r.prefixHash ?? '—'), r.sameAsPrevious ? ' (same as the previous request)' : ''),
      ...row(
        'Compared with',
        r.matched !== null ? `request #${r.matchedNumber}` : 'nothing (no earlier entry)',
        r.gapMs !== null ? `, ${duration(r.gapMs)} later` : '',
        r.ttlMs !== null ? ` (entry TTL ${duration(r.ttlMs)})` : '',
        compare ? ' ' : '',
        compare ?? '',
      ),
      ...row('Transcript', h('code', { class: 'pl-path' }, where), reveal ? ' ' : '', reveal ?? ''),
    ),
  );

  // The host's own verdict beside ours (Claude Code's cache diagnostics), and the session's count.
  if (r.hostMiss) {
    const hm = r.hostMiss;
    const sum = s.hostMiss;
    parts.push(
      h('h3', null, `${hm.host}'s verdict`),
      h(
        'dl',
        { class: 'pl-facts', 'aria-label': `${hm.host}'s verdict` },
        ...row(`${hm.host} says`, hostMissText(hm)),
        ...row('Our verdict', h('span', hm.agrees === false ? { class: 'pl-bad' } : null, `${r.verdict}: ${agreementText(hm.agrees)}`)),
        ...(sum ? row('This session', `${plural(sum.requests, 'request')} with ${hm.host}'s verdict, ${sum.disagree} disagree${sum.disagree ? ` (${sum.disagreeing.map((i) => `#${numberAt(s.requests, i)}`).join(', ')})` : ''}${sum.notCompared ? `, ${sum.notCompared} not compared` : ''}`) : []),
      ),
    );
  }

  // Tokens
  const u = r.usage;
  const tokenRows: Array<[string, string, string]> = [
    ['Prompt', tokens(r.promptTokens), source(r.sources.promptTokens)],
    ['Read (observed)', tokens(r.observedRead), source(r.sources.observedRead)],
    ['Read (expected)', r.expectedRead === null ? '—' : `~${tokens(r.expectedRead)}`, source(r.sources.expectedRead)],
    // A field is null when the host's value was not a token count: unknown, as without usage.
    ['Written', tokens(u?.cacheWrite), u && u.cacheWrite !== null ? source('reported') : 'unknown'],
    ['Uncached', tokens(u?.uncached), u && u.uncached !== null ? source('reported') : 'unknown'],
    ['Output', tokens(u?.output), u && u.output !== null ? source('reported') : 'unknown'],
    ['Re-billed', `~${tokens(r.lostTokens)}`, source(r.sources.lostTokens)],
    ['Cost of the break', usd(r.costUSD), source(r.sources.cost)],
  ];
  parts.push(
    h('h3', null, 'Tokens'),
    table(
      'Tokens',
      ['', 'tokens', 'source'],
      tokenRows.map(([a, b, c]) => [a, b, c]),
      [false, true, false],
    ),
  );

  // Segments
  if (r.segmentTable.length) {
    parts.push(
      h('h3', null, 'Segments'),
      table(
        'Segments',
        ['segment', 'blocks', 'bytes', 'hash at end', 'evidence', r.matched !== null ? `vs #${r.matchedNumber}` : 'vs entry'],
        r.segmentTable.map((t) => [t.segment, String(t.blocks), bytes(t.bytes), t.hash ?? '—', t.evidence, t.status ?? '—']),
        [false, true, true, false, false, false],
        (tr, i) => {
          if (r.segmentTable[i].status === 'changed') tr.classList.add('pl-changed');
        },
      ),
    );
  }

  // Break
  if (r.break) {
    const b = r.break;
    const offsetWhere = r.evidence === 'wire' ? 'in the request body' : 'in the canonical prefix bytes';
    parts.push(
      h('h3', null, 'Break'),
      h(
        'dl',
        { class: 'pl-facts pl-break', 'aria-label': 'Break location' },
        ...row('Segment', b.segment),
        ...row('Block', String(b.blockIndex)),
        ...row('JSON path', h('code', null, b.path)),
        ...row('Byte offset', `${b.byteOffset.toLocaleString('en-US')} `, h('span', { class: 'pl-muted' }, offsetWhere)),
        ...(b.section ? row('Section', sectionWords(b.section)) : []),
      ),
    );
    if (b.before || b.after) {
      parts.push(excerpt('Before (cached entry)', b.before, b.excerptAt), excerpt('After (this request)', b.after, b.excerptAt));
    }
  }

  // System deltas (PI-Desktop): what each costs folded into the head vs kept in place (Nib ADR 0337)
  if (r.systemDeltas) {
    const d = r.systemDeltas;
    const sent = (shape: string) => (d.used === shape ? (d.known ? 'sent' : 'sent (route flag unknown)') : '');
    const at = (c: typeof d.collapsed) => (c.break ? `${c.break.segment} ${c.break.blockIndex} @${c.break.byteOffset.toLocaleString('en-US')}${c.break.section?.name ? ` (${c.break.section.name})` : ''}` : 'tail only');
    parts.push(
      h('h3', null, 'System deltas'),
      h(
        'ul',
        { class: 'pl-list', 'aria-label': 'System deltas' },
        ...d.deltas.map((x) =>
          h(
            'li',
            null,
            h('strong', null, [...x.sections.map((s) => `${s.name} ${s.change}`), ...x.toolsAdded.map((t) => `+${t}`), ...x.toolsRemoved.map((t) => `−${t}`)].join(', ') || 'no section changed'),
            x.cause ? ` · ${x.cause.kind}: ${x.cause.detail}` : ' · cause not shown in the transcript',
            ` · ${x.id}, line ${x.line}`,
          ),
        ),
      ),
      table(
        'Re-billed by shape',
        ['shape', 're-billed', 'cost', `prefix vs #${d.comparedWithNumber ?? '—'}`, ''],
        [
          ['collapsed (folded into the first system message)', `~${tokens(d.collapsed.rebilledTokens)}`, usd(d.collapsed.costUSD), at(d.collapsed), sent('collapsed')],
          ['mid-conversation (kept in place)', `~${tokens(d.midConversation.rebilledTokens)}`, usd(d.midConversation.costUSD), at(d.midConversation), sent('mid-conversation')],
        ],
        [false, true, true, false, false],
      ),
      h(
        'p',
        { class: 'pl-muted' },
        d.savedTokens >= 0
          ? `Kept in place saves ~${tokens(d.savedTokens)} tokens${d.savedUSD ? ` (${usd(d.savedUSD)})` : ''} on this request (estimated from bytes).`
          : `Kept in place re-bills ~${tokens(-d.savedTokens)} tokens more on this request (estimated from bytes).`,
      ),
    );
  }

  // phux and persona
  const phux = (s.phux?.messages ?? []).filter((m) => m.request === r.index);
  if (phux.length) {
    const bad = new Map((s.phux?.violations ?? []).map((v) => [v.line, v]));
    parts.push(
      h('h3', null, 'phux context carried'),
      h(
        'ul',
        { class: 'pl-list' },
        ...phux.map((m) =>
          h(
            'li',
            bad.has(m.line) ? { class: 'pl-bad' } : null,
            `${m.kind} seq ${m.seq}`,
            m.baseSeq !== undefined ? ` (base_seq ${m.baseSeq})` : '',
            ` · ${bytes(m.bytes)} · ${plural(m.panes, 'pane')} carried, ${m.fleetPanes} known · ${m.placement} · line ${m.line}`,
            bad.has(m.line) ? ` · ADR-0067 ${bad.get(m.line)!.rule}: ${bad.get(m.line)!.message}` : '',
          ),
        ),
      ),
    );
  }
  const persona = (s.persona?.events ?? []).filter((e) => e.request === r.index);
  if (persona.length) {
    parts.push(
      h('h3', null, 'Persona snapshot'),
      h('ul', { class: 'pl-list' }, ...persona.map((e) => h('li', e.kind === 'drift' || e.kind === 'memory-head' ? { class: 'pl-bad' } : null, `${e.kind}`, e.hash ? ` ${e.hash}` : '', e.detail ? `: ${e.detail}` : '', e.offset !== undefined ? ` · at byte ${e.offset.toLocaleString('en-US')} of the system prompt` : '', ` · line ${e.line}`))),
    );
    // The persona section's changed bytes (drift, refresh, re-own), as the break's are shown.
    for (const e of persona) {
      if (e.before === undefined || e.after === undefined) continue;
      const at = e.excerptAt ?? 0;
      const where = e.offset !== undefined ? ` (system prompt byte ${e.offset})` : '';
      parts.push(excerpt(`Persona section before${where}`, e.before, at), excerpt('Persona section after', e.after, at));
    }
  }

  if (r.error) parts.push(h('h3', null, 'Error'), h('p', { class: 'pl-bad' }, r.error));
  if (r.notes.length) parts.push(h('h3', null, 'Notes'), h('ul', { class: 'pl-list' }, ...r.notes.map((n) => h('li', null, n))));
  region.replaceChildren(...parts);
}

function table(
  label: string,
  head: string[],
  rows: string[][],
  numeric: boolean[],
  decorate?: (tr: HTMLTableRowElement, i: number) => void,
): HTMLTableElement {
  const t = h(
    'table',
    { class: 'pl-table', 'aria-label': label },
    h('thead', null, h('tr', null, ...head.map((c, i) => h('th', { scope: 'col', class: numeric[i] ? 'pl-num' : null }, c)))),
    h(
      'tbody',
      null,
      ...rows.map((cells, ri) => {
        const tr = h('tr', null, ...cells.map((c, i) => (i === 0 ? h('th', { scope: 'row' }, c) : h('td', { class: numeric[i] ? 'pl-num' : null }, c))));
        decorate?.(tr, ri);
        return tr;
      }),
    ),
  );
  return t;
}

/** A before/after excerpt with the first changed character in a <mark>. */
function excerpt(label: string, text: string, at: number): HTMLElement {
  const head = text.slice(0, at);
  const changed = text.slice(at, at + 1);
  const rest = text.slice(at + 1);
  return h(
    'figure',
    { class: 'pl-excerpt' },
    h('figcaption', null, label),
    h('pre', null, h('span', null, visible(head)), changed ? h('mark', { title: 'first changed byte' }, visible(changed)) : h('mark', { class: 'pl-end' }, '∅'), h('span', null, visible(rest))),
  );
}

/** Control characters shown as visible symbols (a newline as ↵, a tab as →). */
function visible(s: string): string {
  return s.replace(/\n/g, '↵').replace(/\t/g, '→').replace(/[\u0000-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
