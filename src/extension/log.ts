/** The `Prefix Lens` log channel (LogOutputChannel: levels, timestamps, Developer: Set Log Level). */
import * as vscode from 'vscode';

export type Log = vscode.LogOutputChannel;

export function createLog(): Log {
  return vscode.window.createOutputChannel('Prefix Lens', { log: true });
}
