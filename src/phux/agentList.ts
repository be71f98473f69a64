/**
 * The `phux agent list --json` document (the fleet **projection**, DESIGN.md "Terms") and its
 * zod schema. Pure: no fs, no child_process.
 *
 * Source of the shape: reference/phux.md §1.2–§1.3, i.e. `AgentStateReport` in
 * `crates/phux/src/commands/agent/model.rs` and `print_agent_states` in
 * `crates/phux/src/commands/agent/mod.rs` (phall1/phux@16f2ffdf3b1363f36d1c93d5fe6f12f6216b5084),
 * plus the additive `agent_session` of no-phux/phux `model.rs`@0e355cf7 (ADR-0103). The only
 * literal sample upstream is docs/consumers/agents.md §4.7 (test/fixtures/phux/phux-agent-list-docs-example.json).
 *
 * Leniency (reference/phux.md §8): `schema_version` stays 1 across additive changes, so unknown
 * keys are kept (zod `looseObject`), never rejected; `agent.kind` is an open string (`open_code`,
 * `pi`, `omp`, … and kinds newer builds add). `state` and `attention` are closed enums as
 * documented (§1.3).
 */
import { parseBounded } from '../core/depth.js';
import { z } from 'zod';

/** Lifecycle state of a pane's agent (`AgentState`, serde snake_case; reference/phux.md §1.3). */
export const PHUX_STATES = ['unknown', 'idle', 'working', 'blocked', 'done'] as const;
/** Attention level (`Attention`; reference/phux.md §1.3). */
export const PHUX_ATTENTIONS = ['none', 'low', 'normal', 'high'] as const;
/**
 * `AgentKind` values known at phall1/phux@16f2ffdf (note `open_code`, not `opencode`). Only for
 * display and docs: the schema accepts any string (no-phux `integrations/runtime/src/schemas.ts`
 * @302b93da already adds `grok`, `amp`, `cursor_agent`, `gemini`, `goose`, `aider`).
 */
export const PHUX_KNOWN_AGENT_KINDS = ['codex', 'claude', 'open_code', 'pi', 'omp', 'plugin', 'declared', 'unknown'] as const;

/** `unknown` | `idle` | `working` | `blocked` | `done` (reference/phux.md §1.3). */
export type PhuxState = (typeof PHUX_STATES)[number];
/** `none` | `low` | `normal` | `high`; default blocked→high, working→normal, done/unknown→low, idle→none (reference/phux.md §1.3). */
export type PhuxAttention = (typeof PHUX_ATTENTIONS)[number];
/** An agent kind: one of `PHUX_KNOWN_AGENT_KINDS` or any newer snake_case slug. */
export type PhuxAgentKind = (typeof PHUX_KNOWN_AGENT_KINDS)[number] | (string & {});

/** One provenance entry of a row, sorted by descending confidence upstream. `rule`/`region` only on `detector_rule`. */
export const PhuxSourceSchema = z.looseObject({
  kind: z.string(),
  signal: z.string(),
  confidence: z.number(),
  observed: z.string(),
  rule: z.string().optional(),
  region: z.string().optional(),
});

/** no-phux ADR-0103 agent-session record: `{resource: "@N", provider, native_id | null}`. */
export const PhuxAgentSessionSchema = z.looseObject({
  resource: z.string(),
  provider: z.string(),
  native_id: z.string().nullable(),
});

/**
 * One pane (`AgentStateReport`). `terminal` is `"@N"` or `"<host>/@N"`; `window` is
 * `"window-<index>"` or `"unknown"`; `confidence` is 0..1; `title`/`cwd` may be null.
 */
export const PhuxAgentRowSchema = z.looseObject({
  terminal: z.string(),
  session: z.string(),
  window: z.string(),
  agent: z.looseObject({ id: z.string(), label: z.string(), kind: z.string() }),
  state: z.enum(PHUX_STATES),
  confidence: z.number(),
  attention: z.enum(PHUX_ATTENTIONS),
  title: z.string().nullable(),
  cwd: z.string().nullable(),
  sources: z.array(PhuxSourceSchema),
  explanation: z.string(),
  agent_session: PhuxAgentSessionSchema.nullable().optional(),
});

/** The whole document: `{"schema_version": 1, "agents": [row, …]}`, rows in byte-string order of `terminal`. */
export const PhuxAgentListSchema = z.looseObject({
  schema_version: z.literal(1),
  agents: z.array(PhuxAgentRowSchema),
});

/** `{kind, signal, confidence (0..1), observed, rule?, region?}` — see `PhuxSourceSchema`. */
export type PhuxSource = z.infer<typeof PhuxSourceSchema>;
/** `{resource, provider, native_id | null}` — see `PhuxAgentSessionSchema`. */
export type PhuxAgentSession = z.infer<typeof PhuxAgentSessionSchema>;
/** A validated pane row; unknown keys are kept as they came. `agent.kind` is typed as `PhuxAgentKind`. */
export type PhuxAgentRow = z.infer<typeof PhuxAgentRowSchema> & { agent: { kind: PhuxAgentKind } };
/** The validated `{schema_version: 1, agents}` document; unknown top-level keys kept. */
export type PhuxAgentList = { schema_version: 1; agents: PhuxAgentRow[] } & Record<string, unknown>;

/** Result of `parseAgentList`: the document, or why it is not one (`json`: not JSON; `schema`: JSON of another shape). */
export type AgentListParse =
  | { ok: true; list: PhuxAgentList }
  | { ok: false; cause: 'json' | 'schema'; message: string; issues: string[] };

/**
 * Parses and validates the stdout of `phux agent list --json`. Never throws.
 * `issues` are `"$.agents[1].state: Invalid option …"` strings (at most 20).
 */
export function parseAgentList(stdout: string): AgentListParse {
  let raw: unknown;
  try {
    // Depth-bounded (core/depth.ts): unknown pane fields are kept and re-encoded by `fleet --json`.
    raw = parseBounded(stdout).value;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { ok: false, cause: 'json', message: `phux agent list output is not JSON: ${message}`, issues: [] };
  }
  const result = PhuxAgentListSchema.safeParse(raw);
  if (!result.success) {
    const issues = result.error.issues.slice(0, 20).map((i) => `${jsonPath(i.path)}: ${i.message}`);
    return {
      ok: false,
      cause: 'schema',
      message: `phux agent list JSON does not match schema_version 1: ${issues[0] ?? 'invalid'}`,
      issues,
    };
  }
  return { ok: true, list: result.data as PhuxAgentList };
}

/** `['agents', 1, 'state']` → `$.agents[1].state`. */
export function jsonPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '$';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `.${String(p)}`;
  return out;
}
