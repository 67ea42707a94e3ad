// Smoke test: the release page loads at / and under a sub-path, shows the
// app frame, runs its Web Worker and renders the worker's answer, with no
// console error, CSP violation or off-origin request. Saves a screenshot.
import { launch, openPage, cspViolations, check } from './lib.mjs';

const base = process.env.APP_URL ?? 'http://127.0.0.1:8080/';
const context = await launch();
let failed = false;
try {
  for (const path of ['', 'sub/']) {
    const url = new URL(path, base).href;
    const { page, problems } = await openPage(context, url);
    await page.waitForSelector('[data-testid=worker-result]', { timeout: 20000 });
    const title = await page.textContent('h1');
    check(title === 'eevdf-playground', `title is ${title}`);
    const rows = await page.$$eval('[data-testid=worker-result] tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    // nice 0, 0, 5: weights 1024, 1024, 335 of 2383.
    check(JSON.stringify(rows) === JSON.stringify([
      ['t0', '0', '1024', '43.0 %'], ['t1', '0', '1024', '43.0 %'], ['t2', '5', '335', '14.1 %'],
    ]), `worker rows ${JSON.stringify(rows)}`);
    await page.waitForTimeout(300);
    const csp = await cspViolations(page);
    problems.push(...csp.map((v) => `csp: ${v}`));
    if (path === '') await page.screenshot({ path: 'target/e2e/smoke.png', fullPage: true });
    if (problems.length) {
      failed = true;
      console.error(`FAIL ${url}\n  ${problems.join('\n  ')}`);
    } else {
      console.log(`ok ${url}`);
    }
    await page.close();
  }
} finally {
  await context.close();
}
process.exit(failed ? 1 : 0);
