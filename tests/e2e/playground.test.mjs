// The playground: choose a preset, flip PREEMPT_SHORT and see the
// percentiles change; the address bar follows and opening it restores
// the scenario; a malformed scenario shows its error and keeps the last
// results. Screenshots go to target/e2e/.
import { inflateRawSync } from 'node:zlib';
import { launch, openPage, cspViolations, check } from './lib.mjs';

// The scenario lines a share fragment carries (#v1; or #z1.).
const fragText = (hash) => {
  const f = hash.replace(/^#/, '');
  if (f.startsWith('v1;')) return decodeURIComponent(f.slice(3).replaceAll('+', ' ')).replaceAll(';', '\n');
  if (f.startsWith('z1.')) return inflateRawSync(Buffer.from(f.slice(3), 'base64url')).toString('utf8');
  return '';
};

const base = process.env.APP_URL ?? 'http://127.0.0.1:8080/';
const context = await launch();
let failed = false;
const p99 = (page) => page.$$eval('[data-testid=worker-result] tbody tr', (trs) =>
  trs.filter((tr) => tr.cells[0].textContent.startsWith('ct ')).map((tr) => tr.cells[4].textContent)[0]);
try {
  const { page, problems } = await openPage(context, base);
  await page.waitForSelector('[data-testid=worker-result]', { timeout: 20000 });
  await page.selectOption('[data-testid=preset]', 'preempt-short');
  await page.waitForFunction(() => document.querySelector('[data-testid=scenario-text]').value.includes('task rt kind=periodic'));
  await page.waitForFunction(() => location.hash.length > 1 && !location.hash.includes('hog'), null, { timeout: 10000 });
  check(fragText(await page.evaluate(() => location.hash)).includes('task rt kind=periodic'), 'fragment carries the preset');
  const before = await (async () => { await page.waitForTimeout(1500); return p99(page); })();
  // Flip PREEMPT_SHORT off: the fragment and the numbers follow.
  const h0 = await page.evaluate(() => location.hash);
  await page.click('input[data-feature=PREEMPT_SHORT]');
  await page.waitForFunction((h) => location.hash !== h, h0, { timeout: 10000 });
  check(fragText(await page.evaluate(() => location.hash)).includes('features NO_PREEMPT_SHORT'), 'fragment follows the toggle');
  await page.waitForFunction((b) => {
    const tr = [...document.querySelectorAll('[data-testid=worker-result] tbody tr')].find((t) => t.cells[0].textContent.startsWith('ct '));
    return tr && tr.cells[4].textContent !== b;
  }, before, { timeout: 20000 });
  const after = await p99(page);
  check(Number(after) !== Number(before), `p99 unchanged: ${before} -> ${after}`);
  await page.screenshot({ path: 'target/e2e/playground.png', fullPage: true });
  // The link restores the scenario in a new page.
  const link = page.url();
  const { page: p2, problems: pr2 } = await openPage(context, link);
  await p2.waitForSelector('[data-testid=worker-result]', { timeout: 20000 });
  const t1 = await page.$eval('[data-testid=scenario-text]', (e) => e.value);
  const t2 = await p2.$eval('[data-testid=scenario-text]', (e) => e.value);
  check(t1 === t2, `restored text differs:\n${t1}\n---\n${t2}`);
  await p2.waitForTimeout(1500);
  check(await p99(p2) === after, 'the link shows the same p99');
  // The last scenario comes back on a visit without a link.
  const { page: p3 } = await openPage(context, base);
  await p3.waitForSelector('[data-testid=worker-result]', { timeout: 20000 });
  const t3 = await p3.$eval('[data-testid=scenario-text]', (e) => e.value);
  check(t3 === t1, `stored scenario not restored:\n${t3}`);
  // A bad link shows its error, runs the default, keeps the stored one.
  const { page: p4 } = await openPage(context, `${base}#v9;x`);
  await p4.waitForSelector('[data-testid=link-error]', { timeout: 20000 });
  const { page: p5 } = await openPage(context, base);
  await p5.waitForSelector('[data-testid=worker-result]', { timeout: 20000 });
  check(await p5.$eval('[data-testid=scenario-text]', (e) => e.value) === t1, 'bad link lost the stored scenario');
  // A malformed edit: error shown, last results kept.
  await page.fill('[data-testid=scenario-text]', t1.replace('hz 250', 'hz 7'));
  const err = await page.waitForSelector('[data-testid=scenario-error]', { timeout: 5000 });
  check((await err.textContent()).includes('hz'), 'error names hz');
  check(await page.$('[data-testid=worker-result]') !== null, 'last results kept');
  await page.screenshot({ path: 'target/e2e/playground-error.png', fullPage: true });
  for (const [pg, pr] of [[page, problems], [p2, pr2]]) {
    pr.push(...(await cspViolations(pg)).map((v) => `csp: ${v}`));
  }
  const all = [...problems, ...pr2];
  if (all.length) {
    failed = true;
    console.error(`FAIL\n  ${all.join('\n  ')}`);
  } else {
    console.log(`ok playground: p99 ${before} -> ${after} us, link restores`);
  }
} finally {
  await context.close();
}
process.exit(failed ? 1 : 0);
