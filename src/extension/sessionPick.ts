/** Quick pick of sessions (Open Timeline…, Diagnose Session…, Export HTML Report…). */
import { basename } from 'node:path';
import * as vscode from 'vscode';
import type { SessionRef } from '../hosts/registry.js';
import { ago, figuresText, sessionName } from './format.js';
import type { SessionsView } from './sessionsView.js';

interface Item extends vscode.QuickPickItem {
  ref: SessionRef;
}

/**
 * Lets the user pick a session: title or id, project, file name and hit rate (when analyzed;
 * summaries of the listed sessions arrive while the pick is open).
 * @returns the picked session, or undefined when dismissed
 */
export async function pickSession(view: SessionsView, title: string): Promise<SessionRef | undefined> {
  const qp = vscode.window.createQuickPick<Item>();
  qp.title = title;
  qp.placeholder = 'Session title, id, project or file';
  qp.matchOnDescription = true;
  qp.matchOnDetail = true;
  qp.busy = true;
  const toItem = (ref: SessionRef): Item => {
    const s = view.summaryOf(ref);
    return {
      ref,
      label: s?.title ?? sessionName(ref),
      description: [ref.project ?? '', ago(ref.mtimeMs)].filter(Boolean).join(' · '),
      detail: [ref.host === 'opencode' ? `${basename(ref.path)} · ${ref.id}` : basename(ref.path), s ? figuresText(s) : ''].filter(Boolean).join(' · '),
    };
  };
  const picked = new Promise<SessionRef | undefined>((resolve) => {
    qp.onDidAccept(() => {
      resolve(qp.selectedItems[0]?.ref);
      qp.hide();
    });
    qp.onDidHide(() => resolve(undefined));
  });
  qp.show();
  const refs = await view.sessions();
  qp.items = refs.map(toItem);
  qp.busy = false;
  // Fill in hit rates of the first screenful as they are analyzed.
  void view.summariesOf(refs.slice(0, 30)).then(() => {
    const active = qp.activeItems[0]?.ref.key;
    qp.items = refs.map(toItem);
    if (active) qp.activeItems = qp.items.filter((i) => i.ref.key === active);
  });
  const ref = await picked;
  qp.dispose();
  return ref;
}
