/**
 * The lanes: one column per request, aligned. Tokens, prefix-hash chips, gaps vs TTL, phux and
 * persona marks are drawn on one canvas for the visible columns only; the verdict marks are the
 * options of a listbox named "Requests", rendered for a window around the visible columns
 * (virtualized: 100,000 requests keep a few hundred elements). Untrusted text reaches the canvas
 * only through `fillText`.
 */
import type { RequestReport, SessionReport } from '../src/report/json.js';
import { plural } from '../src/plural.js';
import { h } from './dom.js';
import { duration as fmtDuration, tokens as fmtTokens } from './format.js';
import { AXIS_GAP as AXIS_GAP_PX, axisStep, fitLabel, phuxLabels } from './labels.js';
import { verdictStyle } from './verdicts.js';

/** Lane heights (CSS px), top to bottom. */
const AXIS = 16;
const TOKENS = 72;
const CHIP = 11;
const CHIPS = CHIP * 3 + 4;
const VERDICT = 28;
const CAUSE = 16;
const GAP = 26;
const PHUX = 30;
const PERSONA = 22;
/** Options rendered beyond each side of the visible columns. */
const OVERSCAN = 48;
/** Column width bounds (CSS px). */
const MIN_COL = 14;
const MAX_COL = 44;
/** The gap lane's full height is this many TTLs. */
const GAP_SCALE = 1.5;

/** One lane: its label, top and height inside the track. */
export interface Lane {
  id: 'axis' | 'tokens' | 'chips' | 'verdict' | 'cause' | 'gap' | 'phux' | 'persona';
  label: string;
  top: number;
  height: number;
}

/** Colours read from the CSS custom properties (theme-aware; re-read on theme changes). */
interface Palette {
  fg: string;
  muted: string;
  grid: string;
  select: string;
  read: string;
  write: string;
  uncached: string;
  estimate: string;
  expected: string;
  ok: string;
  warn: string;
  bad: string;
  chipText: string;
  chipSat: number;
  chipLight: number;
}

type PhuxMessage = NonNullable<SessionReport['phux']>['messages'][number];

/** What the timeline tells its owner. */
export interface TimelineEvents {
  /** A request was chosen (click or key); `index` is the view position. */
  select(position: number): void;
  /** "n"/"p": next or previous break from the current position. */
  jumpBreak(direction: 1 | -1): void;
}

/** The lanes view of one session's requests (`view` = the positions shown, after the filter). */
export class Timeline {
  readonly element: HTMLElement;
  readonly listbox: HTMLElement;
  private readonly scroller: HTMLElement;
  private readonly track: HTMLElement;
  private readonly canvas: HTMLCanvasElement;
  private readonly labels: HTMLElement;
  private lanes: Lane[] = [];
  private session: SessionReport | null = null;
  private sessionIndex = 0;
  private view: RequestReport[] = [];
  private col = MAX_COL;
  private selected = -1;
  private maxPrompt = 1;
  private phuxAt = new Map<number, PhuxMessage[]>();
  private phuxBySeq = new Map<number, number>();
  private violationLines = new Set<number>();
  private personaAt = new Map<number, NonNullable<SessionReport['persona']>['events']>();
  private rendered = new Map<number, HTMLElement>();
  private palette: Palette | null = null;
  private frame = 0;

  constructor(private readonly events: TimelineEvents) {
    this.labels = h('div', { class: 'pl-lane-labels', 'aria-hidden': 'true' });
    this.canvas = h('canvas', { class: 'pl-canvas', 'aria-hidden': 'true' });
    this.listbox = h('div', { class: 'pl-listbox', role: 'listbox', 'aria-label': 'Requests', 'aria-orientation': 'horizontal', tabindex: '0' });
    this.track = h('div', { class: 'pl-track' }, this.canvas, this.listbox);
    this.scroller = h('div', { class: 'pl-scroller' }, this.track);
    this.element = h('div', { class: 'pl-timeline' }, this.labels, this.scroller);

    this.scroller.addEventListener('scroll', () => this.schedule(), { passive: true });
    this.listbox.addEventListener('click', (e) => {
      const opt = (e.target as HTMLElement).closest<HTMLElement>('[role="option"]');
      if (opt) this.events.select(Number(opt.dataset.pos));
    });
    this.canvas.addEventListener('click', (e) => {
      const rect = this.canvas.getBoundingClientRect();
      const pos = Math.floor((e.clientX - rect.left + this.scroller.scrollLeft) / this.col);
      if (pos >= 0 && pos < this.view.length) {
        this.events.select(pos);
        this.listbox.focus();
      }
    });
    this.listbox.addEventListener('keydown', (e) => this.onKey(e));
    // A vertical wheel scrolls the lanes sideways (they only scroll that way).
    this.scroller.addEventListener(
      'wheel',
      (e) => {
        if (Math.abs(e.deltaY) <= Math.abs(e.deltaX) || this.scroller.scrollWidth <= this.scroller.clientWidth) return;
        this.scroller.scrollLeft += e.deltaY;
        e.preventDefault();
      },
      { passive: false },
    );
    this.canvas.addEventListener('mousemove', (e) => {
      const rect = this.canvas.getBoundingClientRect();
      const pos = Math.floor((e.clientX - rect.left + this.scroller.scrollLeft) / this.col);
      const y = e.clientY - rect.top;
      const lane = this.lanes.find((l) => y >= l.top && y < l.top + l.height);
      const text = pos >= 0 && pos < this.view.length && lane ? this.hoverText(lane.id, pos) : '';
      if (this.canvas.title !== text) this.canvas.title = text;
    });
    new ResizeObserver(() => this.layout()).observe(this.scroller);
  }

  /** Shows `view` (requests of `session` in display order). */
  setData(session: SessionReport, sessionIndex: number, view: RequestReport[]): void {
    this.session = session;
    this.sessionIndex = sessionIndex;
    this.view = view;
    let max = 1;
    for (const r of view) max = Math.max(max, r.promptTokens ?? 0, r.expectedRead ?? 0);
    this.maxPrompt = max;
    this.phuxAt.clear();
    this.phuxBySeq.clear();
    this.violationLines = new Set((session.phux?.violations ?? []).map((v) => v.line));
    const positionOf = new Map(view.map((r, i) => [r.index, i]));
    for (const m of session.phux?.messages ?? []) {
      const pos = m.request === null ? undefined : positionOf.get(m.request);
      if (pos === undefined) continue;
      if (!this.phuxAt.has(pos)) this.phuxAt.set(pos, []);
      this.phuxAt.get(pos)!.push(m);
      this.phuxBySeq.set(m.seq, pos);
    }
    this.personaAt.clear();
    for (const ev of session.persona?.events ?? []) {
      const pos = ev.request === null ? undefined : positionOf.get(ev.request);
      if (pos === undefined) continue;
      if (!this.personaAt.has(pos)) this.personaAt.set(pos, []);
      this.personaAt.get(pos)!.push(ev);
    }
    this.buildLanes();
    for (const el of this.rendered.values()) el.remove();
    this.rendered.clear();
    this.selected = -1;
    this.layout();
  }

  /** Marks `position` selected, scrolls it into view and makes it the active option. */
  setSelected(position: number): void {
    this.selected = position;
    const left = position * this.col;
    const sl = this.scroller.scrollLeft;
    const w = this.scroller.clientWidth;
    if (left < sl) this.scroller.scrollLeft = Math.max(0, left - this.col * 2);
    else if (left + this.col > sl + w) this.scroller.scrollLeft = left + this.col * 3 - w;
    this.renderOptions();
    for (const el of this.rendered.values()) el.setAttribute('aria-selected', String(Number(el.dataset.pos) === position));
    const el = this.rendered.get(position);
    if (el) this.listbox.setAttribute('aria-activedescendant', el.id);
    else this.listbox.removeAttribute('aria-activedescendant');
    this.draw();
  }

  /** Re-reads the colours (theme change) and redraws. */
  themeChanged(): void {
    this.palette = null;
    this.draw();
  }

  /** The lanes currently shown (for the legend and tests). */
  get laneList(): readonly Lane[] {
    return this.lanes;
  }

  private buildLanes(): void {
    const s = this.session!;
    const lanes: Lane[] = [];
    let top = 0;
    const add = (id: Lane['id'], label: string, height: number) => {
      lanes.push({ id, label, top, height });
      top += height;
    };
    add('axis', 'Request', AXIS);
    add('tokens', 'Prompt tokens', TOKENS);
    add('chips', 'Prefix hash', CHIPS);
    add('verdict', 'Verdict', VERDICT);
    add('cause', 'Cause', CAUSE);
    add('gap', 'Gap / TTL', GAP);
    if (s.phux && s.phux.messages.length) add('phux', 'phux context', PHUX);
    if (s.persona && s.persona.events.length) add('persona', 'Persona', PERSONA);
    this.lanes = lanes;
    this.labels.replaceChildren(
      ...lanes.map((l) => {
        const el = h('div', { class: `pl-lane-label pl-lane-${l.id}` }, l.id === 'chips' ? '' : l.label);
        if (l.id === 'chips') {
          el.append(h('span', null, 'tools / head'), h('span', null, 'system'), h('span', null, 'messages'));
        }
        el.style.height = `${l.height}px`;
        return el;
      }),
    );
    const v = lanes.find((l) => l.id === 'verdict')!;
    this.listbox.style.top = `${v.top}px`;
    this.listbox.style.height = `${v.height}px`;
    this.track.style.height = `${top}px`;
  }

  /** Tooltip of a lane at a column (plain text; shown by the browser). */
  private hoverText(lane: Lane['id'], pos: number): string {
    const r = this.view[pos];
    const head = `#${r.number} ${r.verdict}`;
    switch (lane) {
      case 'axis':
        return `${head} · ${r.time ?? 'time unknown'} · ${r.provider}/${r.model}`;
      case 'tokens': {
        const exp = r.expectedRead !== null ? `; expected read ~${fmtTokens(r.expectedRead)} (estimated)` : '';
        if (r.usage && r.sources.promptTokens === 'reported') return `${head}: read ${fmtTokens(r.usage.cacheRead)}, written ${fmtTokens(r.usage.cacheWrite)}, uncached ${fmtTokens(r.usage.uncached)} (reported)${exp}`;
        return `${head}: ~${fmtTokens(r.promptTokens)} prompt tokens (estimated; no usage recorded)${exp}`;
      }
      case 'chips':
        return `${head}: ${r.segmentTable.map((t) => `${t.segment} ${t.hash ?? '—'}${t.status ? ` (${t.status})` : ''}`).join(' · ') || 'no prefix known'}`;
      case 'cause':
        return r.causes.length ? `${head}: ${r.causes.map((c) => `${c.kind}${c.certainty === 'likely' ? ' (likely)' : ''}: ${c.detail}`).join('; ')}` : `${head}: no cause`;
      case 'gap':
        return r.gapMs !== null ? `${head}: ${fmtDuration(r.gapMs)} after #${r.matchedNumber}; its entry's TTL ${fmtDuration(r.ttlMs)}` : `${head}: no earlier entry compared`;
      case 'phux': {
        const msgs = this.phuxAt.get(pos) ?? [];
        const bad = new Map((this.session?.phux?.violations ?? []).map((v) => [v.line, v]));
        return msgs.length
          ? msgs
              .map((m) => `${m.kind} seq ${m.seq}${m.baseSeq !== undefined ? ` (base_seq ${m.baseSeq})` : ''}, ${m.bytes} B, ${plural(m.panes, 'pane')}${bad.has(m.line) ? ` — ADR-0067 ${bad.get(m.line)!.rule}: ${bad.get(m.line)!.message}` : ''}`)
              .join('\n')
          : `${head}: no phux context message`;
      }
      case 'persona':
        return (this.personaAt.get(pos) ?? []).map((ev) => `persona ${ev.kind}${ev.hash ? ` ${ev.hash}` : ''}: ${ev.detail}`).join('\n') || `${head}: no persona event`;
      default:
        return head;
    }
  }

  private lane(id: Lane['id']): Lane | undefined {
    return this.lanes.find((l) => l.id === id);
  }

  /** Column width from the available width, then track size and canvas backing store. */
  private layout(): void {
    if (!this.session) return;
    const w = this.scroller.clientWidth || 800;
    const n = Math.max(1, this.view.length);
    const col = Math.max(MIN_COL, Math.min(MAX_COL, Math.floor(w / n)));
    if (col !== this.col) {
      this.col = col;
      for (const el of this.rendered.values()) el.remove();
      this.rendered.clear();
    }
    this.track.style.width = `${n * this.col}px`;
    this.listbox.style.width = `${n * this.col}px`;
    this.listbox.style.setProperty('--pl-col', `${this.col}px`);
    const dpr = window.devicePixelRatio || 1;
    const height = this.lanes.reduce((a, l) => a + l.height, 0);
    this.canvas.style.width = `${w}px`;
    this.canvas.style.height = `${height}px`;
    this.canvas.width = Math.round(w * dpr);
    this.canvas.height = Math.round(height * dpr);
    this.renderOptions();
    if (this.selected >= 0) this.setSelected(this.selected);
    else this.draw();
  }

  private schedule(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.renderOptions();
      this.draw();
    });
  }

  private visibleRange(): [number, number] {
    const sl = this.scroller.scrollLeft;
    const w = this.scroller.clientWidth || 800;
    const first = Math.max(0, Math.floor(sl / this.col));
    const last = Math.min(this.view.length - 1, Math.ceil((sl + w) / this.col));
    return [first, last];
  }

  /**
   * Keeps option elements for the visible window (± OVERSCAN, and the selection). Elements that
   * leave the window are reused for the ones that enter it (a jump of a screen swaps ~100 options
   * per frame without creating or removing elements).
   */
  private renderOptions(): void {
    const [first, last] = this.visibleRange();
    const from = Math.max(0, first - OVERSCAN);
    const to = Math.min(this.view.length - 1, last + OVERSCAN);
    const free: HTMLElement[] = [];
    for (const [pos, el] of this.rendered) {
      if ((pos < from || pos > to) && pos !== this.selected) {
        this.rendered.delete(pos);
        free.push(el);
      }
    }
    let frag: DocumentFragment | null = null;
    const add = (pos: number) => {
      if (pos < 0 || pos >= this.view.length || this.rendered.has(pos)) return;
      let el = free.pop();
      if (!el) {
        el = h('div', { role: 'option' });
        (frag ??= document.createDocumentFragment()).appendChild(el);
      }
      this.fillOption(el, pos);
      this.rendered.set(pos, el);
    };
    for (let pos = from; pos <= to; pos++) add(pos);
    if (this.selected >= 0) add(this.selected);
    for (const el of free) el.remove();
    if (frag) this.listbox.appendChild(frag);
  }

  /** Makes `el` the option of the request at view position `pos`. */
  private fillOption(el: HTMLElement, pos: number): void {
    const r = this.view[pos];
    el.id = `pl-req-${this.sessionIndex}-${r.index}`;
    el.className = `pl-mark pl-v-${r.verdict}${r.kind !== 'agent' ? ' pl-side' : ''}`;
    el.setAttribute('aria-label', optionName(r));
    el.setAttribute('aria-selected', String(pos === this.selected));
    el.setAttribute('aria-setsize', String(this.view.length));
    el.setAttribute('aria-posinset', String(pos + 1));
    el.dataset.pos = String(pos);
    el.textContent = verdictStyle(r.verdict).glyph;
    el.title = `#${r.number} ${r.verdict}: ${r.reason}`;
    el.style.left = `${pos * this.col}px`;
    el.style.width = `${this.col}px`;
  }

  private onKey(e: KeyboardEvent): void {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const n = this.view.length;
    if (!n) return;
    const cur = this.selected < 0 ? 0 : this.selected;
    const page = Math.max(1, Math.floor((this.scroller.clientWidth || 800) / this.col) - 1);
    let next: number | null = null;
    switch (e.key) {
      case 'ArrowRight':
      case 'ArrowDown':
        next = Math.min(n - 1, this.selected < 0 ? 0 : cur + 1);
        break;
      case 'ArrowLeft':
      case 'ArrowUp':
        next = Math.max(0, cur - 1);
        break;
      case 'Home':
        next = 0;
        break;
      case 'End':
        next = n - 1;
        break;
      case 'PageDown':
        next = Math.min(n - 1, cur + page);
        break;
      case 'PageUp':
        next = Math.max(0, cur - page);
        break;
      case 'n':
        e.preventDefault();
        this.events.jumpBreak(1);
        return;
      case 'p':
        e.preventDefault();
        this.events.jumpBreak(-1);
        return;
      default:
        return;
    }
    e.preventDefault();
    this.events.select(next);
  }

  private colors(): Palette {
    if (this.palette) return this.palette;
    const cs = getComputedStyle(this.element);
    const v = (name: string, fallback: string) => cs.getPropertyValue(name).trim() || fallback;
    this.palette = {
      fg: v('--pl-fg', '#222'),
      muted: v('--pl-muted', '#777'),
      grid: v('--pl-grid', 'rgba(128,128,128,0.25)'),
      select: v('--pl-select', 'rgba(0,120,215,0.18)'),
      read: v('--pl-read', '#2e9e5b'),
      write: v('--pl-write', '#3b7dd8'),
      uncached: v('--pl-uncached', '#e0823d'),
      estimate: v('--pl-estimate', '#999'),
      expected: v('--pl-expected', '#222'),
      ok: v('--pl-ok', '#2e9e5b'),
      warn: v('--pl-warn', '#d9a400'),
      bad: v('--pl-bad', '#d64545'),
      chipText: v('--pl-chip-text', '#000'),
      chipSat: Number(v('--pl-chip-saturation', '55')),
      chipLight: Number(v('--pl-chip-lightness', '58')),
    };
    return this.palette;
  }

  /** Draws the visible columns of every canvas lane. */
  private draw(): void {
    const ctx = this.canvas.getContext('2d');
    if (!ctx || !this.session) return;
    const p = this.colors();
    const dpr = window.devicePixelRatio || 1;
    const sl = this.scroller.scrollLeft;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, this.canvas.width / dpr, this.canvas.height / dpr);
    ctx.translate(-sl, 0);
    const [first, last] = this.visibleRange();
    const col = this.col;
    const height = this.canvas.height / dpr;
    if (this.selected >= first && this.selected <= last) {
      ctx.fillStyle = p.select;
      ctx.fillRect(this.selected * col, 0, col, height);
    }
    ctx.font = '10px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    this.drawAxis(ctx, p, first, last);
    this.drawTokens(ctx, p, first, last);
    this.drawChips(ctx, p, first, last);
    this.drawCauses(ctx, p, first, last);
    this.drawGaps(ctx, p, first, last);
    this.drawPhux(ctx, p, first, last);
    this.drawPersona(ctx, p, first, last);
  }

  /** The widest request number of the view (px in `ctx`'s font), measured once per view: the longest text (`12.3` beside `13`). */
  private widest: { view: RequestReport[]; length: number; px: number } | null = null;
  private widestNumber(ctx: CanvasRenderingContext2D): number {
    if (this.widest?.view !== this.view || this.widest.length !== this.view.length) {
      let longest = '';
      for (const r of this.view) if (r.number.length > longest.length) longest = r.number;
      this.widest = { view: this.view, length: this.view.length, px: longest ? ctx.measureText(longest).width : 0 };
    }
    return this.widest.px;
  }

  private drawAxis(ctx: CanvasRenderingContext2D, p: Palette, first: number, last: number): void {
    const lane = this.lane('axis')!;
    // Every `step`-th request number, so that the widest never touches its neighbours.
    const widest = this.widestNumber(ctx);
    const step = axisStep(this.col, widest);
    ctx.fillStyle = p.muted;
    ctx.textAlign = 'center';
    for (let i = first; i <= last; i++) {
      const r = this.view[i];
      // Agent requests every `step`-th; the others (`8.1`) only when every column has its label.
      const shown = (x: RequestReport) => step === 1 || (!x.number.includes('.') && Number(x.number) % step === 0);
      if (!shown(r) && i !== 0) continue;
      // The first column's number is drawn only when it keeps clear of the next label drawn.
      if (i === 0 && !shown(r)) {
        const next = this.view.findIndex((x, j) => j > 0 && shown(x));
        if (next !== -1 && next * this.col < widest + AXIS_GAP_PX) continue;
      }
      ctx.fillText(r.number, i * this.col + this.col / 2, lane.top + lane.height / 2);
    }
  }

  private drawTokens(ctx: CanvasRenderingContext2D, p: Palette, first: number, last: number): void {
    const lane = this.lane('tokens')!;
    const base = lane.top + lane.height - 2;
    const scale = (lane.height - 6) / this.maxPrompt;
    const pad = Math.max(1, Math.floor(this.col * 0.18));
    ctx.strokeStyle = p.grid;
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(first * this.col, base + 0.5);
    ctx.lineTo((last + 1) * this.col, base + 0.5);
    ctx.stroke();
    for (let i = first; i <= last; i++) {
      const r = this.view[i];
      const x = i * this.col + pad;
      const w = this.col - 2 * pad;
      let y = base;
      // Observed bars only for a fully reported prompt (a usage field may be unknown: null).
      if (r.usage && r.sources.promptTokens === 'reported') {
        for (const [value, color] of [
          [r.usage.cacheRead, p.read],
          [r.usage.cacheWrite, p.write],
          [r.usage.uncached, p.uncached],
        ] as Array<[number, string]>) {
          const hgt = value * scale;
          if (hgt <= 0) continue;
          ctx.fillStyle = color;
          ctx.fillRect(x, y - hgt, w, hgt);
          y -= hgt;
        }
      } else if (r.promptTokens !== null) {
        // Estimated from bytes: an outline, never a filled (observed-looking) bar.
        const hgt = r.promptTokens * scale;
        ctx.strokeStyle = p.estimate;
        ctx.setLineDash([2, 2]);
        ctx.strokeRect(x + 0.5, base - hgt + 0.5, w - 1, hgt - 1);
        ctx.setLineDash([]);
      }
      if (r.expectedRead !== null && r.expectedRead > 0) {
        const ey = Math.round(base - r.expectedRead * scale) + 0.5;
        ctx.strokeStyle = p.expected;
        ctx.lineWidth = 2;
        ctx.beginPath();
        ctx.moveTo(x - pad + 1, ey);
        ctx.lineTo(x + w + pad - 1, ey);
        ctx.stroke();
        ctx.lineWidth = 1;
      }
    }
  }

  private drawChips(ctx: CanvasRenderingContext2D, p: Palette, first: number, last: number): void {
    const lane = this.lane('chips')!;
    const rows: Array<Array<'tools' | 'head' | 'system' | 'messages'>> = [['tools', 'head'], ['system'], ['messages']];
    for (let i = first; i <= last; i++) {
      const r = this.view[i];
      const prev = i > 0 ? this.view[i - 1] : null;
      rows.forEach((keys, row) => {
        const key = keys.find((k) => r.segments[k] !== null);
        const hash = key ? r.segments[key] : null;
        const y = lane.top + 2 + row * (CHIP + 1);
        if (!hash) return;
        // The opaque head (tools + system as one block) spans both rows.
        const hgt = key === 'head' ? 2 * CHIP + 1 : CHIP;
        ctx.fillStyle = chipColor(hash, p);
        const x = i * this.col + 1;
        ctx.fillRect(x, y, this.col - 2, hgt);
        const prevHash = prev ? (prev.segments[key!] ?? null) : null;
        if (prevHash !== hash) {
          // The hash changed here: a bar at the chip's left edge.
          ctx.fillStyle = p.fg;
          ctx.fillRect(x, y, 2, hgt);
        }
        const label = key === 'head' ? fitLabel(['head'], this.col - 6, (t) => ctx.measureText(t).width) : null;
        if (label) {
          ctx.fillStyle = p.chipText;
          ctx.textAlign = 'center';
          ctx.fillText(label, x + (this.col - 2) / 2, y + hgt / 2 + 0.5, this.col - 6);
        }
      });
    }
  }

  private drawCauses(ctx: CanvasRenderingContext2D, p: Palette, first: number, last: number): void {
    const lane = this.lane('cause')!;
    const y = lane.top + lane.height / 2;
    ctx.textAlign = 'center';
    for (let i = first; i <= last; i++) {
      const r = this.view[i];
      const c = r.causes[0];
      if (!c) continue;
      const lossy = r.verdict === 'break' || r.verdict === 'ttl-expired' || r.verdict === 'unexplained-miss';
      ctx.fillStyle = lossy && c.certainty === 'certain' ? p.bad : p.muted;
      const x = i * this.col + this.col / 2;
      const label = fitLabel([`${CAUSE_SHORT[c.kind] ?? c.kind}${c.certainty === 'likely' ? '?' : ''}`], this.col - 2, (t) => ctx.measureText(t).width);
      if (label) ctx.fillText(label, x, y, this.col - 2);
      else {
        ctx.beginPath();
        ctx.arc(x, y, 2.5, 0, Math.PI * 2);
        ctx.fill();
      }
    }
  }

  private drawGaps(ctx: CanvasRenderingContext2D, p: Palette, first: number, last: number): void {
    const lane = this.lane('gap')!;
    const base = lane.top + lane.height - 3;
    const full = lane.height - 6;
    const ttlY = Math.round(base - full / GAP_SCALE) + 0.5;
    ctx.strokeStyle = p.grid;
    ctx.setLineDash([3, 3]);
    ctx.beginPath();
    ctx.moveTo(first * this.col, ttlY);
    ctx.lineTo((last + 1) * this.col, ttlY);
    ctx.stroke();
    ctx.setLineDash([]);
    const pad = Math.max(2, Math.floor(this.col * 0.3));
    for (let i = first; i <= last; i++) {
      const r = this.view[i];
      if (r.gapMs === null || r.ttlMs === null || r.ttlMs <= 0) continue;
      const ratio = r.gapMs / r.ttlMs;
      const hgt = Math.max(1, (Math.min(ratio, GAP_SCALE) / GAP_SCALE) * full);
      ctx.fillStyle = ratio > 1 ? p.bad : ratio > 0.8 ? p.warn : p.muted;
      ctx.fillRect(i * this.col + pad, base - hgt, this.col - 2 * pad, hgt);
    }
  }

  private drawPhux(ctx: CanvasRenderingContext2D, p: Palette, first: number, last: number): void {
    const lane = this.lane('phux');
    if (!lane) return;
    const y = lane.top + lane.height - 9;
    // base_seq links first (under the marks): an arc from the delta to its base message.
    ctx.lineWidth = 1;
    for (const [pos, msgs] of this.phuxAt) {
      for (const m of msgs) {
        if (m.kind !== 'delta' || m.baseSeq === undefined) continue;
        const from = this.phuxBySeq.get(m.baseSeq);
        if (from === undefined) continue;
        const lo = Math.min(from, pos);
        const hi = Math.max(from, pos);
        if (hi < first || lo > last) continue;
        const x1 = from * this.col + this.col / 2;
        const x2 = pos * this.col + this.col / 2;
        ctx.strokeStyle = this.violationLines.has(m.line) ? p.bad : p.muted;
        ctx.beginPath();
        ctx.moveTo(x1, y - 6);
        ctx.quadraticCurveTo((x1 + x2) / 2, lane.top + 1, x2, y - 6);
        ctx.stroke();
      }
    }
    ctx.textAlign = 'center';
    for (let i = first; i <= last; i++) {
      const msgs = this.phuxAt.get(i);
      if (!msgs) continue;
      const bad = msgs.some((m) => this.violationLines.has(m.line));
      ctx.fillStyle = bad ? p.bad : p.fg;
      const x = i * this.col + this.col / 2;
      // The longest form that fits the column whole (C4 Δ5, C4Δ5, Δ5+, CΔ), else a tick; the hover names them all.
      const label = fitLabel(phuxLabels(msgs, bad), this.col - 2, (t) => ctx.measureText(t).width);
      if (label) ctx.fillText(label, x, y, this.col - 2);
      else ctx.fillRect(Math.round(x) - 1, y - 4, 2, 8);
    }
  }

  private drawPersona(ctx: CanvasRenderingContext2D, p: Palette, first: number, last: number): void {
    const lane = this.lane('persona');
    if (!lane) return;
    ctx.textAlign = 'center';
    // reowned: re-baselined to another bot; memory-inbox: delivered at the bottom; memory-head: into the head (a drift).
    const glyph = { taken: '◆', stable: '=', refreshed: '↻', drift: '≠', reowned: '⇄', 'memory-inbox': '✉', 'memory-head': '≠' } as const;
    for (let i = first; i <= last; i++) {
      const evs = this.personaAt.get(i);
      if (!evs) continue;
      const drift = evs.some((e) => e.kind === 'drift' || e.kind === 'memory-head');
      ctx.fillStyle = drift ? p.bad : p.fg;
      ctx.fillText(evs.map((e) => glyph[e.kind] ?? '·').join(''), i * this.col + this.col / 2, lane.top + lane.height / 2, this.col - 1);
    }
  }
}

/** Short cause names for the cause lane (the detail and the option names use the full kind). */
const CAUSE_SHORT: Record<string, string> = {
  'system-changed': 'system',
  'tools-changed': 'tools',
  'history-rewritten': 'history',
  'representation-only': 'repr',
  'volatile-value': 'volatile',
  'params-changed': 'params',
  'model-switch': 'model',
  'phux-context-in-head': 'phux',
  'persona-drift': 'persona',
};

/** The option's accessible name: `Request N: <verdict>` (N = the request's number: `9`, `8.1`), then the causes (likely ones marked). */
export function optionName(r: RequestReport): string {
  const causes = r.causes.map((c) => `${c.kind}${c.certainty === 'likely' ? ' (likely)' : ''}`);
  const kind = r.kind !== 'agent' ? ` (${r.kind})` : '';
  return `Request ${r.number}: ${r.verdict}${causes.length ? `, ${causes.join(', ')}` : ''}${kind}`;
}

/** A chip's colour: a hue from the hash, so equal hashes look equal across requests. */
function chipColor(hash: string, p: Palette): string {
  const hue = parseInt(hash.slice(0, 6), 16) % 360;
  return `hsl(${hue} ${p.chipSat}% ${p.chipLight}%)`;
}
