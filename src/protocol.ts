/**
 * Every message between the extension host and the Timeline webview, in one place
 * (vscode-hexeditor's shared/protocol.ts). Both sides validate what they receive with the zod
 * schemas below; anything that does not parse is dropped and logged, never acted on.
 *
 * The payload `report` is the analysis view model (`prefix-lens analyze --json` version 1,
 * src/report/json.ts). The standalone HTML report carries the same document in a
 * `<script type="application/json" id="prefix-lens-report">` element instead of a message.
 */
// Namespace import (zod's documented form) lets esbuild drop what the schemas do not use: the webview
// bundle shrinks from ~400 KiB (every locale) to ~100 KiB.
import * as z from 'zod';
import type { Report, RequestReport, SessionReport } from './report/json.js';

/** Message types, split by direction. */
export enum MessageType {
  // ── extension → webview ──
  /** The whole view model; replaces what is shown, keeps the selection when it still exists. */
  Load = 'load',
  /** Select a request (e.g. "Open Timeline at this request"). */
  Select = 'select',
  /**
   * The live tail after an append judged alone: the shown session's new header and the requests
   * added (and revised) since the report the webview has (`applyPatch`). A patch that does not
   * apply makes the webview post `Ready` again, which the extension answers with the whole `Load`.
   */
  Patch = 'patch',
  // ── webview → extension ──
  /** The webview has started and listens; the extension answers with `Load`. */
  Ready = 'ready',
  /** The user selected a request (the extension keeps it for restore and for the title). */
  Selected = 'selected',
  /** "Reveal in transcript": open `file` at `line` (1-based; 0 = database row, see `row`). */
  RevealInTranscript = 'revealInTranscript',
  /** "Export HTML report…" from the webview toolbar. */
  ExportHtml = 'exportHtml',
  /** "Compare with #N": open request `requestIndex` beside request `base` (the one it was compared with) in a diff editor. */
  CompareRequests = 'compareRequests',
  /**
   * The header's copy button: copy the path of session `sessionIndex` to the clipboard. The
   * extension copies the path it holds for that session (vscode.env.clipboard), never text the
   * webview sends.
   */
  CopyPath = 'copyPath',
}

/** A request within the report: session index in `report.sessions`, request `index` (1-based). */
export const RequestRefSchema = z.object({
  sessionIndex: z.number().int().nonnegative(),
  requestIndex: z.number().int().positive(),
});
export type RequestRef = z.infer<typeof RequestRefSchema>;

/** Only the envelope of the view model is checked here; the report writer is trusted code. */
const ReportSchema = z.custom<Report>(
  (v) => typeof v === 'object' && v !== null && (v as Report).version === 1 && Array.isArray((v as Report).sessions),
  { message: 'not a version-1 Prefix Lens report' },
);

export const LoadMessageSchema = z.object({
  type: z.literal(MessageType.Load),
  report: ReportSchema,
  /** Request to select after loading; absent = keep the current selection (or the first break). */
  select: RequestRefSchema.optional(),
  /** The session file is being tailed: new requests arrive as further `Load` messages. */
  live: z.boolean(),
});
export const SelectMessageSchema = z.object({ type: z.literal(MessageType.Select), ref: RequestRefSchema });

/**
 * What changed in a session since a report of it. `header`: the session report as it is now
 * without its requests (`requests: []`: sums, models, diagnostics, context stream); `added`: the
 * requests the earlier report did not have, in order; `revised`: earlier requests whose entry
 * changed (matched by `index`). Today's live analysis sends the whole report whenever it judged
 * earlier requests again, so its patches have none; the field keeps the format whole.
 */
export interface LivePatch {
  header: SessionReport;
  added: RequestReport[];
  revised: RequestReport[];
}

/**
 * The report after `patch`, from the report it follows (a new object; `report` is left as it is).
 * The same on both sides of the protocol (the panel and the webview each keep the report).
 * @throws Error when the patch does not follow `report` (a revised index it does not have, or added
 *   entries that do not continue its numbering)
 */
export function applyPatch(report: SessionReport, patch: LivePatch): SessionReport {
  const requests = [...report.requests];
  const at = new Map(requests.map((r, i) => [r.index, i] as const));
  for (const r of patch.revised) {
    const i = at.get(r.index);
    if (i === undefined) throw new Error(`live patch: request #${r.index} is not in the report`);
    requests[i] = r;
  }
  const last = requests.at(-1)?.index ?? 0;
  if (patch.added.length && patch.added[0].index <= last) throw new Error(`live patch: request #${patch.added[0].index} does not follow #${last}`);
  requests.push(...patch.added);
  return { ...patch.header, requests };
}

export const PatchMessageSchema = z.object({
  type: z.literal(MessageType.Patch),
  sessionIndex: z.number().int().nonnegative(),
  // As for Load, only the envelope is checked: the report writer is trusted code.
  patch: z.custom<LivePatch>(
    (v) => typeof v === 'object' && v !== null && Array.isArray((v as LivePatch).added) && Array.isArray((v as LivePatch).revised) && typeof (v as LivePatch).header === 'object' && (v as LivePatch).header !== null,
    { message: 'not a live patch' },
  ),
});

export const ReadyMessageSchema = z.object({ type: z.literal(MessageType.Ready) });
export const SelectedMessageSchema = z.object({ type: z.literal(MessageType.Selected), ref: RequestRefSchema });
export const RevealInTranscriptMessageSchema = z.object({
  type: z.literal(MessageType.RevealInTranscript),
  file: z.string(),
  line: z.number().int().nonnegative(),
  row: z.string().optional(),
});
export const ExportHtmlMessageSchema = z.object({ type: z.literal(MessageType.ExportHtml) });
export const CompareRequestsMessageSchema = z.object({
  type: z.literal(MessageType.CompareRequests),
  sessionIndex: z.number().int().nonnegative(),
  requestIndex: z.number().int().positive(),
  base: z.number().int().positive(),
});

export const CopyPathMessageSchema = z.strictObject({
  type: z.literal(MessageType.CopyPath),
  sessionIndex: z.number().int().nonnegative(),
});

/** The message the Timeline's copy button posts for the session at `sessionIndex` of the report. */
export const copyPathMessage = (sessionIndex: number): CopyPathMessage => ({ type: MessageType.CopyPath, sessionIndex });

export const ToWebviewMessageSchema = z.discriminatedUnion('type', [LoadMessageSchema, SelectMessageSchema, PatchMessageSchema]);
export const FromWebviewMessageSchema = z.discriminatedUnion('type', [
  ReadyMessageSchema,
  SelectedMessageSchema,
  RevealInTranscriptMessageSchema,
  ExportHtmlMessageSchema,
  CompareRequestsMessageSchema,
  CopyPathMessageSchema,
]);

export type LoadMessage = z.infer<typeof LoadMessageSchema>;
export type SelectMessage = z.infer<typeof SelectMessageSchema>;
export type PatchMessage = z.infer<typeof PatchMessageSchema>;
export type CopyPathMessage = z.infer<typeof CopyPathMessageSchema>;
export type ToWebviewMessage = z.infer<typeof ToWebviewMessageSchema>;
export type FromWebviewMessage = z.infer<typeof FromWebviewMessageSchema>;

/**
 * State the webview saves with `vscode.setState` (survives hide/show) and the
 * `WebviewPanelSerializer` receives after a window reload: which session file the panel shows and
 * what was selected. The report itself is re-read from `sessionPath`, never trusted from state.
 */
export const WebviewStateSchema = z.object({
  sessionPath: z.string(),
  /** `host:id` when the session is not a file of its own (OpenCode rows). */
  sessionKey: z.string().optional(),
  selected: RequestRefSchema.optional(),
  filter: z.string().optional(),
});
export type WebviewState = z.infer<typeof WebviewStateSchema>;

/** Id of the element that carries the report in the standalone HTML file. */
export const REPORT_ELEMENT_ID = 'prefix-lens-report';
