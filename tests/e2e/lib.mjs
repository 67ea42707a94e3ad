// Shared end-to-end harness: launches Debian's Chromium headless through
// playwright-core and records everything that must not happen on a page
// (console errors, page errors, CSP violations, off-origin requests).
import { chromium } from 'playwright-core';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

export async function launch() {
  const userDataDir = mkdtempSync(join(tmpdir(), 'eevdf-e2e-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 800 },
  });
  return context;
}

/** Opens `url` in a fresh page with problem recorders attached. */
export async function openPage(context, url) {
  const page = await context.newPage();
  const problems = [];
  const origin = new URL(url).origin;
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith(origin) && !u.startsWith('data:')) problems.push(`off-origin request: ${u}`);
  });
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__csp.push(`${e.violatedDirective} blocked=${e.blockedURI}`);
    });
  });
  await page.goto(url);
  return { page, problems };
}

export async function cspViolations(page) {
  return page.evaluate(() => window.__csp ?? []);
}

export function check(cond, msg) {
  if (!cond) throw new Error(`check failed: ${msg}`);
}
