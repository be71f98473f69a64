/**
 * Messages between the extension host and its analysis worker (src/extension/worker.ts). Plain
 * structured-clone data; both ends are this extension's own code.
 */
import type { DiscoverOptions, SessionRef } from '../hosts/registry.js';
import type { SessionReport } from '../report/json.js';
import type { PrefixDifference } from '../report/requestText.js';
import type { LiveStep } from './livePatch.js';
import type { RuleOverrides } from './rules.js';

export type WorkerRequest =
  | { id: number; op: 'discover'; opts: DiscoverOptions }
  /** The sessions of one file or folder the user named (any host, recognized as the CLI does). */
  | { id: number; op: 'resolve'; path: string; opts: DiscoverOptions }
  /**
   * A file an editor opened, for the Problems view, in one round-trip: the session a host recognizes
   * in it (registry recognizeFile: never Pi by name alone; or `ref`, when the caller already has it),
   * analyzed as `analyze` does (through the result cache). `ref: null` in the answer: no host's.
   */
  | { id: number; op: 'diagnose'; path: string; ref?: SessionRef; env: NodeJS.ProcessEnv; overrides: RuleOverrides; cacheDir?: string }
  | { id: number; op: 'analyze'; ref: SessionRef; env: NodeJS.ProcessEnv; requestsDir?: string; overrides: RuleOverrides; cacheDir?: string }
  /**
   * Follows a session as it grows, for one Timeline panel (`panel`: its id). Pi: the first call (or
   * one with other overrides) reads it in full and keeps its LiveAnalysis for that panel; later
   * calls read and judge what was appended. Other hosts: analyzed through the result cache with the
   * ref as the registry sees it now (`cacheDir`), the whole report each time.
   */
  | { id: number; op: 'live'; ref: SessionRef; panel: string; env: NodeJS.ProcessEnv; overrides: RuleOverrides; cacheDir?: string }
  /**
   * Two requests of a session rendered as text for a diff (report/requestText.ts): `base` (e.g. the
   * matched request) and `index`, of the session `sessionId` read from `ref` (a panel's live
   * analysis when one follows it and still holds the same requests). `hashes`: the two requests'
   * prefix hashes in the report the user looks at; a session whose requests no longer have them
   * (it was rewritten, or a body was joined since) is refused rather than rendered.
   */
  | { id: number; op: 'compare'; ref: SessionRef; sessionId: string; base: number; index: number; numbers?: { base: string; index: string }; hashes: { base: string | null; index: string | null }; env: NodeJS.ProcessEnv; requestsDir?: string }
  /** Forgets what the worker keeps for a panel (it closed, or starts over). */
  | { id: number; op: 'live-close'; panel: string };

/** `ms`: wall time of the job inside the worker. */
export type WorkerResponse =
  | { id: number; ok: true; op: 'discover'; refs: SessionRef[]; hosts: Array<{ id: string; label: string }>; watchRoots: string[]; warnings: string[]; ms: number }
  | { id: number; ok: true; op: 'analyze'; sessions: SessionReport[]; ms: number }
  | { id: number; ok: true; op: 'resolve'; refs: SessionRef[]; ms: number }
  | { id: number; ok: true; op: 'diagnose'; ref: SessionRef | null; sessions: SessionReport[]; ms: number }
  /** `opened`: this call read the session in full (a new LiveAnalysis); the step is then `full`. */
  | ({ id: number; ok: true; op: 'live'; opened: boolean; ms: number } & LiveStep)
  | { id: number; ok: true; op: 'live-close'; ms: number }
  | { id: number; ok: true; op: 'compare'; comparison: RequestComparisonText; ms: number }
  | { id: number; ok: false; error: string };

/** What `compare` answers: the two documents (report/requestText.ts RequestDocument) and how the prefixes relate, as plain data. */
export interface RequestComparisonText {
  base: { text: string; changeAt: { line: number; character: number } | null };
  request: { text: string; changeAt: { line: number; character: number } | null };
  difference: PrefixDifference;
}

/** A job without its id (the client numbers them). */
export type WorkerJob = WorkerRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;
