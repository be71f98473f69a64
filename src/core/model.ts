/**
 * The normalized model every host reader produces and the core analyzes.
 *
 * Shape: Session → requests (send order) → a prefix chain of blocks in the provider's render
 * order (tools, system, messages). Lineages are derived by the core from provider, model and
 * cache key. Terms follow DESIGN.md "Terms".
 */
import type { BlockNode } from './chain.js';
import type { PersonaEvidence } from './persona.js';

/** Prefix segments in Anthropic render order. `params` holds what invalidates without being prefix bytes. */
export type Segment = 'tools' | 'system' | 'messages';

/**
 * Where a break can be located. `head` = tools + system seen as one opaque block (reconstructed
 * mode, when the host did not record them); `params` = model/thinking/tool_choice changes.
 */
export type BreakSegment = Segment | 'head' | 'params';

/** `wire`: exact request bytes known. `reconstructed`: messages rebuilt from the transcript. */
export type Evidence = 'wire' | 'reconstructed';

/** What a request was for: the agent loop, a summary (compaction / branch summary), a title. */
export type RequestKind = 'agent' | 'summary' | 'title';

/**
 * Token usage of one request, normalized once in the reader (units: tokens).
 * `uncached` excludes cache reads and writes (Anthropic `input_tokens`; OpenAI `prompt_tokens -
 * cached_tokens`). Prompt size = uncached + cacheRead + cacheWrite.
 * A field is null when the host recorded a value there that is not a token count (a string, a
 * negative or huge number, …; hosts/numbers.ts): unknown, never 0, left out of every sum.
 */
export interface Usage {
  uncached: number | null;
  cacheRead: number | null;
  cacheWrite: number | null;
  output: number | null;
}

/** An Anthropic-style cache breakpoint (`cache_control`, Bedrock `cachePoint`) on a block. */
export interface CacheBreakpoint {
  /** Entry lifetime in seconds: 300 (default ephemeral) or 3600 (`ttl: "1h"`). */
  ttlSeconds: number;
}

/**
 * One item of a segment: a tool definition, a system text block, or one message content block
 * (one whole message where the API sends content as a string).
 */
export interface Block {
  segment: Segment | 'head';
  /** 0-based index of the item within its segment: tool index, system block index, or message index. */
  item: number;
  /** JSON path of the block inside the request body, e.g. `messages[3].content[0]`, `tools[2]`. */
  path: string;
  /**
   * JSON path of the value the bytes begin at, when it is not `path`: the first block of a message
   * also carries the message envelope (`{"role":"user","content":[`), so it starts at `messages[3]`.
   */
  startPath?: string;
  /**
   * Canonical bytes (UTF-8), cache markers removed: the exact body bytes in wire mode, a
   * deterministic serialization of the transcript's block in reconstructed mode.
   */
  bytes: Uint8Array;
  /**
   * Reconstructed blocks: the canonical text, of which `bytes` is the UTF-8 encoding. Both may be
   * getters that serialize on each access (so a session does not keep a second copy of its
   * transcript): read them once where they are needed. A chain node reads `text` once, when it
   * is built (chain.ts).
   */
  readonly text?: string;
  /** Wire only: byte offset of the block's raw span in the request body. */
  bodyOffset?: number;
  /**
   * Wire only: byte ranges [start, end) of the raw span (relative to bodyOffset) that were removed
   * from `bytes` because they are cache markers; used to map offsets back to the body.
   */
  removed?: Array<[number, number]>;
  /** Cache breakpoint carried by this block in this request (not part of the bytes). */
  breakpoint?: CacheBreakpoint;
  /** Message role (messages segment), for display and cause classification. */
  role?: string;
  /**
   * What the host built this block from, when it is not an ordinary message: `compaction-summary`,
   * `branch-summary`, `branch-start` (the first message after a tree navigation that wrote no
   * summary), `phux-context`; on an opaque head, `user-system` when it carries a user
   * message's extra system text (OpenCode's per-message `system`). Used to name the cause.
   */
  origin?: string;
  /**
   * Named parts of the block's bytes, when the host composed the block from named sections
   * (PI-Desktop's `runtime`, `skills`, …): byte ranges [start, end) into `bytes`, in order. Used to
   * name the section a system change falls in (core/sections.ts).
   */
  sections?: SectionSpan[];
}

/** A named section of a block: byte range [start, end) into the block's bytes. */
export interface SectionSpan {
  name: string;
  start: number;
  end: number;
}

/**
 * How a host sends the system messages that follow the first (pi-ai `resolveTranscript`):
 * `collapsed` = replayed into the first system message, later ones dropped (so a delta rewrites
 * the head); `mid-conversation` = kept in place (only the tail is new).
 */
export type SystemShape = 'collapsed' | 'mid-conversation';

/** What a system delta did to one named section. */
export interface SectionDelta {
  name: string;
  change: 'added' | 'replaced' | 'removed';
}

/** What the transcript shows caused a system delta. */
export type DeltaCauseKind = 'delegation-settled' | 'skill-activation' | 'tool-activation' | 'context-budget' | 'compaction-checkpoint';

/** One system delta (a system message after the first, or a compaction checkpoint's fold). */
export interface SystemDelta {
  /** 1-based line of the system row (or compaction row) in the transcript. */
  line: number;
  /** Row id in the transcript. */
  id: string;
  sections: SectionDelta[];
  toolsAdded: string[];
  toolsRemoved: string[];
  cause: { kind: DeltaCauseKind; detail: string } | null;
}

/** The system-message shape a request was sent in, and the request rebuilt in the other shape. */
export interface SystemShapeInfo {
  used: SystemShape;
  /** False when the route's flag is unknown and `used` is the default (collapsed). */
  known: boolean;
  /** Where `used` comes from, in words (e.g. `models.compat_json (row deepseek/deepseek-v4-flash)`). */
  source: string;
  /** The prefix chain of the same request in the other shape. */
  alternate: BlockNode | null;
}

/** Prices in USD per million tokens, as the host or the provider rules give them. */
export interface Prices {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** A problem in the input, with its location. The rest of the input is still analyzed. */
export interface Diagnostic {
  file: string;
  /** 1-based line of the file; for databases a row reference rendered in `message`. */
  line: number;
  message: string;
  severity: 'error' | 'warning' | 'info';
  /**
   * Set on the summary of a file's bad lines a reader only counted (hosts/numbers.ts LineProblems,
   * past MAX_DIAGNOSTICS): how many lines it stands for, and the last of them (`line` is the first).
   */
  counted?: { lines: number; last: number };
}

/** Where a request came from in the host's files. */
export interface SourceRef {
  file: string;
  /** 1-based line (JSONL) or 0 with `row` set for database rows. */
  line: number;
  /** Database row reference, e.g. `message:msg_01…`. */
  row?: string;
}

/**
 * One model API call as the reader normalized it.
 * `tail` is the last node of the request's prefix chain; chains of requests that share a
 * prefix share nodes, so a session costs memory linear in its distinct blocks.
 */
export interface LlmRequest {
  /** 1-based send order within the session. */
  index: number;
  source: SourceRef;
  responseId?: string;
  provider: string;
  model: string;
  /** Wire API: `anthropic-messages`, `openai-completions`, `openai-responses`, … */
  api: string;
  kind: RequestKind;
  /**
   * How the reader knows `kind`: `heuristic` when it recognized the request by its body's text
   * alone (a captured body without tools whose text mentions a summary, a host's compaction or
   * summarization prompt, a title prompt), not from the transcript or the recorder's meta; absent
   * when the transcript or the meta says so. A cause inferred from such a kind (a compaction
   * between two requests) is `likely`, not `certain`.
   */
  kindEvidence?: 'heuristic';
  /**
   * True when the session has a transcript that records no entry for this request: only its
   * captured body shows it (a host's summary or title request, a failed attempt the host retried
   * and did not record). Such a request is numbered after the agent request before it
   * (core/numbering.ts), so the transcript's requests keep their numbers with or without bodies.
   */
  wireOnly?: true;
  /** Time the request was sent, ms since epoch, or null when unknown. */
  timeMs: number | null;
  /**
   * Time the response started (first byte, ms since epoch), when the capture recorded it: the
   * request's cache entry can be read from then on (reference/providers.md §1.2).
   */
  responseStartMs?: number;
  /** Time the response ended (ms since epoch), when the transcript records it (Pi entry time, OpenCode `time.completed`). */
  responseEndMs?: number;
  evidence: Evidence;
  usage: Usage | null;
  /** Last node of the prefix chain (render order), or null when nothing is known. */
  tail: BlockNode | null;
  /**
   * Wire requests whose chain shares an earlier request's nodes (core/wire.ts WireChains): this
   * request's own body offset (bytes) of the blocks at these depths (1-based) whose shared block
   * has another `bodyOffset` (members before them in the body grew). Absent when none differs.
   */
  bodyOffsets?: ReadonlyMap<number, number>;
  /**
   * Request parameters that invalidate the cache without being prefix bytes (thinking level,
   * effort, tool_choice, max tokens). Compared by value between requests of a lineage.
   */
  params: Record<string, string | number | boolean | null>;
  /** Provider cache key (`prompt_cache_key`, session id) when known; part of the lineage. */
  cacheKey?: string;
  /** Prices known from the transcript itself (e.g. Pi's `usage.cost` per token), USD per million tokens. */
  prices?: Prices;
  /** Set when the provider returned an error: the request is shown but does not write a cache entry. */
  error?: string;
  /** Human notes from the reader, e.g. "head opaque: Pi 0.73 does not record system prompt or tools". */
  notes?: string[];
  /** Hosts that fold system messages (PI-Desktop): the shape sent and the other shape's chain. */
  systemShape?: SystemShapeInfo;
  /** System deltas this request is the first to carry, in transcript order. */
  systemDeltas?: SystemDelta[];
  /** The host's own verdict on this request's cache read, when its transcript records one. */
  hostMiss?: HostMiss;
}

/**
 * A cache verdict the host itself recorded: Claude Code's `message.diagnostics.cache_miss_reason`
 * (the API's cache diagnostics; platform.claude.com/docs/en/build-with-claude/cache-diagnostics,
 * reference/claude-code-codex.md §1.7). It names a segment, never a block or byte.
 */
export interface HostMiss {
  /** Who said it, for display (`Claude Code`). */
  host: string;
  /**
   * `model_changed` | `system_changed` | `tools_changed` | `messages_changed` |
   * `previous_message_not_found` | `unavailable` (or a newer value, kept as is); null = no miss.
   */
  type: string | null;
  /** `cache_missed_input_tokens`: tokens, "a magnitude indicator rather than a billing number". */
  missedTokens?: number;
}

/**
 * An event of the transcript that the phux context-stream checks need, in transcript order:
 * a phux context message (where the host placed it), a compaction, a branch/tree movement.
 */
export type TranscriptEvent =
  | { kind: 'context'; text: string; line: number; placement: 'tail' | 'head'; timeMs: number | null }
  | { kind: 'compaction'; line: number; timeMs: number | null }
  | { kind: 'branch'; line: number; timeMs: number | null };

/** One host session, normalized. */
export interface Session {
  /** `pi`, `opencode`, `botharness`, … */
  host: string;
  id: string;
  /** File (or database) the session was read from. */
  path: string;
  title?: string;
  cwd?: string;
  /** Requests in send order. */
  requests: LlmRequest[];
  diagnostics: Diagnostic[];
  /** Entry types the reader kept as "ignored", with counts. */
  ignored: Record<string, number>;
  /** Transcript events for the phux context-stream checks, in transcript order. */
  events: TranscriptEvent[];
  /** 1-based lines (or row order) where a user turn starts, when the reader knows them (phux cost per turn). */
  turnLines?: number[];
  /** Parent session id (OpenCode child sessions), when any. */
  parentId?: string;
  /** BotHarness: the persona snapshot and what each request's system prompt shows of it (core/persona.ts). */
  persona?: PersonaEvidence;
}
