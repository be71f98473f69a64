/**
 * Which section of a system block a change falls in, and whether text was appended, removed or
 * edited there. Works on any host's system block:
 *  - `named`: the block carries its sections' byte spans (`Block.sections`, e.g. PI-Desktop's
 *    `runtime`, `skills`, `skill:pdf`, composed by the reader);
 *  - `heading`: the nearest markdown heading (`#`…`######` at a line start) before the change;
 *  - `tag`: the innermost XML-like element open at the change (`<env>` … `</env>`), or one the
 *    change itself opens;
 *  - `key`: neither, but the changed line starts with a `name:` key (`x-anthropic-billing-header: …`).
 * For headings and tags, the JSON string the change lies in is decoded first (system blocks are
 * JSON: a string, `{"type":"text","text":…}` or `{"role":"system","content":…}`), so line starts and
 * tags are those of the text, not of its escapes. Of a heading and a tag, the one nearer the change
 * (opened later) names it.
 */
import type { BreakPoint } from './diverge.js';
import type { Block, SectionSpan } from './model.js';

/** How a section was recognized (`key`: no heading or tag, but the changed line starts with `name:`). */
export type SectionVia = 'named' | 'heading' | 'tag' | 'key';

/** A change inside a system block. Byte counts are UTF-8 bytes of the block (JSON escapes included). */
export interface SystemChange {
  /** The section's name (`skills`, `Project Context`, `env`), or null when the text shows none. */
  section: string | null;
  via: SectionVia | null;
  /** Headings and elements enclosing the section, outermost first (e.g. `Project Context`, the AGENTS.md path). */
  within: string[];
  /** `appended`: text added, nothing removed; `removed`: text removed, nothing added; `edited`: both. */
  change: 'appended' | 'removed' | 'edited';
  /** True when the change adds (or removes) a whole section: one that starts inside the changed bytes. */
  wholeSection: boolean;
  /** Bytes removed from the cached side and added on the request side (from the first changed byte to the common suffix). */
  removedBytes: number;
  addedBytes: number;
}

const utf8 = new TextDecoder();
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The system change of a break in the system segment, or null when the break is elsewhere.
 * A system block added at the end of the system prompt is `appended` (a removed one `removed`),
 * named by its first section.
 */
export function systemChange(bp: BreakPoint): SystemChange | null {
  if (bp.segment !== 'system') return null;
  const o = bp.oldBlock;
  const n = bp.newBlock;
  const oldSys = o?.segment === 'system' ? o : undefined;
  const newSys = n?.segment === 'system' ? n : undefined;
  if (!oldSys && !newSys) return null;
  if (!oldSys || !newSys) {
    const b = (newSys ?? oldSys)!;
    const first = firstSection(b);
    return { section: first?.name ?? null, via: first?.via ?? null, within: [], change: newSys ? 'appended' : 'removed', wholeSection: first !== null, removedBytes: newSys ? 0 : b.bytes.length, addedBytes: newSys ? b.bytes.length : 0 };
  }
  const ob = oldSys.bytes;
  const nb = newSys.bytes;
  const off = Math.min(bp.offsetInBlock, ob.length, nb.length);
  let suffix = 0;
  const max = Math.min(ob.length, nb.length) - off;
  while (suffix < max && ob[ob.length - 1 - suffix] === nb[nb.length - 1 - suffix]) suffix++;
  const removedBytes = ob.length - suffix - off;
  const addedBytes = nb.length - suffix - off;
  const change: SystemChange['change'] = removedBytes === 0 && addedBytes > 0 ? 'appended' : addedBytes === 0 && removedBytes > 0 ? 'removed' : 'edited';
  // The side that holds the changed text: the request's, unless text was only removed.
  const side = change === 'removed' ? oldSys : newSys;
  const len = change === 'removed' ? removedBytes : addedBytes;
  const found = side.sections ? namedAt(side.sections, off, len) : textSectionAt(side.bytes, off, len);
  return { section: found?.name ?? null, via: found?.via ?? null, within: found?.within ?? [], change, wholeSection: found?.whole ?? false, removedBytes, addedBytes };
}

/** One line for a cause detail: "section `skills` edited", "section `resumable` appended". */
export function describeSystemChange(c: SystemChange): string {
  if (c.section === null) return `text ${c.change} (no section heading or tag around it)`;
  const name = c.via === 'tag' ? `<${c.section}>` : c.section;
  const kind = c.via === 'heading' ? 'heading' : c.via === 'tag' ? 'element' : c.via === 'key' ? 'key' : 'section';
  const within = c.within.length ? ` (in ${c.within.join(' › ')})` : '';
  const it = `${kind} \`${name}\``;
  if (c.change === 'edited') return `${it} edited${within}`;
  if (c.wholeSection) return `${it} ${c.change === 'appended' ? 'added' : 'removed'}${within}`;
  return `text ${c.change === 'appended' ? 'appended to' : 'removed from'} ${it}${within}`;
}

interface Found {
  name: string;
  via: SectionVia;
  whole: boolean;
  within?: string[];
}

/** The named section a change at `off` (`len` bytes) falls in: one starting inside it first, else the one holding it. */
function namedAt(spans: readonly SectionSpan[], off: number, len: number): Found | null {
  const starting = spans.find((s) => s.start >= off && s.start < off + Math.max(len, 1));
  if (starting && len > 0) return { name: starting.name, via: 'named', whole: true };
  const holding = spans.find((s) => s.start <= off && off < s.end) ?? spans.find((s) => s.end === off);
  return holding ? { name: holding.name, via: 'named', whole: false } : null;
}

/** The first section of a block (named span, heading or tag), for a block added or removed whole. */
function firstSection(b: Block): { name: string; via: SectionVia } | null {
  if (b.sections?.length) return { name: b.sections[0].name, via: 'named' };
  const text = decodeStrings(b.bytes, 0, b.bytes.length);
  const h = /(?:^|\n)[ \t]*#{1,6}[ \t]+([^\n]+)/.exec(text);
  const t = /<([A-Za-z][\w.:-]*)(?:\s[^<>]*)?>/.exec(text);
  if (h && (!t || h.index <= t.index)) return { name: h[1].replace(/\s+#+\s*$/, '').trim(), via: 'heading' };
  if (t) return { name: t[1], via: 'tag' };
  return null;
}

/**
 * Start of the JSON string that byte `off` lies in (the index of its opening quote), or -1 when
 * `off` is outside every string.
 */
function stringStart(bytes: Uint8Array, off: number): number {
  let open = -1;
  for (let i = 0; i < off && i < bytes.length; i++) {
    if (open >= 0) {
      if (bytes[i] === BACKSLASH) i++;
      else if (bytes[i] === QUOTE) open = -1;
    } else if (bytes[i] === QUOTE) open = i;
  }
  return open;
}

/** Decodes the raw JSON-string bytes [from, to) leniently (a cut escape at either end is dropped). */
function decodeRaw(bytes: Uint8Array, from: number, to: number): string {
  let raw = utf8.decode(bytes.subarray(from, to));
  // A cut escape at the end: `\`, `\u00`…
  raw = raw.replace(/\\(u[0-9a-fA-F]{0,3})?$/, '');
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw.replace(/\\n/g, '\n').replace(/\\t/g, '\t').replace(/\\"/g, '"').replace(/\\u003c/gi, '<').replace(/\\u003e/gi, '>').replace(/\\\\/g, '\\');
  }
}

/** The text of every JSON string in bytes [from, to), each string's text on its own line(s). */
function decodeStrings(bytes: Uint8Array, from: number, to: number): string {
  const out: string[] = [];
  let open = -1;
  for (let i = from; i < to; i++) {
    if (open >= 0) {
      if (bytes[i] === BACKSLASH) i++;
      else if (bytes[i] === QUOTE) {
        out.push(decodeRaw(bytes, open + 1, i));
        open = -1;
      }
    } else if (bytes[i] === QUOTE) open = i;
  }
  if (open >= 0) out.push(decodeRaw(bytes, open + 1, to));
  // Not JSON at all (plain text bytes): the text itself.
  return out.length ? out.join('\n') : utf8.decode(bytes.subarray(from, to));
}

const HEADING = /(?:^|\n)[ \t]*(#{1,6})[ \t]+([^\n]*)/g;
const TAG = /<(\/?)([A-Za-z][\w.:-]*)((?:\s[^<>]*)?)(\/?)>/g;

/**
 * The heading or tag section a change at byte `off` (`len` bytes on that side) falls in, from the
 * text of the JSON string that holds it.
 */
function textSectionAt(bytes: Uint8Array, off: number, len: number): Found | null {
  const open = stringStart(bytes, off);
  const from = open >= 0 ? open + 1 : 0;
  const before = open >= 0 ? decodeRaw(bytes, from, off) : utf8.decode(bytes.subarray(0, off));
  // Up to the end of the string (or of the changed bytes, if further).
  let end = off;
  if (open >= 0) {
    while (end < bytes.length && bytes[end] !== QUOTE) end += bytes[end] === BACKSLASH ? 2 : 1;
  }
  end = Math.min(bytes.length, Math.max(end, off + len));
  const changed = open >= 0 ? decodeRaw(bytes, off, Math.min(end, off + len)) : utf8.decode(bytes.subarray(off, off + len));
  // A section the changed text itself starts (a heading or an opening tag at its first non-blank characters).
  const lead = /^\s*(?:(#{1,6})[ \t]+([^\n]*)|<([A-Za-z][\w.:-]*)(?:\s[^<>]*)?>)/.exec(changed);
  if (lead && len > 0 && (before.length === 0 || before.endsWith('\n') || /^\s*\n/.test(changed) || lead[3])) {
    return lead[3] ? { name: lead[3], via: 'tag', whole: true } : { name: lead[2].replace(/\s+#+\s*$/, '').trim(), via: 'heading', whole: true };
  }
  // Headings as an outline: a heading closes the ones of its level and deeper.
  const outline: Array<{ level: number; name: string; at: number }> = [];
  for (const m of before.matchAll(HEADING)) {
    const level = m[1].length;
    while (outline.length && outline[outline.length - 1].level >= level) outline.pop();
    outline.push({ level, name: m[2].replace(/\s+#+\s*$/, '').trim(), at: m.index });
  }
  const heading = outline[outline.length - 1] ?? null;
  // A heading whose line the change is still on counts (the change edits the heading itself).
  const stack: Array<{ name: string; at: number }> = [];
  for (const m of before.matchAll(TAG)) {
    if (m[4] === '/') continue;
    if (m[1] === '/') {
      const i = stack.map((s) => s.name).lastIndexOf(m[2]);
      if (i >= 0) stack.length = i;
    } else stack.push({ name: m[2], at: m.index });
  }
  // The change inside an element's opening tag (an attribute changed): that element.
  const opening = /<([A-Za-z][\w.:-]*)(?:\s[^<>]*)?$/.exec(before);
  if (opening) stack.push({ name: opening[1], at: opening.index });
  const tag = stack[stack.length - 1] ?? null;
  if (tag && (!heading || tag.at > heading.at)) {
    const within = [...outline.filter((h) => h.at < tag.at).map((h) => h.name), ...stack.slice(0, -1).map((t) => `<${t.name}>`)];
    return { name: tag.name, via: 'tag', whole: false, within };
  }
  if (heading) {
    const within = [...stack.filter((t) => t.at < heading.at).map((t) => `<${t.name}>`), ...outline.slice(0, -1).map((h) => h.name)];
    return { name: heading.name, via: 'heading', whole: false, within };
  }
  // The line the change is on, when it starts with a `name:` key.
  const line = before.slice(before.lastIndexOf('\n') + 1);
  const key = /^[ \t]*([A-Za-z][\w.-]{0,63}):\s/.exec(line);
  if (key) return { name: key[1], via: 'key', whole: false };
  return null;
}
