// Runs the extension-host suite (mocha inside VS Code's real Node extension host, real `vscode`
// API): starts code-server, opens the workbench in chromium with the payload that loads this
// extension in development mode and runs `testsEntry`, and waits for the workbench's
// `codeAutomationExit`. The suite writes its counts to `resultsFile` (JSON) itself.
import util from 'node:util';
import { chromium } from 'playwright-core';
import { launchChromium, remoteUri, startCodeServer, workbenchUrl } from './codeServer.mjs';

/**
 * @param {{envDir: string, extDir: string, testsEntry: string, workspace: string, home: string, env: object, settings?: object, trusted?: boolean, timeoutMs?: number}} o
 * @returns {Promise<number>} the exit code the workbench reported (0 = all passed), or 1 on timeout
 */
export async function runExtensionHostSuite(o) {
  const server = await startCodeServer({ envDir: o.envDir, workspace: o.workspace, home: o.home, env: o.env, trusted: o.trusted, settings: o.settings });
  const browser = await launchChromium(chromium);
  try {
    const page = browser.ctx.pages()[0] ?? (await browser.ctx.newPage());
    let done;
    const exited = new Promise((r) => (done = r));
    // The workbench calls these when extension tests run (the hooks @vscode/test-web uses).
    await page.exposeFunction('codeAutomationLog', (_type, args) => console.log(util.format(...args)));
    await page.exposeFunction('codeAutomationExit', (code) => done(code));
    // Generous: on a loaded machine (other suites running) the first workbench load can take over 30 s.
    await page.goto(workbenchUrl(server.port, o.workspace, [
      ['extensionDevelopmentPath', remoteUri(server.port, o.extDir)],
      ['extensionTestsPath', remoteUri(server.port, o.testsEntry)],
      ['skipWelcome', 'true'],
    ]), { timeout: 180_000 });
    const timer = setTimeout(() => done('timeout'), o.timeoutMs ?? 300_000);
    const code = await exited;
    clearTimeout(timer);
    if (code === 'timeout') console.log('extension-host suite: no result within the timeout');
    return code === 0 ? 0 : 1;
  } finally {
    await browser.close();
    await server.stop();
  }
}
