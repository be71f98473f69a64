// Shared helpers for the phux tests: fixture access and a renderer that formats a context body the
// way phux's `formatContext` does (shared/reference/phux.md §2.3), so sequences can be built from
// the recorded examples.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { TranscriptEvent } from '../../../src/core/model.js';
import { PHUX_CONTEXT_PREAMBLE } from '../../../src/phux/context.js';

export const FIXTURES = resolve(__dirname, '../../fixtures/phux');
export const FAKE_PHUX = join(FIXTURES, 'fake-phux.mjs');

/** A fixture file as UTF-8 text (byte-exact, no trailing newline added). */
export function fixture(name: string): string {
  return readFileSync(join(FIXTURES, name), 'utf8');
}

/** The JSON body line of a context message text. */
export function bodyOf(text: string): Record<string, any> {
  return JSON.parse(text.split('\n')[2]);
}

/** Renders a body as phux does: tag, preamble, compact JSON, closing tag, joined by \n. */
export function render(body: Record<string, unknown>): string {
  return `<phux-context version="${body.version}" kind="${body.kind}" seq="${body.seq}">\n${PHUX_CONTEXT_PREAMBLE}\n${JSON.stringify(body)}\n</phux-context>`;
}

/** A tail `context` event. */
export function ctx(text: string, line: number, placement: 'tail' | 'head' = 'tail'): TranscriptEvent {
  return { kind: 'context', text, line, placement, timeMs: null };
}

export function compaction(line: number): TranscriptEvent {
  return { kind: 'compaction', line, timeMs: null };
}

export function branch(line: number): TranscriptEvent {
  return { kind: 'branch', line, timeMs: null };
}

/** The emissions of phux-context-sequence.json by label prefix. */
export function sequenceText(labelPrefix: string): string {
  const seq = JSON.parse(fixture('phux-context-sequence.json')) as Array<{ label: string; emission: null | string | { text: string } }>;
  const hit = seq.find((s) => s.label.startsWith(labelPrefix));
  if (!hit || !hit.emission || typeof hit.emission === 'string') throw new Error(`no emission for ${labelPrefix}`);
  return hit.emission.text;
}

/** A minimal pane in phux's projected key order. */
export function pane(terminal: string, state = 'idle', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    terminal,
    session: 's',
    window: 'window-0',
    agent: { label: 'pi', kind: 'pi' },
    state,
    attention: state === 'working' ? 'normal' : 'none',
    cwd: '/w',
    ...extra,
  };
}

/** A checkpoint body with phux's key order. */
export function checkpoint(seq: number, panes: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { version: 1, kind: 'checkpoint', seq, availability: 'available', self: '@1', selected: null, panes, omitted: 0, ...extra };
}

/** A delta body (seq = base + 1) with the given changed keys. */
export function delta(seq: number, changes: Record<string, unknown>, baseSeq = seq - 1): Record<string, unknown> {
  return { version: 1, kind: 'delta', seq, base_seq: baseSeq, ...changes };
}
