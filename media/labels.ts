/**
 * Which text the canvas lanes draw in a column of a given width (pure: the text measure is passed
 * in, the canvas's `measureText` in the app). A label is drawn only inside its own column (at
 * most slightly condensed): a narrower column gets a shorter form, then none (the lane draws a
 * mark; the hover gives the text), so neighbours never run into each other.
 */

/** Width of `text` in CSS px, as it would be drawn. */
export type Measure = (text: string) => number;

/** Minimum space between two axis labels (CSS px). */
export const AXIS_GAP = 6;

/**
 * How many columns apart the axis labels are: the smallest of 1, 2, 5, 10, 20, 50, … columns of
 * `col` px that hold the widest label (`widest` px) and AXIS_GAP, so labels never touch.
 */
export function axisStep(col: number, widest: number): number {
  const need = widest + AXIS_GAP;
  for (let decade = 1; ; decade *= 10) {
    for (const m of [1, 2, 5]) if (m * decade * col >= need || decade >= 1e9) return m * decade;
  }
}

/**
 * How much narrower than its natural width a label may be drawn (fillText's maxWidth condenses
 * it): up to 15 % still reads; a label that would need more takes a shorter form.
 */
export const MAX_CONDENSE = 0.15;

/**
 * The first of `candidates` (longest form first) that fits `width` px condensed by at most
 * MAX_CONDENSE (draw it with `maxWidth` = `width`), else null.
 */
export function fitLabel(candidates: readonly string[], width: number, measure: Measure): string | null {
  for (const c of candidates) if (c && measure(c) * (1 - MAX_CONDENSE) <= width) return c;
  return null;
}

/** One phux context message of a column: kind and seq. */
export interface PhuxMark {
  kind: 'checkpoint' | 'delta';
  seq: number;
}

/**
 * The phux lane's label forms for a column's messages, longest first: `C4 Δ5`, `C4Δ5`, the
 * last message alone with a `+` for the others (`Δ5+`), the kinds alone (`CΔ`); `!` after each
 * when a message breaks an ADR-0067 rule.
 */
export function phuxLabels(msgs: readonly PhuxMark[], violation: boolean): string[] {
  if (!msgs.length) return [];
  const one = (m: PhuxMark) => `${m.kind === 'checkpoint' ? 'C' : 'Δ'}${m.seq}`;
  const last = msgs[msgs.length - 1];
  const forms = [msgs.map(one).join(' '), msgs.map(one).join(''), `${one(last)}${msgs.length > 1 ? '+' : ''}`, msgs.map((m) => (m.kind === 'checkpoint' ? 'C' : 'Δ')).join('')];
  const bang = violation ? '!' : '';
  return [...new Set(forms)].map((f) => `${f}${bang}`);
}
