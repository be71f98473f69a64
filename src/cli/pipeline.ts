/**
 * The CLI's analysis pipeline in bounded memory: inputs → SessionRefs (registry) → one session at a
 * time read, analyzed, turned into its report entry and released, so peak memory follows the
 * largest session, not the number of sessions. Output writers take the entries one by one.
 */
import { homedir } from 'node:os';
import { analyzeSession } from '../core/analyze.js';
import type { Session } from '../core/model.js';
import { openSessions } from '../hosts/open.js';
import { openRef, releaseReaders, resolveArg, type SessionRef } from '../hosts/registry.js';
import { sessionReport, type SessionReport } from '../report/json.js';
import { attachPhux } from '../report/phux.js';
import { copyBlock, DOC_EMPTY, DOC_END, DOC_START, SESSION_END, type CachedOutput } from '../cache/output.js';
import { analyzeRefUncached } from '../cache/results.js';
import { releaseBetweenSessions, type NextSession } from '../memory.js';
import { ByteBudget, refBytes } from './budget.js';

/**
 * One CLI input: a path or `host:id`, with the captured bodies to match against it (wire mode);
 * or sessions discovery already found (`refs`: the hosts' default folders, when no path is given),
 * analyzed in their order.
 */
export type Input = { path: string; requests?: string } | { refs: SessionRef[] };

/** Options of `sessionReports`. */
export interface PipelineOptions {
  env: NodeJS.ProcessEnv;
  /** Unreadable inputs are reported here (message without the `prefix-lens:` prefix). */
  onError: (message: string) => void;
  /** What a folder walk left out (registry findSessions: folders too deep), one message each; the input is still read. */
  onWarning?: (message: string) => void;
  /**
   * Analyzes one ref into its report entries (e.g. through the result cache); defaults to reading
   * and analyzing it in this thread.
   */
  analyzeRef?: (ref: SessionRef) => Promise<SessionReport[]>;
  /**
   * Parallel analysis for an input of `refs` sessions of `bytes` each (budget.ts refBytes; e.g. a
   * worker pool), or undefined to stay sequential: up to `ahead` refs are analyzed ahead of the one being yielded, as long as the
   * refs in flight hold no more bytes together than the input's largest ref (ByteBudget).
   * `analyze` gets the ref's bytes and the largest's, for the collection before it (memory.ts).
   */
  parallel?: (refs: number, bytes: readonly number[]) => { analyze: (ref: SessionRef, next: NextSession) => Promise<SessionReport[] | { rendered: RenderedSession[] }>; ahead: number } | undefined;
}

/**
 * The sessions at a CLI path, read in this thread (with wire bodies from `requestsDir` when
 * given): each session the registry resolves the path to (any host, at any depth below a
 * folder), else what the direct reader makes of it (with its diagnostics); `named`: the ids of the
 * refs the path resolved to (a ref's own session, not its sub-agents).
 * @throws Error for a path that does not exist
 */
export async function sessionsAt(path: string, requestsDir: string | undefined, env: NodeJS.ProcessEnv, onWarning?: (message: string) => void): Promise<{ sessions: Session[]; named: Set<string> }> {
  const refs = await resolveArg(path, { env, home: homedir(), onWarning });
  if (!refs.length) return { sessions: await openSessions(path, { requestsDir, env }), named: new Set() };
  const sessions: Session[] = [];
  for (const ref of refs) sessions.push(...(await openRef(ref, { requestsDir, env })));
  return { sessions, named: new Set(refs.map((r) => r.id)) };
}

/** The report entry of one read session (analysis + phux context stream). */
export function reportOf(s: Session): SessionReport {
  return attachPhux(sessionReport(analyzeSession(s)), s);
}

/** Reads and analyzes one ref in this thread (the cache's own uncached path, bundled rules). */
export function analyzeRefDirect(ref: SessionRef): Promise<SessionReport[]> {
  return analyzeRefUncached(ref);
}

/**
 * What the pipeline yields per ref: its sessions' report entries, or (when `cachedOutput` found
 * one) its `--json` bytes as cached (cache/output.ts). `ref` is null for inputs read directly
 * (wire mode, unrecognized paths).
 */
export type RefResult =
  | { ref: SessionRef | null; reports: SessionReport[] }
  | { ref: SessionRef; output: CachedOutput }
  | { ref: SessionRef; rendered: RenderedSession[] };

/**
 * One session's `--json` text rendered where it was analyzed (a worker thread), as UTF-8 chunks
 * of whole lines: the session's lines except its closing one, each with its newline (the block
 * JsonReportWriter.session writes and the output cache stores). Chunks have their own
 * ArrayBuffers, so they can be transferred instead of copied.
 */
export interface RenderedSession {
  chunks: Uint8Array[];
  requests: number;
  unreadable: boolean;
}

/** A session nothing could be read from: no requests and at least one error. */
export function unreadable(s: SessionReport): boolean {
  return s.requests.length === 0 && s.diagnostics.some((d) => d.severity === 'error');
}

/** Renders one session's `--json` block (see RenderedSession), lines passed through `transform`. */
export async function renderSession(s: SessionReport, transform: (line: string) => string): Promise<RenderedSession> {
  const chunks: Uint8Array[] = [];
  // Bytes sink that drops them: the writer's own start line is not part of the block; only the
  // tee sees the session's bytes.
  const w = new JsonReportWriter(() => {}, () => {});
  await w.session(s, undefined, transform, (b) => void chunks.push(b));
  return { chunks, requests: s.requests.length, unreadable: unreadable(s) };
}

/** Options of `refResults`: the pipeline's, plus the output-cache lookup tried first for each ref. */
export interface RefPipelineOptions extends PipelineOptions {
  cachedOutput?: (ref: SessionRef) => Promise<CachedOutput | null>;
  /** Tried after `cachedOutput` misses: the ref's sessions rendered from a saved state (cache/tail.ts), or null. */
  continued?: (ref: SessionRef) => Promise<RenderedSession[] | null>;
}

/**
 * Yields the report entry of every session the inputs name, in input order, holding one session
 * at a time. A ref named by two inputs is analyzed once. Inputs with `requests` are read whole
 * (bodies are matched against all sessions of the input at once; that is wire mode's debugging
 * use, one session at a time in practice).
 */
export async function* sessionReports(inputs: Input[], opts: PipelineOptions): AsyncGenerator<SessionReport> {
  // Without the output-cache lookup and with reports from `parallel`, every result has reports.
  for await (const r of refResults(inputs, opts)) if ('reports' in r) yield* r.reports;
}

/** `sessionReports` ref by ref (see RefResult), in input order. */
export async function* refResults(inputs: Input[], opts: RefPipelineOptions): AsyncGenerator<RefResult> {
  const seen = new Set<string>();
  const analyze = opts.analyzeRef ?? analyzeRefDirect;
  try {
    for (const input of inputs) {
      let refs: SessionRef[];
      if ('refs' in input) refs = input.refs;
      else {
        try {
          if (input.requests) {
            // Found as without --requests (any host, at any depth below a folder), each read with the bodies.
            const { sessions } = await sessionsAt(input.path, input.requests, opts.env, opts.onWarning);
            yield { ref: null, reports: sessions.map(reportOf) };
            continue;
          }
          refs = await resolveArg(input.path, { env: opts.env, home: homedir(), onWarning: opts.onWarning });
          // Nothing recognized: the direct reader says why (or reads what it can, with diagnostics).
          if (!refs.length) yield { ref: null, reports: (await openSessions(input.path, { env: opts.env })).map(reportOf) };
        } catch (e) {
          opts.onError((e as Error).message);
          continue;
        }
      }
      const todo = refs.filter((r) => !seen.has(r.key) && seen.add(r.key));
      const bytes = refBytes(todo);
      const par = todo.length > 1 ? opts.parallel?.(todo.length, bytes) : undefined;
      // A window of analyses in flight, within the byte budget; results are yielded in ref order.
      let largest = 0;
      for (const b of bytes) if (b > largest) largest = b;
      const run = async (ref: SessionRef, b: number): Promise<RefResult> => {
        const output = await opts.cachedOutput?.(ref);
        if (output) return { ref, output };
        const continued = await opts.continued?.(ref);
        if (continued) return { ref, rendered: continued };
        const r = await (par ? par.analyze(ref, { bytes: b, largest }) : analyze(ref));
        return Array.isArray(r) ? { ref, reports: r } : { ref, rendered: r.rendered };
      };
      const budget = new ByteBudget(largest);
      const window: Array<{ result: Promise<RefResult | Error>; bytes: number }> = [];
      const start = (ref: SessionRef, b: number) => {
        budget.take(b);
        window.push({ result: run(ref, b).catch((e: unknown) => new Error(`${ref.path}: ${(e as Error).message}`)), bytes: b });
      };
      let i = 0;
      while (i < todo.length || window.length) {
        while (i < todo.length && window.length <= (par?.ahead ?? 0) && budget.admits(bytes[i])) start(todo[i], bytes[i++]);
        const head = window.shift()!;
        let r: RefResult | Error | null = await head.result;
        if (r instanceof Error) opts.onError(r.message);
        else yield r;
        // The consumer is done with it: nothing of this session is referenced any more.
        r = null;
        budget.free(head.bytes);
        // In this thread, the next session starts right after (sequential): sized for it.
        releaseBetweenSessions(!par && i < todo.length ? { bytes: bytes[i], largest } : undefined);
      }
    }
  } finally {
    releaseReaders();
  }
}

/** Prefix and suffix lengths of `JSON.stringify` of a value wrapped in `depth` arrays, by depth. */
const wrapCut = new Map<number, { before: number; after: number }>();

/**
 * `JSON.stringify(v, null, 2)` with every line after the first indented by `spaces` (even):
 * the value is serialized inside `spaces / 2` nested arrays, which indents it natively, and the
 * wrapper's lines are cut off (no regex pass over the text). `v` must not be undefined.
 */
function indented(v: unknown, spaces: number): string {
  const depth = spaces >> 1;
  if (depth === 0 || spaces % 2 === 1) return JSON.stringify(v, null, 2).replace(/\n/g, `\n${' '.repeat(spaces)}`);
  let cut = wrapCut.get(depth);
  if (!cut) {
    let probe: unknown = 0;
    for (let i = 0; i < depth; i++) probe = [probe];
    const t = JSON.stringify(probe, null, 2);
    const at = t.indexOf('0');
    wrapCut.set(depth, (cut = { before: at, after: t.length - at - 1 }));
  }
  let w: unknown = v;
  for (let i = 0; i < depth; i++) w = [w];
  const t = JSON.stringify(w, null, 2);
  return t.slice(cut.before, t.length - cut.after);
}

/**
 * One line of a session's `--json` text in three pieces, `pre + body + post` (newline excluded):
 * `body` is the serialized value when the line holds one (else ''), so a writer can encode it as
 * it is, without first joining it to its indentation and comma (each join copies the text).
 */
export type JsonLinePieces = readonly [pre: string, body: string, post: string];

/**
 * The lines of `JSON.stringify(s, null, 2)` indented by `pad`, as pieces (JsonLinePieces),
 * produced request by request, so no string holds more than one request (a session of 40,000
 * requests is ~50 MB of JSON).
 */
export function* sessionJsonPieces(s: SessionReport, pad: string): Generator<JsonLinePieces> {
  const obj = s as unknown as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined && typeof obj[k] !== 'function');
  const inner = `${pad}  `;
  const item = `${inner}  `;
  yield [`${pad}{`, '', ''];
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    const comma = i < keys.length - 1 ? ',' : '';
    const v = obj[k];
    if (k === 'requests' && Array.isArray(v) && v.length > 0) {
      yield [`${inner}"requests": [`, '', ''];
      for (let j = 0; j < v.length; j++) yield [item, indented(v[j], item.length), j < v.length - 1 ? ',' : ''];
      yield [`${inner}]${comma}`, '', ''];
    } else yield [`${inner}${JSON.stringify(k)}: `, indented(v, inner.length), comma];
  }
  yield [`${pad}}`, '', ''];
}

/** The lines of `JSON.stringify(s, null, 2)` indented by `pad` (sessionJsonPieces joined), request by request. */
export function* sessionJsonLines(s: SessionReport, pad: string): Generator<string> {
  for (const [pre, body, post] of sessionJsonPieces(s, pad)) yield pre + body + post;
}

/** Bytes gathered before a chunk is written (fewer, larger writes: one syscall per line was a tenth of a run). */
const FLUSH_CHARS = 64 * 1024;

/**
 * UTF-8 bytes gathered line by line into one buffer, taken out as a chunk of exactly the bytes
 * written. Each string is encoded straight into it: no joined text of the chunk is built first.
 */
class Utf8Chunk {
  private buf = Buffer.allocUnsafeSlow(4 * FLUSH_CHARS);
  private at = 0;

  /** Bytes written since the last take. */
  get length(): number {
    return this.at;
  }

  /** Appends `text` as UTF-8 (a lone surrogate as U+FFFD's bytes, as Buffer.from writes it). */
  add(text: string): void {
    if (!text) return;
    // At most 3 bytes per UTF-16 unit.
    const need = this.at + 3 * text.length;
    if (need > this.buf.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(need, 2 * this.buf.length));
      this.buf.copy(grown, 0, 0, this.at);
      this.buf = grown;
    }
    this.at += this.buf.write(text, this.at, 'utf8');
  }

  /** The bytes written since the last take, in a buffer of their own; empties this one. */
  take(): Buffer {
    const out = Buffer.allocUnsafeSlow(this.at);
    this.buf.copy(out, 0, 0, this.at);
    this.at = 0;
    return out;
  }
}

/**
 * Streams `--json` (version 1) session by session, request by request. The bytes are exactly
 * those of `JSON.stringify(report, null, 2)`. `write` receives chunks of whole lines joined by
 * newlines, without the final newline (the sink adds it, as for one line).
 */
export class JsonReportWriter {
  /** The closing line of the previous session, held back for its comma. */
  private pending: string | null = null;
  private started = false;

  /**
   * @param write receives chunks of lines (without their final newline), in order; awaited (backpressure)
   * @param writeBytes optional: receives cached blocks as bytes (whole lines, newlines included)
   *   instead of decoded text through `write`
   */
  constructor(
    private readonly write: (chunk: string) => void | Promise<void>,
    private readonly writeBytes?: (bytes: Uint8Array) => void | Promise<void>,
  ) {}

  private async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.write(DOC_START);
  }

  /**
   * Adds one session. `tee` receives the session's text except its closing line (each line with
   * its newline): what the output cache stores (cache/output.ts); `teeBytes`, when given and the
   * writer has a bytes sink, the same as the UTF-8 bytes written there instead. With a bytes sink
   * each chunk is encoded once, here, for stdout and the entry (before, the stdout stream encoded
   * it and the entry's file stream again).
   * @param transform applied to each line before it is written (the CLI's jsonText); it must act
   *   character by character (it is applied to each piece of a line, JsonLinePieces)
   */
  async session(s: SessionReport, tee?: (text: string) => void | Promise<void>, transform: (line: string) => string = (l) => l, teeBytes?: (bytes: Uint8Array) => void | Promise<void>): Promise<void> {
    await this.start();
    if (this.pending !== null) await this.write(`${this.pending},`);
    this.pending = null;
    const asBytes = this.writeBytes ?? null;
    // Lines encoded piece by piece into UTF-8 chunks (Utf8Chunk); a text sink gets them decoded.
    const bytes = new Utf8Chunk();
    const flush = async () => {
      if (!bytes.length) return;
      const b = bytes.take();
      // Both sinks are awaited (backpressure): a slow one must not make the other's text queue.
      if (asBytes) {
        if (teeBytes) await teeBytes(b);
        else await tee?.(b.toString('utf8'));
        await asBytes(b);
        return;
      }
      // The chunk's lines each end with their newline; the text sink adds the last one.
      const text = b.toString('utf8');
      await tee?.(text);
      await this.write(text.slice(0, -1));
    };
    let prev: JsonLinePieces | null = null;
    for (const line of sessionJsonPieces(s, '    ')) {
      if (prev !== null) {
        // `transform` replaces characters one by one (jsonText), so it is applied piece by piece.
        bytes.add(transform(prev[0]));
        bytes.add(transform(prev[1]));
        bytes.add(transform(prev[2]));
        bytes.add('\n');
        if (bytes.length >= FLUSH_CHARS) await flush();
      }
      prev = line;
    }
    await flush();
    const last = prev && prev[0] + prev[1] + prev[2];
    if (last !== SESSION_END) throw new Error(`session JSON ends with ${JSON.stringify(last)}`);
    this.pending = last;
  }

  /**
   * Adds a session rendered elsewhere (renderSession); `tee` as for `session`, `teeBytes` the same
   * as bytes. With a bytes sink the chunks are written as they are (not decoded here and encoded
   * again by the sink).
   */
  async rendered(r: RenderedSession, tee?: (text: string) => void | Promise<void>, teeBytes?: (bytes: Uint8Array) => void | Promise<void>): Promise<void> {
    await this.start();
    if (this.pending !== null) await this.write(`${this.pending},`);
    this.pending = null;
    const decoder = new TextDecoder();
    for (const c of r.chunks) {
      if (this.writeBytes) {
        if (teeBytes) await teeBytes(c);
        else await tee?.(decoder.decode(c));
        await this.writeBytes(c);
        continue;
      }
      const text = decoder.decode(c);
      await tee?.(text);
      // A chunk is whole lines, each with its newline; the sink adds the last one.
      await this.write(text.slice(0, -1));
    }
    this.pending = SESSION_END;
  }

  /** Adds session `index` of a cached output entry (its bytes copied as they were written). */
  async cached(out: CachedOutput, index: number): Promise<void> {
    await this.start();
    if (this.pending !== null) await this.write(`${this.pending},`);
    this.pending = null;
    await copyBlock(out, index, this.write, this.writeBytes);
    this.pending = SESSION_END;
  }

  /** Writes the last session's end and closes the document. */
  async end(): Promise<void> {
    if (!this.started) {
      await this.write(DOC_EMPTY);
      return;
    }
    if (this.pending !== null) await this.write(this.pending);
    this.pending = null;
    await this.write(DOC_END);
  }
}
