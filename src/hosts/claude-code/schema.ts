/**
 * zod schemas for Claude Code transcript lines (`~/.claude/projects/<encoded cwd>/<session>.jsonl`),
 * checked per line at the boundary. Objects are loose: Claude Code adds fields in nearly every
 * release, and a line that does not fit is skipped with a diagnostic, never a crash.
 *
 * Sources: reference/claude-code-codex.md §1 (line types, usage, dedupe, 1.0.x–2.1.114), and the
 * lines Claude Code 2.1.328 writes, observed on the recordings in test/fixtures/claude-code:
 * besides the conversation lines it records every API request as
 *  - `api-request-shape` {shapeHash, shape: {system[], tools[]}}: the system blocks after the
 *    billing-header block and the tool definitions, cache markers removed, written once per shape;
 *  - `api-request-blob` {hash, message}: one wire message (cache markers removed), written once;
 *  - `api-request` {id, shapeHash, params, keep, tail[], cacheControl[]}: the messages are the
 *    first `keep` messages of the previous `api-request` of the file followed by the `tail` blobs;
 *    `cacheControl` lists the marker of each breakpoint by path (system index without the billing
 *    block, `["messages", i, "content", j]`);
 * and assistant lines name their request with `requestRef`.
 */
import { z } from 'zod';
import { hostIsoTime, optionalHostNumber, type ValueSpec } from '../numbers.js';

const USAGE: ValueSpec = {
  input_tokens: 'count',
  output_tokens: 'count',
  cache_creation_input_tokens: 'count',
  cache_read_input_tokens: 'count',
  cache_creation: { ephemeral_5m_input_tokens: 'count', ephemeral_1h_input_tokens: 'count' },
};
/**
 * The token counts and times of a transcript line, checked before its schema (numbers.ts
 * checkHostValues): a bad one is null, with one warning at the line.
 */
export const CC_VALUES: ValueSpec = {
  timestamp: 'iso',
  message: { usage: USAGE, diagnostics: { cache_miss_reason: { cache_missed_input_tokens: 'count' } } },
  compactMetadata: { preTokens: 'count' },
};

/** Anthropic usage as Claude Code stores it on assistant lines (tokens; input excludes cache). */
export const UsageSchema = z.looseObject({
  input_tokens: optionalHostNumber,
  output_tokens: optionalHostNumber,
  cache_creation_input_tokens: optionalHostNumber,
  cache_read_input_tokens: optionalHostNumber,
  cache_creation: z
    .looseObject({
      ephemeral_5m_input_tokens: optionalHostNumber,
      ephemeral_1h_input_tokens: optionalHostNumber,
    })
    .nullish(),
});
export type CcUsage = z.infer<typeof UsageSchema>;

/** The API's cache diagnostics as Claude Code stores them (`message.diagnostics`, reference §1.7). */
export const DiagnosticsSchema = z.looseObject({
  cache_miss_reason: z
    .looseObject({
      type: z.string(),
      cache_missed_input_tokens: optionalHostNumber,
    })
    .nullish(),
});

/** A content block: the known fields are read where they matter; the rest is passed through. */
export const ContentBlockSchema = z.looseObject({ type: z.string() });

/** Fields every conversation line (user, assistant, system, attachment) carries. */
const NodeFields = {
  uuid: z.string(),
  parentUuid: z.string().nullish(),
  timestamp: hostIsoTime,
  isSidechain: z.boolean().optional(),
  sessionId: z.string().optional(),
  agentId: z.string().optional(),
  cwd: z.string().optional(),
  version: z.string().optional(),
  entrypoint: z.string().optional(),
};

export const AssistantLineSchema = z.looseObject({
  type: z.literal('assistant'),
  ...NodeFields,
  requestId: z.string().optional(),
  /** 2.1.3xx: the `api-request` line this response answers. */
  requestRef: z.string().optional(),
  isApiErrorMessage: z.boolean().optional(),
  error: z.unknown().optional(),
  message: z.looseObject({
    id: z.string().optional(),
    model: z.string().optional(),
    role: z.string().optional(),
    content: z.union([z.string(), z.array(ContentBlockSchema)]).optional(),
    stop_reason: z.string().nullish(),
    usage: UsageSchema.nullish(),
    diagnostics: DiagnosticsSchema.nullish(),
  }),
});
export type AssistantLine = z.infer<typeof AssistantLineSchema>;

export const UserLineSchema = z.looseObject({
  type: z.literal('user'),
  ...NodeFields,
  isMeta: z.boolean().optional(),
  isCompactSummary: z.boolean().optional(),
  message: z.looseObject({
    role: z.string().optional(),
    content: z.union([z.string(), z.array(ContentBlockSchema)]),
  }),
});
export type UserLine = z.infer<typeof UserLineSchema>;

export const SystemLineSchema = z.looseObject({
  type: z.literal('system'),
  ...NodeFields,
  subtype: z.string().optional(),
  logicalParentUuid: z.string().nullish(),
  compactMetadata: z.looseObject({ trigger: z.string().optional(), preTokens: optionalHostNumber }).optional(),
  error: z.unknown().optional(),
  retryAttempt: z.number().optional(),
});
export type SystemLine = z.infer<typeof SystemLineSchema>;

export const ShapeLineSchema = z.looseObject({
  type: z.literal('api-request-shape'),
  shapeHash: z.string(),
  shape: z.looseObject({
    system: z.array(z.looseObject({})).optional(),
    tools: z.array(z.looseObject({})).optional(),
  }),
});
export type ShapeLine = z.infer<typeof ShapeLineSchema>;

export const BlobLineSchema = z.looseObject({
  type: z.literal('api-request-blob'),
  hash: z.string(),
  message: z.looseObject({ role: z.string(), content: z.unknown() }),
});
export type BlobLine = z.infer<typeof BlobLineSchema>;

export const ApiRequestLineSchema = z.looseObject({
  type: z.literal('api-request'),
  id: z.string(),
  timestamp: hostIsoTime,
  querySource: z.string().optional(),
  shapeHash: z.string(),
  params: z.looseObject({ model: z.string().optional() }).optional(),
  keep: z.number().int().nonnegative(),
  tail: z.array(z.string()),
  cacheControl: z.array(z.looseObject({ path: z.array(z.union([z.string(), z.number()])), value: z.looseObject({ ttl: z.string().optional() }) })).optional(),
});
export type ApiRequestLine = z.infer<typeof ApiRequestLineSchema>;

/** 2.1.x main-file copies of a sub-agent's messages (`data.type: "agent_progress"`, reference §1.1). */
export const ProgressLineSchema = z.looseObject({
  type: z.literal('progress'),
  data: z.looseObject({ type: z.string().optional(), agentId: z.string().optional(), message: z.unknown().optional() }).optional(),
});

/** The schema of each line type this reader uses; other types are counted as ignored. */
export const LINE_SCHEMAS = {
  assistant: AssistantLineSchema,
  user: UserLineSchema,
  system: SystemLineSchema,
  'api-request-shape': ShapeLineSchema,
  'api-request-blob': BlobLineSchema,
  'api-request': ApiRequestLineSchema,
  progress: ProgressLineSchema,
} as const;
export type CcLineType = keyof typeof LINE_SCHEMAS;
