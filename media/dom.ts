/**
 * The one way the app builds DOM: elements with attributes and text children. Strings always
 * become text nodes (`textContent`), never HTML: transcript and phux text is untrusted.
 */
type Child = Node | string | number | null | undefined | false;

/** Attributes set with `setAttribute` (values are plain strings, never parsed as markup). */
export type Attrs = Record<string, string | number | boolean | null | undefined>;

/** Creates `<tag>` with `attrs` (`class`, `id`, `aria-*`, …) and children (strings as text). */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs | null = null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith('on')) throw new Error(`h(): event handler attribute "${k}" is not allowed; use addEventListener`);
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, ...children);
  return el;
}

/** Appends children (strings as text nodes; null/false skipped). */
export function append(el: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

/** Removes every child of `el`. */
export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}
