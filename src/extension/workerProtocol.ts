/**
 * Messages between the extension host and its analysis worker (src/extension/worker.ts). Plain
 * structured-clone data; both ends are this extension's own code.
 */
import type { DiscoverOptions, SessionRef } from '../hosts/registry.js';
import type { SessionReport } from '../report/json.js';
import type { RuleOverrides } from './rules.js';

export type WorkerRequest =
  | { id: number; op: 'discover'; opts: DiscoverOptions }
  /** The sessions of one file or folder the user named (any host, recognized as the CLI does). */
  | { id: number; op: 'resolve'; path: string; opts: DiscoverOptions }
  | { id: number; op: 'analyze'; ref: SessionRef; env: NodeJS.ProcessEnv; requestsDir?: string; overrides: RuleOverrides; cacheDir?: string };

/** `ms`: wall time of the job inside the worker. */
export type WorkerResponse =
  | { id: number; ok: true; op: 'discover'; refs: SessionRef[]; hosts: Array<{ id: string; label: string }>; watchRoots: string[]; ms: number }
  | { id: number; ok: true; op: 'analyze'; sessions: SessionReport[]; ms: number }
  | { id: number; ok: true; op: 'resolve'; refs: SessionRef[]; ms: number }
  | { id: number; ok: false; error: string };

/** A job without its id (the client numbers them). */
export type WorkerJob = WorkerRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;
