/** Shared helpers of the extension-host tests. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { PrefixLensApi } from '../../src/extension/extension.js';
import type { SessionRef } from '../../src/hosts/registry.js';
import type { SessionsNode } from '../../src/extension/sessionsView.js';

export const EXTENSION_ID = 'prefix-lens.prefix-lens';

/** Environment scripts/test.mjs passes to code-server (and so to the extension host). */
export const testEnv = {
  /** The fixture HOME: ~/.pi/agent/sessions/… and ~/.local/share/opencode/opencode.db copied from test/fixtures. */
  home: process.env.PREFIX_LENS_TEST_HOME!,
  /** The repository (the extension under test). */
  repo: process.env.PREFIX_LENS_REPO!,
  /** A scratch folder for files the tests write. */
  tmp: process.env.PREFIX_LENS_TEST_TMP!,
};

/** Activates the extension (if needed) and returns its API. */
export async function api(): Promise<PrefixLensApi> {
  const ext = vscode.extensions.getExtension<PrefixLensApi>(EXTENSION_ID);
  if (!ext) throw new Error(`${EXTENSION_ID} is not installed in this extension host`);
  return ext.activate();
}

/** A session row as the Sessions view gives it (its ref and its depth in the tree). */
export type SessionRow = Extract<SessionsNode, { kind: 'session' }>;

/** Every session row of the Sessions view, as VS Code gets them: host → (project →) session. */
export async function sessionRows(): Promise<SessionRow[]> {
  const view = (await api()).sessions;
  const rows: SessionRow[] = [];
  const walk = async (node?: SessionsNode): Promise<void> => {
    for (const n of await view.getChildren(node)) {
      if (n.kind === 'session') rows.push(n);
      else await walk(n);
    }
  };
  await walk();
  return rows;
}

/** The row of the first listed session `which` picks; throws when there is none. */
export async function sessionRow(which: (ref: SessionRef) => boolean): Promise<SessionRow> {
  const row = (await sessionRows()).find((r) => which(r.ref));
  if (!row) throw new Error(`no such session row in the Sessions view: ${String(which)}`);
  return row;
}

/** Polls `fn` every 100 ms until it returns a truthy value; throws with `what` after `timeoutMs`. */
export async function until<T>(what: string, fn: () => T | Promise<T>, timeoutMs = 30_000): Promise<NonNullable<T>> {
  const t0 = Date.now();
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The text of a file once it exists (written by a terminal). */
export async function fileText(path: string, timeoutMs = 30_000): Promise<string> {
  await until(`${path} to be written`, () => existsSync(path) && readFileSync(path, 'utf8').endsWith('\n'), timeoutMs);
  return readFileSync(path, 'utf8').trim();
}

/** The one session file of a Pi fixture folder in the fixture home (file names change when re-recorded). */
function piFixture(dir: string): string {
  const rel = `.pi/agent/sessions/${dir}`;
  const [name] = readdirSync(join(testEnv.home, rel)).filter((n) => n.endsWith('.jsonl'));
  return `${rel}/${name}`;
}
/** The Pi fixture sessions as copied into the fixture home (see scripts/test.mjs), relative to it. */
export const PI_MAIN = piFixture('--home-user-pi-lab-main-project--');
export const PI_LONG = piFixture('--home-user-pi-lab-long-project--');
