/**
 * `prefixLens.*` settings, read in one place. In an untrusted workspace the restricted settings
 * (package.json `capabilities.untrustedWorkspaces.restrictedConfigurations`) take only the user's
 * (global) value, never the workspace's, and no program is run at all.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { DiscoverOptions, HostId } from '../hosts/registry.js';
import type { RuleOverrides } from './rules.js';

const SECTION = 'prefixLens';

/** A setting's value; for restricted settings in an untrusted workspace, the user value or the default. */
function read<T>(key: string, restricted: boolean): T {
  const c = vscode.workspace.getConfiguration(SECTION);
  if (restricted && !vscode.workspace.isTrusted) {
    const i = c.inspect<T>(key);
    return (i?.globalValue ?? i?.defaultValue) as T;
  }
  return c.get<T>(key) as T;
}

/**
 * The `prefixLens.sessionFolders.<key>` setting of each host whose files can live anywhere (the
 * folder is walked below, like a CLI argument). For when VS Code was not started with the host's
 * environment (e.g. `CLAUDE_CONFIG_DIR` set in a shell profile, VS Code started from the desktop).
 */
export const SESSION_FOLDER_SETTINGS = { pi: 'pi', 'claude-code': 'claudeCode', codex: 'codex', botharness: 'botharness', 'pi-desktop': 'piDesktop' } as const satisfies Partial<Record<HostId, string>>;

/** Where to look for sessions: the extension host's environment and home, plus the configured folders (added to each host's defaults by the worker). */
export function discoverOptions(): DiscoverOptions {
  const dataDir = read<string>('opencode.dataDir', true);
  const paths: Partial<Record<HostId, string[]>> = {
    opencode: dataDir ? [expandHome(dataDir)] : [],
    capture: folders('captureFolders'),
  };
  for (const [host, key] of Object.entries(SESSION_FOLDER_SETTINGS)) paths[host as HostId] = folders(`sessionFolders.${key}`);
  return { env: { ...process.env }, home: homedir(), paths };
}

/** A folder-list setting (restricted), `~` expanded; anything that is not a non-empty string is dropped. */
function folders(key: string): string[] {
  const v = read<unknown>(key, true);
  return Array.isArray(v) ? v.filter((p): p is string => typeof p === 'string' && p.trim() !== '').map(expandHome) : [];
}

/** TTL and price overrides for the judge. */
export function ruleOverrides(): RuleOverrides {
  const ttl = read<Record<string, number>>('ttlSecondsOverrides', false) ?? {};
  const prices = read<RuleOverrides['prices']>('priceOverrides', false) ?? [];
  return {
    ttlSeconds: Object.fromEntries(Object.entries(ttl).filter(([, v]) => typeof v === 'number' && v > 0)),
    prices: prices.filter((p) => p && typeof p.match === 'string' && Number.isFinite(p.input) && Number.isFinite(p.output)),
  };
}

/** The phux program (machine scope), or undefined in an untrusted workspace (nothing is run there). */
export function phuxPath(): string | undefined {
  if (!vscode.workspace.isTrusted) return undefined;
  return read<string>('phux.path', true) || 'phux';
}

/** Fleet poll interval, ms (500 … 60 000). */
export function fleetPollIntervalMs(): number {
  const v = read<number>('fleet.pollIntervalMs', false);
  return Math.min(60_000, Math.max(500, Number.isFinite(v) ? v : 2000));
}

export function diagnosticsEnabled(): boolean {
  return read<boolean>('diagnostics.enabled', false) !== false;
}

/** `~` and `~/x` → the home directory. */
function expandHome(p: string): string {
  return p === '~' ? homedir() : p.startsWith('~/') ? join(homedir(), p.slice(2)) : p;
}
