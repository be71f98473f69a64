/**
 * Usage and response id read from a response as it streams through the capture proxy, without
 * holding it: SSE events are parsed line by line, a JSON (non-streamed) response is kept up to a
 * bound and parsed at its end. A compressed response (gzip, deflate, br, zstd) is decompressed on
 * a side copy; the bytes the agent receives are never touched.
 *
 * Where usage is, per API (the providers' stream formats, reference/providers.md §1):
 *  - Anthropic Messages: `message_start.message.usage` (input, cache read/write), then
 *    `message_delta.usage` (cumulative output; may restate input fields): merged, later wins.
 *    Response id: `message_start.message.id`.
 *  - OpenAI Chat Completions: the chunk that has `usage` (with `stream_options.include_usage`).
 *    Response id: the chunks' `id`.
 *  - OpenAI Responses: `response.completed` (or `.incomplete` / `.failed`) `response.usage`.
 *    Response id: `response.id`.
 *  - Non-streamed JSON of any of them: the top-level `usage` and `id`.
 */
import type { Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { Decompress } from 'fzstd';
import type { WireApi } from '../core/wire.js';

/** What the proxy learned from a response. `usage` is the provider's raw object (the capture format's `usage`). */
export interface ResponseFacts {
  usage: Record<string, unknown> | null;
  responseId: string | null;
  /** Why usage could not be read (unknown encoding, a line over the bound, a JSON body over the bound), when so. */
  note?: string;
}

/** Longest SSE line or JSON body kept for parsing, bytes (a Responses `response.completed` repeats the whole output). */
export const MAX_PARSED_BYTES = 32 * 1024 * 1024;

/**
 * Observes one response: `push` every chunk as it is forwarded, `end` once it ended.
 * Never throws: a response it cannot read leaves `usage` null with a `note`.
 */
export class ResponseObserver {
  private facts: ResponseFacts = { usage: null, responseId: null };
  private decoder = new TextDecoder();
  private line = '';
  private lineBytes = 0;
  private json: Buffer[] = [];
  private jsonBytes = 0;
  private sse: boolean;
  private inflate: Transform | null = null;
  private zstd: Decompress | null = null;
  private dead = false;
  private flushed: Promise<void> = Promise.resolve();

  /**
   * @param api the request's API
   * @param contentType the response's `content-type` (SSE when `text/event-stream`)
   * @param encoding the response's `content-encoding`, if any
   */
  constructor(
    private readonly api: WireApi,
    contentType: string | undefined,
    encoding: string | undefined,
  ) {
    this.sse = /text\/event-stream/i.test(contentType ?? '');
    const enc = (encoding ?? '').trim().toLowerCase();
    if (enc === '' || enc === 'identity') return;
    if (enc === 'gzip' || enc === 'x-gzip') this.inflate = createGunzip();
    else if (enc === 'deflate') this.inflate = createInflate();
    else if (enc === 'br') this.inflate = createBrotliDecompress();
    else if (enc === 'zstd') this.zstd = new Decompress((d) => this.plain(d));
    else {
      this.fail(`content-encoding ${enc} not read`);
      return;
    }
    if (this.inflate) {
      const z = this.inflate;
      z.on('data', (d: Buffer) => this.plain(d));
      z.on('error', (e: Error) => this.fail(`response not decompressed: ${e.message}`));
      this.flushed = new Promise((done) => {
        z.once('end', done);
        z.once('error', () => done());
      });
    }
  }

  /** One chunk of the response as received from the upstream. */
  push(chunk: Buffer): void {
    if (this.dead) return;
    try {
      if (this.inflate) this.inflate.write(chunk);
      else if (this.zstd) this.zstd.push(chunk);
      else this.plain(chunk);
    } catch (e) {
      this.fail(`response not decompressed: ${(e as Error).message}`);
    }
  }

  /** The response ended (or was cut): what was learned. */
  async end(): Promise<ResponseFacts> {
    if (!this.dead) {
      try {
        if (this.inflate) {
          this.inflate.end();
          await this.flushed;
        } else if (this.zstd) this.zstd.push(new Uint8Array(0), true);
      } catch (e) {
        this.fail(`response not decompressed: ${(e as Error).message}`);
      }
    }
    if (!this.dead) {
      if (this.sse) this.text(this.decoder.decode(), true);
      else this.parseJson();
    }
    return this.facts;
  }

  private fail(note: string): void {
    this.dead = true;
    this.facts.note ??= note;
    this.inflate?.destroy();
    this.json = [];
    this.line = '';
  }

  private plain(d: Uint8Array): void {
    if (this.dead) return;
    if (this.sse) this.text(this.decoder.decode(d, { stream: true }), false);
    else {
      this.jsonBytes += d.length;
      if (this.jsonBytes > MAX_PARSED_BYTES) this.fail(`response over ${MAX_PARSED_BYTES} bytes: usage not read`);
      else this.json.push(Buffer.from(d));
    }
  }

  /** SSE text: complete lines are handled, the rest kept (bounded). */
  private text(s: string, last: boolean): void {
    let start = 0;
    for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', start)) {
      this.sseLine(this.line + s.slice(start, i));
      this.line = '';
      this.lineBytes = 0;
      start = i + 1;
    }
    const rest = s.slice(start);
    this.lineBytes += rest.length;
    if (this.lineBytes > MAX_PARSED_BYTES) {
      this.facts.note ??= `an SSE line over ${MAX_PARSED_BYTES} characters was skipped`;
      this.line = '';
      this.lineBytes = -Infinity; // skip to the end of this line
      return;
    }
    if (this.lineBytes >= 0) this.line += rest;
    if (last && this.line) this.sseLine(this.line);
  }

  private sseLine(raw: string): void {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (!line.startsWith('data:')) return;
    const data = line.slice(5).trimStart();
    if (!data || data === '[DONE]') return;
    let ev: unknown;
    try {
      ev = JSON.parse(data);
    } catch {
      return;
    }
    if (ev && typeof ev === 'object') this.event(ev as Record<string, unknown>);
  }

  private event(ev: Record<string, unknown>): void {
    const obj = (v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null);
    const id = (v: unknown) => {
      if (typeof v === 'string' && v && this.facts.responseId === null) this.facts.responseId = v;
    };
    if (this.api === 'anthropic-messages') {
      const message = obj(ev.message);
      if (ev.type === 'message_start' && message) {
        id(message.id);
        this.merge(obj(message.usage));
      } else if (ev.type === 'message_delta') this.merge(obj(ev.usage));
    } else if (this.api === 'openai-completions') {
      id(ev.id);
      const u = obj(ev.usage);
      if (u) this.facts.usage = u;
    } else {
      const response = obj(ev.response);
      if (response) {
        id(response.id);
        const u = obj(response.usage);
        if (u) this.facts.usage = u;
      }
    }
  }

  /** Anthropic: later usage fields win, earlier ones stay. */
  private merge(u: Record<string, unknown> | null): void {
    if (!u) return;
    this.facts.usage = { ...(this.facts.usage ?? {}), ...Object.fromEntries(Object.entries(u).filter(([, v]) => v !== null)) };
  }

  private parseJson(): void {
    if (!this.json.length) return;
    let v: unknown;
    try {
      v = JSON.parse(Buffer.concat(this.json).toString('utf8'));
    } catch {
      this.facts.note ??= 'response is neither SSE nor JSON: usage not read';
      return;
    }
    this.json = [];
    const o = v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
    if (!o) return;
    // A Responses body is the response object itself; an error body has neither.
    if (typeof o.id === 'string' && o.id) this.facts.responseId = o.id;
    if (o.usage && typeof o.usage === 'object') this.facts.usage = o.usage as Record<string, unknown>;
  }
}
