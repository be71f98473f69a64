/**
 * The lines of a unified diff as `prefix-lens diff` prints them: a line longer than
 * MAX_DIFF_LINE_CHARS is cut so that a 50 MB message does not come out whole. A context line keeps
 * its start; a removed line and the added line paired with it (the i-th `-` and the i-th `+` of
 * one change) keep a window around the first character where they differ, so the change shows.
 * Each cut says how many characters it left out. Hunk headers and file lines are left as they are.
 */

/** Characters of a diff line printed before it is cut (its marker included). */
export const MAX_DIFF_LINE_CHARS = 2000;
/** Characters kept before the first difference of a cut changed line. */
const BEFORE_CHANGE = 200;

const omitted = (n: number): string => `… (${n.toLocaleString('en-US')} characters not shown)`;

/** `line` cut to its start (a context line). */
function head(line: string): string {
  const keep = MAX_DIFF_LINE_CHARS - 1;
  return `${line.slice(0, keep)}${omitted(line.length - keep)}`;
}

/** `line` (marker first) cut to a window that starts BEFORE_CHANGE characters before `at`. */
function around(line: string, at: number): string {
  const from = Math.max(1, Math.min(at - BEFORE_CHANGE, line.length - MAX_DIFF_LINE_CHARS));
  const to = Math.min(line.length, from + MAX_DIFF_LINE_CHARS - 1);
  return `${line[0]}${from > 1 ? omitted(from - 1) : ''}${line.slice(from, to)}${to < line.length ? omitted(line.length - to) : ''}`;
}

/** Index of the first character where `a` and `b` differ after their markers (the shorter length when one starts the other). */
function firstDifference(a: string, b: string): number {
  let i = 1;
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/**
 * The lines of `patch` (jsdiff's createTwoFilesPatch) to print: its `---`/`+++` lines, hunks and
 * body lines (not jsdiff's `=====` separator or `Index:` line), long ones cut.
 */
export function diffOutputLines(patch: string): string[] {
  const lines = patch.split('\n').filter((l) => /^(---|\+\+\+|@@|[ +\-\\])/.test(l));
  const out = lines.slice();
  // The file lines come first; after them a line starting `---` is a removed line of the body.
  let i = 0;
  while (i < lines.length && i < 2 && (lines[i].startsWith('---') || lines[i].startsWith('+++'))) i++;
  while (i < lines.length) {
    const l = lines[i];
    if (l.startsWith('@@') || l[0] === '\\') {
      i++;
      continue;
    }
    if (l[0] === ' ') {
      if (l.length > MAX_DIFF_LINE_CHARS) out[i] = head(l);
      i++;
      continue;
    }
    // One change: a run of removed lines, then the run of added lines that replaces it.
    let j = i;
    while (j < lines.length && lines[j][0] === '-') j++;
    let k = j;
    while (k < lines.length && lines[k][0] === '+') k++;
    const removed = j - i;
    const added = k - j;
    for (let x = 0; x < Math.max(removed, added); x++) {
      const a = x < removed ? i + x : -1;
      const b = x < added ? j + x : -1;
      const at = a >= 0 && b >= 0 ? firstDifference(lines[a], lines[b]) : 1;
      if (a >= 0 && lines[a].length > MAX_DIFF_LINE_CHARS) out[a] = around(lines[a], at);
      if (b >= 0 && lines[b].length > MAX_DIFF_LINE_CHARS) out[b] = around(lines[b], at);
    }
    i = Math.max(k, i + 1);
  }
  return out;
}
