/**
 * Hovers that show untrusted text (titles, prompts, paths and errors from transcripts) as text.
 * A hover of text only is a plain string (VS Code shows a string tooltip as text, line breaks
 * kept); a hover with Markdown of its own (figures, a table, an icon) is built here: the one way
 * the Sessions view's session rows and the status bar build their MarkdownStrings.
 */
import * as vscode from 'vscode';

/**
 * A MarkdownString that renders nothing of what it shows: no command links (isTrusted false), no
 * HTML; theme icons only when `themeIcons` (the caller's own `$(warning)`; appendText then
 * escapes `$(` in untrusted text, so it never becomes an icon).
 */
export function safeMarkdown(themeIcons = false): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  md.isTrusted = false;
  md.supportHtml = false;
  md.supportThemeIcons = themeIcons;
  return md;
}

/**
 * Appends untrusted `text` to `md` as paragraphs (one per line) shown as they are: appendText
 * escapes Markdown and `>` (and `$(` icons when they are on), and `<` is escaped here too, so that
 * not even HTML a renderer allowed could come from it. One appendText per line: a `\n` inside one
 * call became four newlines.
 */
export function appendUntrusted(md: vscode.MarkdownString, text: string): void {
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    const at = md.value.length;
    md.appendText(line);
    md.value = md.value.slice(0, at) + md.value.slice(at).replaceAll('<', '\\<');
    md.appendMarkdown(i < lines.length - 1 ? '\n\n' : '');
  });
}
