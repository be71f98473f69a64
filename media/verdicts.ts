/** How each verdict is drawn and named (glyph, CSS class, words for the legend). */
export interface VerdictStyle {
  glyph: string;
  words: string;
}

export const VERDICTS: Record<string, VerdictStyle> = {
  hit: { glyph: '●', words: 'hit: read the cache as expected' },
  break: { glyph: '✕', words: 'break: the prefix changed (with its cause)' },
  cold: { glyph: '○', words: 'cold: first request of its lineage' },
  'ttl-expired': { glyph: '◷', words: 'ttl-expired: the entry outlived its TTL' },
  'below-minimum': { glyph: '▿', words: 'below-minimum: too short to cache' },
  'model-switch': { glyph: '⇄', words: 'model-switch: another model, another cache' },
  'unexplained-miss': { glyph: '?', words: 'unexplained-miss: prefix unchanged, read collapsed' },
  unknown: { glyph: '–', words: 'unknown: not enough evidence (or the request failed)' },
};

/** Style of a verdict, with a neutral fallback for a verdict this app does not know. */
export function verdictStyle(v: string): VerdictStyle {
  return VERDICTS[v] ?? { glyph: '·', words: v };
}

/** Verdicts that cost cache reads (the "n"/"p" keys jump between `break`s only). */
export const LOSSY = new Set(['break', 'ttl-expired', 'unexplained-miss']);
