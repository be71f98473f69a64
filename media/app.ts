/**
 * The Timeline app: header, toolbar (session picker, filter, export), lanes, legend and detail
 * for one report. Holds the selection and the filter; renders the view model as it is.
 */
import { MessageType, applyPatch, copyPathMessage, type RequestRef, type ToWebviewMessage } from '../src/protocol.js';
import { plural } from '../src/plural.js';
import type { Report, RequestReport, SessionReport } from '../src/report/json.js';
import { evidenceWords, renderDetail } from './detail.js';
import { h } from './dom.js';
import { percent, tokens, usd } from './format.js';
import type { Host } from './host.js';
import { Timeline } from './timeline.js';
import { VERDICTS } from './verdicts.js';

/** Filter values: `all`, `breaks`, or `cause:<kind>`. */
type Filter = string;

export class App {
  private report: Report = { version: 1, sessions: [] };
  private sessionIndex = 0;
  private filter: Filter = 'all';
  private view: RequestReport[] = [];
  private selected = -1;
  private live = false;
  private readonly header = h('header', { class: 'pl-header' });
  private readonly toolbar = h('div', { class: 'pl-toolbar', role: 'toolbar', 'aria-label': 'Timeline controls' });
  private readonly sessionSelect = h('select', { id: 'pl-session', class: 'pl-select' });
  private readonly filterSelect = h('select', { id: 'pl-filter', class: 'pl-select' });
  private readonly status = h('span', { class: 'pl-status', role: 'status' });
  private readonly timeline: Timeline;
  private readonly legend = h('section', { class: 'pl-legend', 'aria-label': 'Legend' });
  private readonly detail = h('section', { class: 'pl-detail', role: 'region', 'aria-label': 'Request detail', tabindex: '-1' });

  constructor(
    private readonly root: HTMLElement,
    private readonly host: Host,
  ) {
    this.timeline = new Timeline({
      select: (pos) => this.select(pos, true),
      jumpBreak: (dir) => this.jumpBreak(dir),
    });
    this.sessionSelect.addEventListener('change', () => this.showSession(Number(this.sessionSelect.value), null));
    this.filterSelect.addEventListener('change', () => {
      this.filter = this.filterSelect.value;
      const keep = this.view[this.selected]?.index;
      this.applyFilter(keep ?? null);
    });
    root.replaceChildren(
      this.header,
      this.toolbar,
      h('main', { class: 'pl-main' }, this.timeline.element, this.legend, this.detail),
    );
    // Theme changes: VS Code swaps body classes; the standalone page follows the OS scheme.
    new MutationObserver(() => this.timeline.themeChanged()).observe(document.body, { attributes: true, attributeFilter: ['class'] });
    window.matchMedia?.('(prefers-color-scheme: dark)').addEventListener?.('change', () => this.timeline.themeChanged());
  }

  /** Handles a message from the host (already validated). */
  handle(m: ToWebviewMessage): void {
    if (m.type === MessageType.Load) this.load(m.report, m.live, m.select ?? null);
    else if (m.type === MessageType.Patch) {
      const s = this.report.sessions[m.sessionIndex];
      let next: SessionReport;
      try {
        if (!s) throw new Error(`live patch: no session ${m.sessionIndex}`);
        next = applyPatch(s, m.patch);
      } catch (e) {
        // Not on top of what is shown: ask for the whole report (the extension answers Ready with Load).
        console.error(`prefix-lens: ${(e as Error).message}; asking for the whole report`);
        this.host.post({ type: MessageType.Ready });
        return;
      }
      const sessions = [...this.report.sessions];
      sessions[m.sessionIndex] = next;
      this.load({ ...this.report, sessions }, this.live, null);
    } else if (m.type === MessageType.Select) {
      if (m.ref.sessionIndex !== this.sessionIndex) this.showSession(m.ref.sessionIndex, m.ref.requestIndex);
      else this.selectIndex(m.ref.requestIndex, false);
    }
  }

  /** Shows a report, keeping the selection when it still exists (else the saved one, else the first break). */
  private load(report: Report, live: boolean, select: RequestRef | null): void {
    const previous = this.current() ? { path: this.current()!.path, index: this.view[this.selected]?.index } : null;
    this.report = report;
    this.live = live;
    let ref: RequestRef | null = select;
    if (!ref && previous) {
      const si = this.report.sessions.findIndex((s) => s.path === previous.path);
      if (si >= 0 && previous.index !== undefined) ref = { sessionIndex: si, requestIndex: previous.index };
    }
    if (!ref) {
      const st = this.host.state();
      const si = st ? this.report.sessions.findIndex((s) => s.path === st.sessionPath) : -1;
      if (st && si >= 0) {
        if (st.filter) this.filter = st.filter;
        if (st.selected) ref = { sessionIndex: si, requestIndex: st.selected.requestIndex };
        else ref = { sessionIndex: si, requestIndex: 0 };
      }
    }
    this.renderToolbar();
    this.showSession(ref?.sessionIndex ?? 0, ref && ref.requestIndex > 0 ? ref.requestIndex : null);
  }

  private current(): SessionReport | undefined {
    return this.report.sessions[this.sessionIndex];
  }

  private renderToolbar(): void {
    const sessions = this.report.sessions;
    this.sessionSelect.replaceChildren(
      ...sessions.map((s, i) => {
        const o = h('option', { value: i }, `${s.title ?? s.id} — ${s.host}, ${plural(s.requests.length, 'request')}, ${plural(s.totals.breaks, 'break')}`);
        return o;
      }),
    );
    const parts: Node[] = [];
    if (sessions.length > 1) parts.push(h('label', { for: 'pl-session' }, 'Session'), this.sessionSelect);
    parts.push(h('label', { for: 'pl-filter' }, 'Show'), this.filterSelect);
    if (this.host.kind === 'vscode') {
      const exp = h('button', { type: 'button', class: 'pl-button' }, 'Export HTML report…');
      exp.addEventListener('click', () => this.host.post({ type: MessageType.ExportHtml }));
      parts.push(exp);
    }
    if (this.live) parts.push(h('span', { class: 'pl-live', title: 'The session file is being followed' }, 'live'));
    parts.push(this.status);
    this.toolbar.replaceChildren(...parts);
  }

  private showSession(index: number, requestIndex: number | null): void {
    if (!this.report.sessions.length) {
      this.header.replaceChildren(h('h1', null, 'Prefix Lens'), h('p', null, 'The report holds no session.'));
      this.detail.replaceChildren();
      return;
    }
    this.sessionIndex = Math.max(0, Math.min(index, this.report.sessions.length - 1));
    this.sessionSelect.value = String(this.sessionIndex);
    const s = this.current()!;
    // The standalone file's <title> is written before any session is known.
    if (this.host.kind === 'standalone') document.title = `Prefix Lens — ${s.title ?? `${s.host} ${s.id}`}`;
    this.renderHeader(s);
    this.renderFilterOptions(s);
    this.renderLegend(s);
    if (requestIndex === null) {
      const firstBreak = s.requests.find((r) => r.verdict === 'break');
      requestIndex = (firstBreak ?? s.requests[0])?.index ?? null;
    }
    this.applyFilter(requestIndex);
  }

  private renderFilterOptions(s: SessionReport): void {
    const causes = [...new Set(s.requests.flatMap((r) => r.causes.map((c) => c.kind)))].sort();
    const opts = [h('option', { value: 'all' }, `All requests (${s.requests.length})`), h('option', { value: 'breaks' }, `Breaks only (${s.totals.breaks})`)];
    for (const c of causes) opts.push(h('option', { value: `cause:${c}` }, `Cause: ${c} (${s.requests.filter((r) => r.causes.some((x) => x.kind === c)).length})`));
    this.filterSelect.replaceChildren(...opts);
    if (![...this.filterSelect.options].some((o) => o.value === this.filter)) this.filter = 'all';
    this.filterSelect.value = this.filter;
  }

  private applyFilter(keepIndex: number | null): void {
    const s = this.current()!;
    const f = this.filter;
    this.view =
      f === 'all'
        ? s.requests
        : f === 'breaks'
          ? s.requests.filter((r) => r.verdict === 'break')
          : s.requests.filter((r) => r.causes.some((c) => `cause:${c.kind}` === f));
    this.timeline.setData(s, this.sessionIndex, this.view);
    this.status.textContent = f === 'all' ? '' : `${this.view.length} of ${plural(s.requests.length, 'request')} shown`;
    let pos = keepIndex === null ? -1 : this.view.findIndex((r) => r.index === keepIndex);
    if (pos < 0 && this.view.length) pos = 0;
    this.selected = -1;
    if (pos >= 0) this.select(pos, false);
    else renderDetail(this.detail, s, null, {});
    this.saveState();
  }

  private selectIndex(requestIndex: number, notify: boolean): void {
    let pos = this.view.findIndex((r) => r.index === requestIndex);
    if (pos < 0 && this.filter !== 'all') {
      this.filter = 'all';
      this.filterSelect.value = 'all';
      this.applyFilter(requestIndex);
      pos = this.view.findIndex((r) => r.index === requestIndex);
    }
    if (pos >= 0) this.select(pos, notify);
  }

  private select(pos: number, notify: boolean): void {
    if (pos < 0 || pos >= this.view.length) return;
    this.selected = pos;
    this.timeline.setSelected(pos);
    const s = this.current()!;
    const r = this.view[pos];
    renderDetail(this.detail, s, r, {
      reveal:
        this.host.kind === 'vscode'
          ? (q) => this.host.post({ type: MessageType.RevealInTranscript, file: q.file, line: q.line, ...(q.row ? { row: q.row } : {}) })
          : undefined,
      compare: this.host.kind === 'vscode' ? (q, base) => this.host.post({ type: MessageType.CompareRequests, sessionIndex: this.sessionIndex, requestIndex: q.index, base }) : undefined,
    });
    if (notify) this.host.post({ type: MessageType.Selected, ref: { sessionIndex: this.sessionIndex, requestIndex: r.index } });
    this.saveState();
  }

  private jumpBreak(dir: 1 | -1): void {
    for (let p = this.selected + dir; p >= 0 && p < this.view.length; p += dir) {
      if (this.view[p].verdict === 'break') {
        this.select(p, true);
        return;
      }
    }
    this.status.textContent = dir > 0 ? 'No later break.' : 'No earlier break.';
  }

  private saveState(): void {
    const s = this.current();
    if (!s || this.host.kind !== 'vscode') return;
    const r = this.view[this.selected];
    this.host.saveState({
      sessionPath: s.path,
      ...(s.host === 'opencode' ? { sessionKey: `${s.host}:${s.id}` } : {}),
      ...(r ? { selected: { sessionIndex: this.sessionIndex, requestIndex: r.index } } : {}),
      filter: this.filter,
    });
  }

  private renderHeader(s: SessionReport): void {
    const t = s.totals;
    const stat = (label: string, value: string, title?: string) => h('div', { class: 'pl-stat', title: title ?? null }, h('dt', null, label), h('dd', null, value));
    const diags = s.diagnostics;
    const diagBlock = diags.length
      ? h(
          'details',
          { class: 'pl-diagnostics' },
          h('summary', null, plural(diags.length, 'diagnostic')),
          h('ul', null, ...diags.map((d) => h('li', { class: `pl-sev-${d.severity}` }, `${d.severity} ${d.file}:${d.line}: ${d.message}`))),
        )
      : h('span', { class: 'pl-muted' }, 'no diagnostics');
    this.header.replaceChildren(
      h('h1', null, s.title ?? `${s.host} session ${s.id}`),
      h('p', { class: 'pl-sub' }, `${s.host} · ${s.id}`),
      this.pathLine(s.path),
      h(
        'dl',
        { class: 'pl-stats' },
        stat('Requests', tokens(t.requests)),
        stat('Breaks', tokens(t.breaks)),
        stat('Hit rate', percent(t.hitRate), 'cache read / prompt tokens over requests with usage'),
        stat('Read', tokens(t.cacheRead), 'tokens read from the cache (reported)'),
        stat('Written', tokens(t.cacheWrite), 'tokens written to the cache (reported)'),
        stat('Uncached', tokens(t.uncached), 'prompt tokens neither read nor written (reported)'),
        stat('Re-billed', `~${tokens(t.lostTokens)}`, 'cached tokens the breaks made the provider bill again (estimated)'),
        stat('Break cost', usd(t.costUSD)),
        stat('Evidence', evidenceWords(s.evidence, s.requests.some((r) => r.segments.head !== null))),
        stat('Models', s.models.join(', ') || '—'),
        s.persona
          ? stat(
              'Persona snapshot',
              `${s.persona.snapshot.state}${s.persona.snapshot.hash ? ` ${s.persona.snapshot.hash}` : ''} · ${s.persona.verdict}`,
              s.persona.snapshot.botSlug ? `bot ${s.persona.snapshot.botSlug}${s.persona.snapshot.takenAt ? `, taken ${s.persona.snapshot.takenAt}` : ''}` : undefined,
            )
          : null,
        s.systemShapes
          ? stat(
              'System deltas',
              `${tokens(s.systemShapes.deltas)} · collapsed ~${tokens(s.systemShapes.collapsed.rebilledTokens)} vs in place ~${tokens(s.systemShapes.midConversation.rebilledTokens)} tokens`,
              `re-billed tokens if every system delta is folded into the first system message (collapsed) or kept in place (mid-conversation); sent ${s.systemShapes.used.join(' and ')}${s.systemShapes.unknownRoute ? ' (route flag unknown: collapsed assumed)' : ''}`,
            )
          : null,
      ),
      diagBlock,
    );
  }

  /**
   * The session's path on one line, cut with an ellipsis by CSS (the whole path in its title), and
   * in VS Code a button that has the extension copy it (`copyPath`).
   */
  private pathLine(path: string): HTMLElement {
    const line = h('div', { class: 'pl-pathline' }, h('code', { class: 'pl-path', title: path }, path));
    if (this.host.kind === 'vscode') {
      const copy = h('button', { type: 'button', class: 'pl-button pl-copy', title: 'Copy the session path', 'aria-label': 'Copy the session path' }, 'Copy');
      copy.addEventListener('click', () => this.host.post(copyPathMessage(this.sessionIndex)));
      line.append(copy);
    }
    return line;
  }

  private renderLegend(s: SessionReport): void {
    // Each entry: its mark, a short word (shown in a narrow panel) and its whole text (shown when
    // there is room; always its title). main.css picks which one shows.
    const entry = (mark: HTMLElement, short: string, long: string) =>
      h('li', { title: long }, mark, h('span', { class: 'pl-legend-short' }, short), h('span', { class: 'pl-legend-long' }, long));
    const swatch = (cls: string) => h('span', { class: `pl-swatch ${cls}`, 'aria-hidden': 'true' });
    const glyph = (text: string, cls = '') => h('span', { class: `pl-glyph ${cls}`.trim(), 'aria-hidden': 'true' }, text);
    const items = [
      entry(swatch('pl-sw-read'), 'read', 'read'),
      entry(swatch('pl-sw-write'), 'written', 'written'),
      entry(swatch('pl-sw-uncached'), 'uncached', 'uncached'),
      entry(swatch('pl-sw-estimate'), 'estimate', 'estimated prompt (no usage)'),
      entry(swatch('pl-sw-expected'), 'expected', 'expected read'),
      entry(swatch('pl-sw-chip'), 'hash', 'hash chip: same colour = same prefix; a bar at its left edge (text colour) = changed here'),
      entry(swatch('pl-sw-gap'), 'gap', 'gap to the matched request; dashed line = its TTL, red = beyond'),
      ...Object.entries(VERDICTS).map(([v, st]) => entry(glyph(st.glyph, `pl-v-${v}`), v, st.words)),
    ];
    if (s.phux) items.push(entry(glyph('C3 Δ4'), 'phux', 'phux checkpoint / delta with seq; arcs link a delta to its base_seq; ! = ADR-0067 violation'));
    if (s.persona) items.push(entry(glyph('◆ = ↻ ≠ ⇄ ✉'), 'persona', 'persona snapshot taken / stable / refreshed / drift / re-owned / memory via Inbox'));
    items.push(h('li', { class: 'pl-muted pl-keys', title: 'Keys: ←/→ previous/next request, Home/End first/last, n/p next/previous break' }, 'Keys: ←/→ previous/next request, Home/End first/last, n/p next/previous break'));
    this.legend.replaceChildren(h('h2', { class: 'pl-visually-hidden' }, 'Legend'), h('ul', null, ...items));
  }
}
