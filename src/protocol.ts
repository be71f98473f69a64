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
import type { Report } from './report/json.js';

/** Message types, split by direction. */
export enum MessageType {
  // ── extension → webview ──
  /** The whole view model; replaces what is shown, keeps the selection when it still exists. */
  Load = 'load',
  /** Select a request (e.g. "Open Timeline at this request"). */
  Select = 'select',
  // ── webview → extension ──
  /** The webview has started and listens; the extension answers with `Load`. */
  Ready = 'ready',
  /** The user selected a request (the extension keeps it for restore and for the title). */
  Selected = 'selected',
  /** "Reveal in transcript": open `file` at `line` (1-based; 0 = database row, see `row`). */
  RevealInTranscript = 'revealInTranscript',
  /** "Export HTML report…" from the webview toolbar. */
  ExportHtml = 'exportHtml',
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

export const ReadyMessageSchema = z.object({ type: z.literal(MessageType.Ready) });
export const SelectedMessageSchema = z.object({ type: z.literal(MessageType.Selected), ref: RequestRefSchema });
export const RevealInTranscriptMessageSchema = z.object({
  type: z.literal(MessageType.RevealInTranscript),
  file: z.string(),
  line: z.number().int().nonnegative(),
  row: z.string().optional(),
});
export const ExportHtmlMessageSchema = z.object({ type: z.literal(MessageType.ExportHtml) });

export const ToWebviewMessageSchema = z.discriminatedUnion('type', [LoadMessageSchema, SelectMessageSchema]);
export const FromWebviewMessageSchema = z.discriminatedUnion('type', [
  ReadyMessageSchema,
  SelectedMessageSchema,
  RevealInTranscriptMessageSchema,
  ExportHtmlMessageSchema,
]);

export type LoadMessage = z.infer<typeof LoadMessageSchema>;
export type SelectMessage = z.infer<typeof SelectMessageSchema>;
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
