/**
 * Generated mutations of recorded host files (fast-check arbitraries, applied deterministically).
 *
 * A mutation is data (so fast-check can shrink and print it); `applyValueMutations` and
 * `applyLineMutation` turn it into bytes. Hostile values are written as raw JSON text, so values
 * that no JavaScript object could round-trip (100,000 levels of nesting, `1e999` = Infinity after
 * parsing, an own `__proto__` key) reach the reader exactly as a hostile file would hold them.
 */
import fc from 'fast-check';

/** Keys every plain object inherits: lookups by them must never find a built-in. */
export const PROTO_KEYS = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', 'isPrototypeOf', '__defineGetter__', 'toLocaleString'];

/** Strings a terminal would interpret, or that confuse readers and renderers. */
export const EVIL_STRINGS = [
  '\u001b]0;pwned\u0007',
  '\u001b[2J\u001b[31mred',
  '\u009b31mC1 CSI',
  'del\u007f',
  'bidi \u202eevil\u202c',
  'line\u2028separator',
  'cr\rlf\nnul\u0000',
  '',
  ' ',
  '\ud800 lone surrogate',
  '../../../etc/passwd',
];

/** A hostile JSON value, as raw text. */
export type Hostile =
  | { t: 'deep-array'; depth: number }
  | { t: 'deep-object'; depth: number }
  | { t: 'wide-array'; n: number }
  | { t: 'number'; text: string }
  | { t: 'string'; s: string }
  | { t: 'json'; v: unknown };

/** Raw JSON text of a hostile value. */
export function hostileText(h: Hostile): string {
  switch (h.t) {
    case 'deep-array':
      return '['.repeat(h.depth) + ']'.repeat(h.depth);
    case 'deep-object':
      return '{"a":'.repeat(h.depth) + '0' + '}'.repeat(h.depth);
    case 'wide-array':
      return `[${Array(h.n).fill('{}').join(',')}]`;
    case 'number':
      return h.text;
    case 'string':
      return JSON.stringify(h.s);
    case 'json':
      return JSON.stringify(h.v) ?? 'null';
  }
}

export const hostileArb: fc.Arbitrary<Hostile> = fc.oneof(
  { weight: 2, arbitrary: fc.integer({ min: 513, max: 100_000 }).map((depth) => ({ t: 'deep-array' as const, depth })) },
  { weight: 1, arbitrary: fc.integer({ min: 513, max: 20_000 }).map((depth) => ({ t: 'deep-object' as const, depth })) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 50_000 }).map((n) => ({ t: 'wide-array' as const, n })) },
  {
    weight: 3,
    arbitrary: fc
      .oneof(
        fc.constantFrom('1e999', '-1e999', '1e308', '-1e308', '8640000000000001', '-8640000000000001', '1e300', '-1', '-0', '0.5', '9007199254740993', '123456789012345678901234567890', '0'),
        fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
        fc.integer().map(String),
      )
      .map((text) => ({ t: 'number' as const, text })),
  },
  { weight: 3, arbitrary: fc.oneof(fc.constantFrom(...PROTO_KEYS, ...EVIL_STRINGS), fc.string({ unit: 'binary', maxLength: 40 })).map((s) => ({ t: 'string' as const, s })) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => ({ t: 'json' as const, v })) },
);

/**
 * One change inside a JSON value: set or delete the value at a path, rename a key (`pick` selects
 * the path among all of the value's), or set a named field (`field`: a path the reader looks at,
 * e.g. an entry's `type`; created when absent).
 */
export type ValueMutation =
  | { op: 'set'; pick: number; value: Hostile }
  | { op: 'delete'; pick: number }
  | { op: 'rename'; pick: number; key: string }
  | { op: 'field'; field: Array<string | number>; value: Hostile };

/** Values for named fields: prototype keys and evil strings most of all. */
const fieldValueArb: fc.Arbitrary<Hostile> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...PROTO_KEYS).map((s) => ({ t: 'string' as const, s })) },
  { weight: 3, arbitrary: hostileArb },
);

/** Mutations of named fields (the paths a reader indexes tables with or turns into numbers). */
export function fieldMutationArb(fields: Array<Array<string | number>>): fc.Arbitrary<ValueMutation> {
  return fc.record({ op: fc.constant('field' as const), field: fc.constantFrom(...fields), value: fieldValueArb });
}

export const valueMutationArb: fc.Arbitrary<ValueMutation> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('set' as const), pick: fc.nat(), value: hostileArb }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('rename' as const), pick: fc.nat(), key: fc.constantFrom(...PROTO_KEYS, 'type', 'role', 'id') }) },
);

type Slot = { parent: Record<string, unknown> | unknown[]; key: string | number };

/** Every slot (object member or array element) of a parsed value, in a stable order. */
function slots(root: unknown): Slot[] {
  const out: Slot[] = [];
  const stack: unknown[] = [root];
  while (stack.length) {
    const v = stack.pop();
    if (Array.isArray(v)) v.forEach((c, i) => (out.push({ parent: v, key: i }), stack.push(c)));
    else if (v && typeof v === 'object') for (const [k, c] of Object.entries(v)) out.push({ parent: v as Record<string, unknown>, key: k }), stack.push(c);
  }
  return out;
}

/**
 * Applies value mutations to one JSON text (an object); returns the new text. Text that is not a
 * JSON object is returned unchanged.
 */
export function applyValueMutations(text: string, muts: ValueMutation[]): string {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch {
    return text;
  }
  if (!root || typeof root !== 'object') return text;
  const raws: string[] = [];
  for (const m of muts) {
    if (m.op === 'field') {
      let parent = root as Record<string | number, unknown>;
      for (const k of m.field.slice(0, -1)) {
        const next = parent[k];
        if (!next || typeof next !== 'object') {
          parent = { [k]: 0 }; // not there: nothing to set (the path is the host's, not this line's)
          break;
        }
        parent = next as Record<string | number, unknown>;
      }
      raws.push(hostileText(m.value));
      setOwn(parent as Record<string, unknown>, m.field[m.field.length - 1], `@@HOSTILE${raws.length - 1}@@`);
      continue;
    }
    const all = slots(root);
    if (!all.length) break;
    const { parent, key } = all[m.pick % all.length];
    if (m.op === 'set') {
      raws.push(hostileText(m.value));
      setOwn(parent, key, `@@HOSTILE${raws.length - 1}@@`);
    } else if (m.op === 'delete') {
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key as string];
    } else if (!Array.isArray(parent)) {
      const v = parent[key as string];
      delete parent[key as string];
      setOwn(parent, m.key, v);
    }
  }
  return JSON.stringify(root).replace(/"@@HOSTILE(\d+)@@"/g, (_, i: string) => raws[Number(i)]);
}

/** An own property even for `__proto__` (JSON.stringify then writes it as a key, as a hostile file would). */
function setOwn(parent: Record<string, unknown> | unknown[], key: string | number, value: unknown): void {
  Object.defineProperty(parent, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A change to the lines of a text file. `at` selects the line (modulo the line count). */
export type LineMutation =
  | { op: 'value'; at: number; muts: ValueMutation[] }
  | { op: 'truncate'; at: number; keep: number }
  | { op: 'replace'; at: number; text: string }
  | { op: 'insert'; at: number; text: string }
  | { op: 'delete'; at: number }
  | { op: 'duplicate'; at: number }
  | { op: 'crlf' }
  | { op: 'bom' }
  | { op: 'no-final-newline' };

const garbageArb = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }).filter((s) => !s.includes('\n')),
  fc.constantFrom('{', '}', '[]', 'null', '"str"', '42', '{"type":', '\u0000\u0000', '{"type":"message"}', '{"type":"session","version":99}'),
  hostileArb.map(hostileText),
  fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v) ?? 'null'),
);

/**
 * Line mutations of a JSONL file. `fields`: the host's named fields (see fieldMutationArb);
 * `hot`: 0-based indices of the lines worth most attention (assistant entries, tool calls), chosen
 * half of the time for value mutations.
 */
export const lineMutationArb = (fields: Array<Array<string | number>>, hot: number[] = []): fc.Arbitrary<LineMutation> => {
  const at = hot.length ? fc.oneof(fc.nat(), fc.constantFrom(...hot)) : fc.nat();
  return fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('value' as const), at, muts: fc.array(valueMutationArb, { minLength: 1, maxLength: 3 }) }) },
  { weight: 6, arbitrary: fc.record({ op: fc.constant('value' as const), at, muts: fc.array(fieldMutationArb(fields), { minLength: 1, maxLength: 2 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('truncate' as const), at: fc.nat(), keep: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('replace' as const), at: fc.nat(), text: garbageArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('insert' as const), at: fc.nat(), text: garbageArb }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('duplicate' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ op: 'crlf' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'bom' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'no-final-newline' as const }) },
  );
};

/** How many slots (object members, array elements) a JSON text has; `{op:'set', pick}` picks among them. */
export function slotCount(text: string): number {
  return slots(JSON.parse(text)).length;
}

/** The mutated text, and for each original line (1-based) its new line number (null: gone or changed). */
export interface MutatedLines {
  text: string;
  /** Original line → line in the mutated file; absent when that line was removed or rewritten. */
  kept: Map<number, number>;
  /** 1-based line of the mutated file that holds the change, when one line does. */
  changed?: number;
}

/** Applies one line mutation to JSONL text (lines separated by LF, a final LF). */
export function applyLineMutation(text: string, m: LineMutation): MutatedLines {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const kept = new Map(lines.map((_, i) => [i + 1, i + 1] as const));
  const at = 'at' in m ? m.at % lines.length : 0;
  let end = '\n';
  let changed: number | undefined;
  switch (m.op) {
    case 'value': {
      const next = applyValueMutations(lines[at], m.muts);
      if (next !== lines[at]) {
        lines[at] = next;
        kept.delete(at + 1);
        changed = at + 1;
      }
      break;
    }
    case 'truncate':
      lines[at] = lines[at].slice(0, m.keep % Math.max(1, lines[at].length));
      kept.delete(at + 1);
      changed = at + 1;
      break;
    case 'replace':
      lines[at] = m.text;
      kept.delete(at + 1);
      changed = at + 1;
      break;
    case 'insert':
      lines.splice(at, 0, m.text);
      for (let i = at + 1; i <= lines.length - 1; i++) kept.set(i, i + 1);
      changed = at + 1;
      break;
    case 'delete':
      lines.splice(at, 1);
      kept.delete(at + 1);
      for (let i = at + 2; i <= lines.length + 1; i++) kept.set(i, i - 1);
      break;
    case 'duplicate':
      lines.splice(at, 0, lines[at]);
      for (let i = at + 1; i <= lines.length - 1; i++) kept.set(i, i + 1);
      break;
    case 'crlf':
      return { text: lines.map((l) => `${l}\r\n`).join(''), kept };
    case 'bom':
      return { text: `\ufeff${lines.join('\n')}\n`, kept };
    case 'no-final-newline':
      end = '';
      break;
  }
  return { text: lines.join('\n') + end, kept, changed };
}
