import assert from 'node:assert/strict';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { api, fileText, testEnv } from './helpers.js';

let n = 0;
/** What a newly created terminal sees in $PHUX_CONTEXT_AWARENESS (`unset` when not set). */
async function seenByNewTerminal(): Promise<string> {
  const out = join(testEnv.tmp, `terminal-env-${++n}.txt`);
  const t = vscode.window.createTerminal({ name: `env check ${n}`, shellPath: '/bin/sh', shellArgs: ['-c', `printf '%s\\n' "\${PHUX_CONTEXT_AWARENESS-unset}" > '${out}'`] });
  try {
    return await fileText(out);
  } finally {
    t.dispose();
  }
}

describe('PHUX_CONTEXT_AWARENESS toggle', () => {
  it('is on by default: the variable is not in the collection and a new terminal does not have it', async () => {
    const a = await api();
    assert.equal(a.toggle.enabled, true);
    assert.equal(a.toggle.collection.get('PHUX_CONTEXT_AWARENESS'), undefined);
    assert.equal(await seenByNewTerminal(), 'unset');
  });

  it('off: the collection replaces PHUX_CONTEXT_AWARENESS with 0 and a newly created terminal really sees 0', async () => {
    const a = await api();
    assert.equal(await vscode.commands.executeCommand('prefixLens.togglePhuxContextAwareness'), false);
    const m = a.toggle.collection.get('PHUX_CONTEXT_AWARENESS');
    assert.deepEqual([m?.value, m?.type], ['0', vscode.EnvironmentVariableMutatorType.Replace]);
    assert.match(String(a.toggle.collection.description), /PHUX_CONTEXT_AWARENESS=0/);
    assert.equal(a.toggle.collection.persistent, true);
    assert.equal(await seenByNewTerminal(), '0');
  });

  it('on again: the variable is removed (hosts default to on)', async () => {
    const a = await api();
    assert.equal(await vscode.commands.executeCommand('prefixLens.togglePhuxContextAwareness'), true);
    assert.equal(a.toggle.collection.get('PHUX_CONTEXT_AWARENESS'), undefined);
    assert.equal(await seenByNewTerminal(), 'unset');
  });

  it('the status-bar tooltip says hosts read the variable when they start', async () => {
    const a = await api();
    assert.match(a.toggle.tooltip, /Hosts read the variable when they start/);
  });
});
