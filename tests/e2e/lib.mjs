// Shared end-to-end harness: launches Debian's Chromium headless through
// playwright-core and records everything that must not happen on a page
// (console errors, page errors, CSP violations, off-origin requests).
import { chromium } from 'playwright-core';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/** A fresh browser profile; `options` override the context's (a phone's
 * viewport and touch screen, say). */
export async function launch(options = {}) {
  const userDataDir = mkdtempSync(join(tmpdir(), 'eevdf-e2e-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 800 },
    ...options,
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

/** Waits until the page shows the finished run of its current scenario. */
export async function waitDone(page, timeout = 30000) {
  await page.waitForSelector('.app[data-state=done] [data-testid=worker-result]', { timeout });
}

/**
 * The results table as data: per task, its exact latencies in µs (the
 * JSON's 3 decimals, or '-'), samples and CPU ms. `side` picks the A or B
 * rows of an A/B table; without it, rows without a side.
 */
export async function resultRows(page, side = null) {
  return page.$$eval('[data-testid=worker-result] tbody tr', (trs, side) => trs
    .filter((tr) => (tr.dataset.side ?? null) === side)
    .map((tr) => ({
      task: tr.dataset.task,
      samples: tr.querySelector('td[data-samples]')?.dataset.samples,
      lat: [...tr.querySelectorAll('td[data-us]')].map((td) => td.dataset.us),
      cpuMs: tr.querySelector('td[data-cpu-ms]')?.dataset.cpuMs,
      label: tr.querySelector('td').textContent,
    })), side);
}

/**
 * A finger drag from the centre of one element to another's: real touch
 * events through the DevTools protocol, which Chromium turns into
 * pointer events of type "touch" (the context needs `hasTouch`). Both
 * elements must be on screen.
 */
export async function touchDrag(page, from, to) {
  const cdp = await page.context().newCDPSession(page);
  const a = await page.locator(from).boundingBox();
  const b = await page.locator(to).boundingBox();
  const at = (i) => [{
    x: a.x + a.width / 2 + ((b.x + b.width / 2) - (a.x + a.width / 2)) * i / 8,
    y: a.y + a.height / 2 + ((b.y + b.height / 2) - (a.y + a.height / 2)) * i / 8,
  }];
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: at(0) });
  for (let i = 1; i <= 8; i++) await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: at(i) });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await cdp.detach();
}

/** An element's box once it has stopped moving (a re-render after the
 * last edit can still shift the layout when a gesture starts). */
async function settledBox(page, sel) {
  let box = await page.locator(sel).boundingBox();
  for (let i = 0; i < 20; i++) {
    await page.waitForTimeout(50);
    const now = await page.locator(sel).boundingBox();
    if (JSON.stringify(now) === JSON.stringify(box)) return now;
    box = now;
  }
  return box;
}

/** A pointer drag from the centre of one element to another's. */
export async function drag(page, from, to) {
  const a = await settledBox(page, from);
  const b = await settledBox(page, to);
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await page.mouse.down();
  for (let i = 1; i <= 8; i++) {
    await page.mouse.move(a.x + a.width / 2 + ((b.x + b.width / 2) - (a.x + a.width / 2)) * i / 8,
      a.y + a.height / 2 + ((b.y + b.height / 2) - (a.y + a.height / 2)) * i / 8);
  }
  await page.mouse.up();
}

// axe-core's source, injected by the DevTools protocol: the shipped CSP
// (script-src 'self') would block a script tag, and is never relaxed.
const AXE_SOURCE = readFileSync(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url), 'utf8');

/** axe-core's serious and critical violations on the page as it is now:
 * `[{id, impact, help, nodes}]`, nodes as CSS selectors (at most 5). */
export async function axeViolations(page) {
  if (!await page.evaluate(() => typeof window.axe === 'object')) await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ')) }));
  });
}

/** What on the page as it is now misses the phone sizes of issue 19:
 * controls under 44x44 px (a checkbox's target is its label; inline term
 * links inside a sentence are WCAG 2.5.8's inline exception; tabindex=-1
 * only takes focus from code), and text, SVG text as rendered, under
 * 11 px. */
export async function phoneMisses(page) {
  return page.evaluate(() => {
    const vis = (e) => {
      const b = e.getBoundingClientRect();
      const s = getComputedStyle(e);
      return b.width > 0 && b.height > 0 && s.visibility !== 'hidden' && s.display !== 'none';
    };
    const name = (e) => `${e.tagName.toLowerCase()}${e.dataset.testid ? `[${e.dataset.testid}]` : ''} "${(e.textContent || e.value || '').trim().slice(0, 24)}"`;
    const controls = [...document.querySelectorAll('button, input, select, summary, textarea, a[href], [role=button], [tabindex]:not([tabindex="-1"])')]
      .filter((e) => vis(e) && !(e.matches('a.term') && e.closest('p, li, dd')));
    const small = controls.map((e) => {
      const t = (e.type === 'checkbox' || e.type === 'radio') && e.closest('label') ? e.closest('label') : e;
      const b = t.getBoundingClientRect();
      return [name(e), Math.round(b.width), Math.round(b.height)];
    }).filter(([, w, h]) => w < 44 || h < 44).map(([n, w, h]) => `${n} ${w}x${h}`);
    const texts = [...document.querySelectorAll('body *')]
      .filter((e) => !(e instanceof SVGElement) && vis(e) && [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim()));
    const tiny = texts.map((e) => [name(e), parseFloat(getComputedStyle(e).fontSize)]).filter(([, f]) => f < 11);
    for (const t of document.querySelectorAll('svg text')) {
      if (!vis(t)) continue;
      const svg = t.ownerSVGElement;
      const vb = svg.viewBox.baseVal;
      const k = vb && vb.width ? svg.getBoundingClientRect().width / vb.width : 1;
      const px = parseFloat(getComputedStyle(t).fontSize) * k;
      if (px < 11) tiny.push([`svg.${svg.getAttribute('class')} "${t.textContent.slice(0, 16)}"`, +px.toFixed(1)]);
    }
    return { small, tiny: tiny.map(([n, f]) => `${n} ${f}px`) };
  });
}
