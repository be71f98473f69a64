/**
 * PHUX_CONTEXT_AWARENESS for terminals VS Code starts. Hosts with phux's integration (Pi,
 * OpenCode) read the variable once, when they start (reference/phux.md: unset or anything but `0`
 * = on). Off → `PHUX_CONTEXT_AWARENESS=0` in `context.environmentVariableCollection`; on → the
 * variable removed (hosts default to on). VS Code applies the collection to new terminals and marks
 * running ones as needing a relaunch. The choice is kept in `globalState` and the collection is
 * persistent, so it survives reloads.
 */
import * as vscode from 'vscode';
import type { Log } from './log.js';

export const VARIABLE = 'PHUX_CONTEXT_AWARENESS';
const STATE_KEY = 'prefixLens.phuxContextAwareness';

export class ContextToggle implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: Log,
  ) {
    this.item = vscode.window.createStatusBarItem('prefixLens.phuxContextAwareness', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'Prefix Lens: PHUX_CONTEXT_AWARENESS';
    this.item.command = 'prefixLens.togglePhuxContextAwareness';
    context.environmentVariableCollection.persistent = true;
    this.apply();
    this.item.show();
  }

  /** True when agents started in new terminals attach the phux fleet context (the default). */
  get enabled(): boolean {
    return this.context.globalState.get<boolean>(STATE_KEY, true);
  }

  /** The extension's environment variable collection (what new terminals get). */
  get collection(): vscode.GlobalEnvironmentVariableCollection {
    return this.context.environmentVariableCollection;
  }

  /** The status-bar item's tooltip text (markdown source). */
  get tooltip(): string {
    const t = this.item.tooltip;
    return typeof t === 'string' ? t : (t?.value ?? '');
  }

  /** Flips the setting (or sets it to `value`) and applies it to the environment collection. */
  async toggle(value = !this.enabled): Promise<boolean> {
    await this.context.globalState.update(STATE_KEY, value);
    this.apply();
    this.log.info(`${VARIABLE}: ${value ? 'on (variable removed for new terminals)' : 'off (new terminals get PHUX_CONTEXT_AWARENESS=0)'}`);
    return value;
  }

  private apply(): void {
    const on = this.enabled;
    const env = this.context.environmentVariableCollection;
    if (on) env.delete(VARIABLE);
    else env.replace(VARIABLE, '0');
    env.description = on
      ? 'Prefix Lens: phux context awareness is on (PHUX_CONTEXT_AWARENESS not set)'
      : 'Prefix Lens: PHUX_CONTEXT_AWARENESS=0, agents started here do not attach the phux fleet context';
    void vscode.commands.executeCommand('setContext', 'prefixLens.phuxContextAwareness', on);
    this.item.text = on ? '$(eye) phux context' : '$(eye-closed) phux context off';
    const md = new vscode.MarkdownString();
    md.appendMarkdown(`**PHUX_CONTEXT_AWARENESS ${on ? 'on' : 'off'}** for new terminals\n\n`);
    md.appendMarkdown(
      on
        ? 'Agents started in new terminals attach the phux fleet context (the variable is not set).\n\n'
        : 'New terminals get `PHUX_CONTEXT_AWARENESS=0`: agents started there do not attach the phux fleet context.\n\n',
    );
    md.appendMarkdown('Hosts read the variable when they start: restart a running agent (or relaunch its terminal) to apply it.\n\nClick to toggle.');
    this.item.tooltip = md;
  }

  dispose(): void {
    this.item.dispose();
  }
}
