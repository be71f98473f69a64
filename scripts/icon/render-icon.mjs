// Renders scripts/icon/icon.svg to the Marketplace icon resources/icon.png (128×128, transparent
// corners) with Debian's chromium through playwright-core, and a preview of it on light and dark
// backgrounds at the sizes VS Code shows it (128, 64, 42, 28 px) to look at before committing.
//   node scripts/icon/render-icon.mjs [preview.png]
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const svg = readFileSync('scripts/icon/icon.svg', 'utf8');
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
try {
  const page = await browser.newPage({ viewport: { width: 128, height: 128 }, deviceScaleFactor: 1 });
  await page.setContent(`<html><body style="margin:0;background:transparent">${svg}</body></html>`);
  await page.locator('svg').screenshot({ path: 'resources/icon.png', omitBackground: true });
  console.log('wrote resources/icon.png');
  const preview = process.argv[2];
  if (preview) {
    const url = `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
    const row = (bg) => `<div style="background:${bg};padding:16px;display:flex;gap:16px;align-items:center">${[128, 64, 42, 28].map((s) => `<img src="${url}" width="${s}" height="${s}">`).join('')}</div>`;
    const p = await browser.newPage({ viewport: { width: 360, height: 320 } });
    await p.setContent(`<html><body style="margin:0">${row('#ffffff')}${row('#f3f3f3')}${row('#1e1e1e')}${row('#252526')}</body></html>`);
    await p.screenshot({ path: preview, fullPage: true });
    console.log(`wrote ${preview}`);
  }
} finally {
  await browser.close();
}
