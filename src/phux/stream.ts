/**
 * The phux context stream of one host session: replay of the checkpoint/delta chain (the fleet as
 * the model saw it after each message), the ADR-0067 checks, and what the stream cost.
 * Pure: no fs, no child_process; never throws on bad input.
 *
 * Input is `Session.events` (src/core/model.ts `TranscriptEvent`, transcript order): the host
 * readers turn Pi `custom_message` entries (customType `phux-context`), OpenCode V1 synthetic text
 * parts (`metadata.phuxContext`) and OpenCode V2 system parts into `context` events, and report
 * `compaction` and `branch` events. Emission rules replayed here: reference/phux.md §2.6 (`emit` in
 * phall1/phux@16f2ffdf `integrations/pi/src/awareness.ts`) and ADR-0067 decisions 2–8.
 */
import type { TranscriptEvent } from '../core/model.js';
import {
  comparePanes,
  DEFAULT_CONTEXT_LIMITS,
  findContextMessages,
  outsideTextProblem,
  parseContextMessage,
  textOutsideMessages,
  type ContextBody,
  type ContextLimits,
  type ContextPane,
  type ContextRuleId,
} from './context.js';
import { isDeepStrictEqual } from 'node:util';
import { utf8Length } from './sanitize.js';

/**
 * The fleet as the model knows it after a message. `availability` is `unknown` before the first
 * checkpoint of a chain. `panes` are kept in phux order (`comparePanes`); `reason` is the failure
 * text of an unavailable projection, else null.
 */
export interface FleetContextState {
  availability: 'available' | 'unavailable' | 'unknown';
  self: string | null;
  selected: string | null;
  panes: ContextPane[];
  omitted: number;
  reason: string | null;
}

/** One context message of the stream (identical re-sends of the previous message are folded into `repeats`). */
export interface ContextStreamMessage {
  seq: number;
  kind: 'checkpoint' | 'delta';
  /** 1-based transcript line of the event that carried it. */
  line: number;
  /** UTF-8 bytes of the message text (tags + preamble + JSON). */
  bytes: number;
  /** Panes carried by the message: checkpoint `panes`, delta `upsert` (0 when invalid). */
  panes: number;
  /** Terminal ids a delta removes (0 for checkpoints). */
  removed: number;
  /** `omitted` after the message (a delta without `omitted` keeps the previous count). */
  omitted: number;
  /** Delta only: `base_seq`. */
  baseSeq?: number;
  placement: 'tail' | 'head';
  timeMs: number | null;
  /** False when the message failed validation; then `state` is the state before it. */
  valid: boolean;
  /** How many times the identical text was sent again right after (e.g. an OpenCode V2 system suffix per request). */
  repeats: number;
  /** True when it came through the OpenCode compaction hook (`PHUX_COMPACTION_HOOK_PREFIX`). */
  compactionHook: boolean;
  /** True when it starts a new chain after a host restart (seq 1 after earlier messages). */
  restart: boolean;
  /** The fleet as the model saw it after this message. */
  state: FleetContextState;
}

/** One ADR-0067 violation. `rule` ids and their ADR clauses: `CONTEXT_RULES` in context.ts. */
export interface ContextViolation {
  rule: ContextRuleId;
  /** 1-based transcript line of the offending event. */
  line: number;
  message: string;
  /** seq of the offending message, when known. */
  seq?: number;
}

/**
 * What the stream cost, from the messages alone. Bytes are exact (UTF-8 of the message text);
 * tokens are an estimate: `ceil(bytes / 4)`, not a tokenizer count.
 * A message is counted once, where it was appended: a tail message stays in the cached prefix
 * afterwards; `repeats` (identical re-sends, typical of a head/system placement) are counted
 * apart in `repeatedBytes`.
 */
export interface ContextStreamCost {
  messages: number;
  bytes: number;
  estimatedTokens: number;
  checkpoints: { count: number; bytes: number };
  deltas: { count: number; bytes: number };
  /** Checkpoints the ADR forces without a fleet change (after compaction, branch, the compaction hook, restart). */
  forcedCheckpoints: { count: number; bytes: number };
  /** Identical re-sends folded into `repeats`, and their bytes. */
  repeats: number;
  repeatedBytes: number;
  /**
   * UTF-8 bytes of tail context events outside any message (text added around the
   * `formatContext` output; each such event is an `invalid-message` violation). Not in `bytes`.
   */
  outsideBytes: number;
  /**
   * Per user turn, when `turnLines` was given: the messages appended from that turn's line up to
   * the next turn's line. Otherwise null (events alone do not mark turns).
   */
  perTurn: Array<{ line: number; messages: number; bytes: number; estimatedTokens: number }> | null;
  /** Bytes of messages before the first turn line (null without `turnLines`). */
  beforeFirstTurnBytes: number | null;
  /** Context-eligible turns = `turnLines.length` (null without `turnLines`). */
  eligibleTurns: number | null;
  /**
   * Eligible turns that appended no message and so paid nothing for the stream: phux edge-filtered
   * an unchanged fleet (or an identical failure). The transcript cannot tell this apart from
   * awareness being off for that turn. Null without `turnLines`.
   */
  silentTurns: number | null;
}

/** The analysis of one session's context stream. */
export interface ContextStreamReport {
  messages: ContextStreamMessage[];
  violations: ContextViolation[];
  /** Lines of the messages that start a new chain because the host restarted (info, not a violation). */
  restarts: number[];
  cost: ContextStreamCost;
}

/** Options of `analyzeContextStream`. */
export interface ContextStreamOptions {
  /** Bounds to check against. Default `DEFAULT_CONTEXT_LIMITS` (8 192 bytes, 64 panes, 8 deltas). */
  limits?: Partial<ContextLimits>;
  /**
   * 1-based lines where a new model-facing user turn starts (the host's user messages), ascending.
   * ADR-0067 refreshes at each such turn, so these are the context-eligible turns of the cost view.
   */
  turnLines?: number[];
}

/** The empty state a chain starts from. */
export function emptyFleetState(): FleetContextState {
  return { availability: 'unknown', self: null, selected: null, panes: [], omitted: 0, reason: null };
}

/**
 * Applies one message to a state: a checkpoint replaces everything; a delta sets the top-level
 * keys it carries, upserts panes by `terminal` and drops `removed` terminals. Returns a new state.
 */
export function applyContextBody(state: FleetContextState, body: ContextBody): FleetContextState {
  if (body.kind === 'checkpoint') {
    return {
      availability: body.availability,
      self: body.self,
      selected: body.selected,
      panes: [...body.panes].sort(comparePanes),
      omitted: body.omitted,
      reason: body.reason ?? null,
    };
  }
  const byTerminal = new Map(state.panes.map((p) => [p.terminal, p] as const));
  for (const t of body.removed ?? []) byTerminal.delete(t);
  for (const p of body.upsert ?? []) byTerminal.set(p.terminal, p);
  return {
    availability: body.availability ?? state.availability,
    self: body.self !== undefined ? body.self : state.self,
    selected: body.selected !== undefined ? body.selected : state.selected,
    panes: [...byTerminal.values()].sort(comparePanes),
    omitted: body.omitted ?? state.omitted,
    reason: body.reason !== undefined ? body.reason : state.reason,
  };
}

/**
 * Replays and checks the context stream of one session (events in transcript order).
 *
 * Chains: the first message starts one; a message with seq 1 after earlier messages starts a new
 * one (the host restarted: phux keeps sequences in memory only, reference/phux.md §2.6 item 5) and
 * its line goes to `restarts`. Messages are taken in transcript order, never sorted by seq.
 *
 * Rules (ids in `CONTEXT_RULES`): message-local ones from `parseContextMessage`, plus
 * `first-not-checkpoint`, `delta-base-seq`, `seq-not-increasing`, `too-many-deltas`,
 * `no-checkpoint-after-compaction`, `no-checkpoint-after-branch`, `unchanged-projection`,
 * `unavailable-repeated`, `failure-not-checkpoint`, `recovery-not-checkpoint`, `too-many-panes`
 * (on the replayed fleet) and `context-in-head`. A context event with no complete message gives
 * `invalid-message`. Forced checkpoints (after compaction/branch, the OpenCode compaction hook and
 * the checkpoint right after it, a restart) are exempt from `unchanged-projection`.
 */
export function analyzeContextStream(events: TranscriptEvent[], options: ContextStreamOptions = {}): ContextStreamReport {
  const limits: ContextLimits = { ...DEFAULT_CONTEXT_LIMITS, ...options.limits };
  const messages: ContextStreamMessage[] = [];
  const violations: ContextViolation[] = [];
  const restarts: number[] = [];
  const forcedFlags: boolean[] = [];
  let state = emptyFleetState();
  let deltasInRow = 0;
  let pendingForce: 'compaction' | 'branch' | null = null;
  let repeats = 0;
  let repeatedBytes = 0;
  let outsideBytes = 0;
  /** Text of the last recorded message, to fold identical re-sends. */
  let lastText: string | undefined;

  for (const ev of events) {
    if (ev.kind === 'compaction' || ev.kind === 'branch') {
      pendingForce = ev.kind;
      continue;
    }
    const found = findContextMessages(ev.text);
    if (found.length === 0) {
      violations.push({ rule: 'invalid-message', line: ev.line, message: 'context text holds no complete <phux-context>…</phux-context> message' });
      continue;
    }
    if (ev.placement === 'tail') {
      // Sent with the messages on every later request, but no part of any: flagged and counted.
      const outside = textOutsideMessages(ev.text, found);
      const problem = outsideTextProblem(outside);
      if (problem) {
        violations.push({ ...problem, line: ev.line });
        outsideBytes += utf8Length(outside);
      }
    }
    for (const m of found) {
      const prev = messages[messages.length - 1];
      if (prev && m.text === lastText) {
        prev.repeats += 1;
        repeats += 1;
        repeatedBytes += prev.bytes;
        continue;
      }
      const parsed = parseContextMessage(m.text, limits);
      const body = parsed.body;
      const kind = body?.kind ?? parsed.header?.kind;
      const seq = body?.seq ?? parsed.header?.seq;
      const add = (rule: ContextRuleId, message: string): void => {
        violations.push({ rule, line: ev.line, message, ...(seq !== undefined ? { seq } : {}) });
      };
      for (const p of parsed.problems) add(p.rule, p.message);
      if (ev.placement === 'head') {
        add('context-in-head', 'the context message sits in the request head (system prompt or tools), so each fleet change rewrites the cached prefix');
      }
      if ((kind !== 'checkpoint' && kind !== 'delta') || seq === undefined) continue;

      const restart = prev !== undefined && seq === 1;
      if (restart) {
        restarts.push(ev.line);
        state = emptyFleetState();
        deltasInRow = 0;
      }
      const chainStart = prev === undefined || restart;
      const forced = chainStart || pendingForce !== null || m.compactionHook || (prev?.compactionHook ?? false);

      if (!chainStart && seq <= prev.seq) {
        add('seq-not-increasing', `seq ${seq} after seq ${prev.seq} (only seq 1 may restart a chain)`);
      }
      if (kind === 'delta') {
        deltasInRow += 1;
        if (chainStart) {
          add('first-not-checkpoint', `the chain starts with delta seq ${seq}; its first message must be a checkpoint`);
        } else {
          if (body?.kind === 'delta' && seq > prev.seq && (body.base_seq !== prev.seq || body.seq !== body.base_seq + 1)) {
            add('delta-base-seq', `delta seq ${body.seq} has base_seq ${body.base_seq}; the previous message is seq ${prev.seq}`);
          }
          if (pendingForce === 'compaction') add('no-checkpoint-after-compaction', `delta seq ${seq} is the first message after a compaction`);
          if (pendingForce === 'branch') add('no-checkpoint-after-branch', `delta seq ${seq} is the first message after a branch/tree movement`);
        }
        if (deltasInRow > limits.checkpointInterval) {
          add('too-many-deltas', `delta number ${deltasInRow} in a row; a checkpoint must replace the chain after ${limits.checkpointInterval}`);
        }
      } else {
        deltasInRow = 0;
      }

      /** Panes the message carries: checkpoint `panes`, delta `upsert`. */
      const carried = body ? (body.kind === 'checkpoint' ? body.panes.length : (body.upsert?.length ?? 0)) : 0;
      let next = state;
      if (body) {
        next = applyContextBody(state, body);
        const before = state.availability;
        if (!chainStart && body.kind === 'delta' && before !== 'unknown') {
          if (body.availability === 'unavailable' && before === 'available') {
            add('failure-not-checkpoint', `delta seq ${seq} switches to unavailable; a failure must be an unavailable checkpoint`);
          }
          if (before === 'unavailable' && (body.availability === 'available' || (body.upsert?.length ?? 0) > 0 || (body.removed?.length ?? 0) > 0)) {
            add('recovery-not-checkpoint', `delta seq ${seq} changes the fleet while phux was unavailable; a recovery must be a fresh checkpoint`);
          }
        }
        if (!chainStart && before !== 'unknown' && sameFleetState(state, next)) {
          if (body.kind === 'delta') {
            add('unchanged-projection', `delta seq ${seq} changes nothing in the fleet the model already has`);
          } else if (!forced) {
            if (next.availability === 'unavailable') {
              add('unavailable-repeated', `checkpoint seq ${seq} repeats the unavailable state of seq ${prev.seq} (same failure: must be edge-filtered)`);
            } else {
              add('unchanged-projection', `checkpoint seq ${seq} repeats the fleet of seq ${prev.seq} without a compaction, branch or restart`);
            }
          }
        }
        if (next.panes.length > limits.maxPanes && carried <= limits.maxPanes) {
          add('too-many-panes', `after delta seq ${seq} the fleet holds ${next.panes.length} panes > ${limits.maxPanes}`);
        }
      }
      pendingForce = null;
      lastText = m.text;
      forcedFlags.push(kind === 'checkpoint' && prev !== undefined && forced);
      messages.push({
        seq,
        kind,
        line: ev.line,
        bytes: parsed.bytes,
        panes: carried,
        removed: body?.kind === 'delta' ? (body.removed?.length ?? 0) : 0,
        omitted: next.omitted,
        ...(body?.kind === 'delta' ? { baseSeq: body.base_seq } : {}),
        placement: ev.placement,
        timeMs: ev.timeMs,
        valid: body !== null,
        repeats: 0,
        compactionHook: m.compactionHook,
        restart,
        state: next,
      });
      state = next;
    }
  }

  return { messages, violations, restarts, cost: streamCost(messages, forcedFlags, repeats, repeatedBytes, outsideBytes, options.turnLines) };
}

/** True when two states describe the same fleet (key order ignored; panes compared in order, which replay keeps sorted). */
export function sameFleetState(a: FleetContextState, b: FleetContextState): boolean {
  return isDeepStrictEqual(a, b);
}

function streamCost(
  messages: ContextStreamMessage[],
  forcedFlags: boolean[],
  repeats: number,
  repeatedBytes: number,
  outsideBytes: number,
  turnLines: number[] | undefined,
): ContextStreamCost {
  const tokens = (b: number): number => Math.ceil(b / 4);
  const sum = (ms: ContextStreamMessage[]): number => ms.reduce((n, m) => n + m.bytes, 0);
  const checkpoints = messages.filter((m) => m.kind === 'checkpoint');
  const deltas = messages.filter((m) => m.kind === 'delta');
  const forced = messages.filter((_, i) => forcedFlags[i]);
  const bytes = sum(messages);
  let perTurn: ContextStreamCost['perTurn'] = null;
  let beforeFirstTurnBytes: number | null = null;
  if (turnLines) {
    const lines = [...turnLines].sort((a, b) => a - b);
    perTurn = lines.map((line) => ({ line, messages: 0, bytes: 0, estimatedTokens: 0 }));
    beforeFirstTurnBytes = 0;
    for (const m of messages) {
      let i = -1;
      for (let lo = 0, hi = lines.length - 1; lo <= hi; ) {
        const mid = (lo + hi) >> 1;
        if (lines[mid] <= m.line) {
          i = mid;
          lo = mid + 1;
        } else hi = mid - 1;
      }
      if (i < 0) beforeFirstTurnBytes += m.bytes;
      else {
        perTurn[i].messages += 1;
        perTurn[i].bytes += m.bytes;
      }
    }
    for (const t of perTurn) t.estimatedTokens = tokens(t.bytes);
  }
  return {
    messages: messages.length,
    bytes,
    estimatedTokens: tokens(bytes),
    checkpoints: { count: checkpoints.length, bytes: sum(checkpoints) },
    deltas: { count: deltas.length, bytes: sum(deltas) },
    forcedCheckpoints: { count: forced.length, bytes: sum(forced) },
    repeats,
    repeatedBytes,
    outsideBytes,
    perTurn,
    beforeFirstTurnBytes,
    eligibleTurns: turnLines ? turnLines.length : null,
    silentTurns: perTurn ? perTurn.filter((t) => t.messages === 0).length : null,
  };
}

/**
 * The per-session JSON of `prefix-lens analyze` (`"phux": …`):
 * `{messages: [{seq, kind, line, bytes, panes, omitted, baseSeq?, placement, fleetPanes,
 * availability, repeats?}], violations: [{rule, line, message}], restarts: [line…], cost}` where
 * `panes` = panes carried by the message, `fleetPanes` = panes the model knows after it.
 */
export interface PhuxSessionJson {
  messages: Array<{
    seq: number;
    kind: 'checkpoint' | 'delta';
    line: number;
    bytes: number;
    panes: number;
    omitted: number;
    baseSeq?: number;
    placement: 'tail' | 'head';
    fleetPanes: number;
    availability: FleetContextState['availability'];
    repeats?: number;
  }>;
  violations: Array<{ rule: ContextRuleId; line: number; message: string }>;
  restarts: number[];
  cost: ContextStreamCost;
}

/** `ContextStreamReport` → `PhuxSessionJson` (drops the replayed states, keeps counts). */
export function toJson(report: ContextStreamReport): PhuxSessionJson {
  return {
    messages: report.messages.map((m) => ({
      seq: m.seq,
      kind: m.kind,
      line: m.line,
      bytes: m.bytes,
      panes: m.panes,
      omitted: m.omitted,
      ...(m.baseSeq !== undefined ? { baseSeq: m.baseSeq } : {}),
      placement: m.placement,
      fleetPanes: m.state.panes.length,
      availability: m.state.availability,
      ...(m.repeats > 0 ? { repeats: m.repeats } : {}),
    })),
    violations: report.violations.map((v) => ({ rule: v.rule, line: v.line, message: v.message })),
    restarts: [...report.restarts],
    cost: report.cost,
  };
}
