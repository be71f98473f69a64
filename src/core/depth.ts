/**
 * Depth bound for untrusted JSON values. `JSON.parse` handles any depth, but re-encoding
 * (`JSON.stringify`) and every recursive walk of a value overflow the stack somewhere above
 * ~5,000–10,000 levels (V8's stack, default ~1 MB); a transcript line with 100,000 nested arrays
 * in a tool argument would then lose its whole file. Values are cut at `MAX_JSON_DEPTH` right after
 * parsing, so nothing later sees a deeper value. Pure, iterative (no recursion), O(nodes).
 */

/** Deepest nesting kept (objects and arrays; the root value is level 1). Real transcripts stay below 50. */
export const MAX_JSON_DEPTH = 512;

/** The text that replaces a value nested deeper than the bound. */
export const DEPTH_PLACEHOLDER = `[value nested deeper than ${MAX_JSON_DEPTH} levels: cut by Prefix Lens]`;

/** Where and how often a value was cut. */
export interface DepthCut {
  /** JSON path of the first container replaced (`$.message.content[0].arguments…`, shortened). */
  path: string;
  /** Containers replaced by the placeholder. */
  count: number;
}

/**
 * A JSON text can only nest deeper than `max` with more than `max` opening brackets, so texts
 * shorter than this (UTF-16 units) never need the walk.
 */
export function mayBeDeeper(textLength: number, max = MAX_JSON_DEPTH): boolean {
  return textLength > 2 * max;
}

/**
 * Replaces, in place, every object or array at nesting level `max + 1` by `DEPTH_PLACEHOLDER`.
 * `value` must be a freshly parsed JSON value (plain objects and arrays; no cycles).
 * @returns the cut (first path and count), or null when nothing was deeper than `max`
 */
export function cutDeep(value: unknown, max = MAX_JSON_DEPTH): DepthCut | null {
  if (value === null || typeof value !== 'object' || !deeperThan(value as object, max)) return null;
  // Explicit stack of [container, level, parent index, key]; parents are kept for the first path only.
  const nodes: Array<{ v: object; level: number; parent: number; key: string | number }> = [{ v: value, level: 1, parent: -1, key: '$' }];
  const stack: number[] = [0];
  let cut: DepthCut | null = null;
  while (stack.length) {
    const i = stack.pop()!;
    const { v, level } = nodes[i];
    const keys: Array<string | number> = Array.isArray(v) ? v.map((_, k) => k) : Object.keys(v);
    for (const k of keys) {
      const child = (v as Record<string | number, unknown>)[k];
      if (child === null || typeof child !== 'object') continue;
      if (level < max) {
        nodes.push({ v: child, level: level + 1, parent: i, key: k });
        stack.push(nodes.length - 1);
        continue;
      }
      // defineProperty: an own `__proto__` key (JSON.parse makes one) is replaced, not the prototype.
      Object.defineProperty(v, k, { value: DEPTH_PLACEHOLDER, enumerable: true, writable: true, configurable: true });
      if (cut) cut.count++;
      else cut = { path: pathOf(nodes, i, k), count: 1 };
    }
  }
  return cut;
}

/** The cheap first pass: is any container nested below level `max`? No paths, no allocation per node. */
function deeperThan(root: object, max: number): boolean {
  const stack: object[] = [root];
  const levels: number[] = [1];
  while (stack.length) {
    const v = stack.pop()!;
    const level = levels.pop()!;
    if (Array.isArray(v)) {
      for (let k = 0; k < v.length; k++) {
        const c: unknown = v[k];
        if (c === null || typeof c !== 'object') continue;
        if (level >= max) return true;
        stack.push(c);
        levels.push(level + 1);
      }
    } else {
      // JSON.parse makes plain objects: `for…in` sees exactly their own keys.
      for (const k in v) {
        const c: unknown = (v as Record<string, unknown>)[k];
        if (c === null || typeof c !== 'object') continue;
        if (level >= max) return true;
        stack.push(c);
        levels.push(level + 1);
      }
    }
  }
  return false;
}

/** `$.a[0].b…` for the child `key` of node `i`; long paths keep their first and last 6 steps. */
function pathOf(nodes: Array<{ parent: number; key: string | number }>, i: number, key: string | number): string {
  const keys: Array<string | number> = [key];
  for (let j = i; j > 0; j = nodes[j].parent) keys.push(nodes[j].key);
  keys.reverse();
  const step = (k: string | number) => (typeof k === 'number' ? `[${k}]` : /^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`);
  const steps = keys.map(step);
  return `$${steps.length > 12 ? `${steps.slice(0, 6).join('')}…${steps.slice(-6).join('')}` : steps.join('')}`;
}

/**
 * `JSON.parse` with the depth bound applied: the value, and the cut when there was one.
 * @throws SyntaxError as `JSON.parse` does for text that is not JSON
 */
export function parseBounded(text: string, max = MAX_JSON_DEPTH): { value: unknown; cut: DepthCut | null } {
  const value = JSON.parse(text) as unknown;
  return { value, cut: mayBeDeeper(text.length, max) ? cutDeep(value, max) : null };
}

/** Diagnostic text for a cut: where, how many, and what it means for the analysis. */
export function depthMessage(cut: DepthCut): string {
  return `value nested deeper than ${MAX_JSON_DEPTH} levels at ${cut.path}${cut.count > 1 ? ` (and ${cut.count - 1} more)` : ''} replaced by a placeholder; the rest is read, but bytes built from it are not the host's`;
}
