// Big machines fold (issue 19 item 6): past 32 CPUs each LLC shows as
// one line (its CPU count, how many run, the tasks pinned inside) until
// its button shows the CPU cards; the machine pane then fits a screen
// (xeon was 1,330 px tall, epyc 2,758 px). Screenshot bigmachine.png.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, openPage, cspViolations, check, waitDone } from './lib.mjs';

const base = process.env.APP_URL ?? 'http://127.0.0.1:8080/';
const cli = 'target/release/eevdf';
const file = join(mkdtempSync(join(tmpdir(), 'eevdf-big-')), 'big.scn');
writeFileSync(file, 'eevdf-scenario v1\nmachine xeon-4314-2s\nduration 1s\n' +
  'task ct kind=timer period=1ms cpus=40\ntask hog kind=hog count=8\nend\n');
const link = execFileSync(cli, ['url', file, '--base', base], { encoding: 'utf8' }).trim();
const height = (page) => page.$eval('[data-testid=machine-pane]', (e) => e.getBoundingClientRect().height);

const context = await launch();
let failed = false;
try {
  const { page, problems } = await openPage(context, link);
  await waitDone(page);
  const folded = await height(page);
  check(folded <= 600, `xeon folded: ${folded} px`);
  const folds = await page.$$eval('button[data-testid^=fold-]', (b) => b.map((x) => [x.dataset.testid, x.getAttribute('aria-expanded')]));
  check(folds.length === 2 && folds.every(([, e]) => e === 'false'), `xeon folds: ${JSON.stringify(folds)}`);
  check(!(await page.$('[data-testid=cpu-40]')), 'CPU cards hidden while folded');
  // The pinned task stays in view, inside its LLC's line.
  const where = await page.$eval('button.chip[data-task=ct]', (c) => c.closest('[data-testid^=llc-summary-]')?.dataset.testid);
  check(where, 'the chip pinned to CPU 40 shows in its folded LLC');
  const [, node, llc] = where.match(/(\d+)-(\d+)$/);
  await page.click(`[data-testid=fold-${node}-${llc}]`);
  await page.waitForSelector('[data-testid=cpu-40] button.chip[data-task=ct]');
  check(await page.getAttribute(`[data-testid=fold-${node}-${llc}]`, 'aria-expanded') === 'true', 'shown');
  const opened = await height(page);
  check(opened > folded, `opening an LLC grows the pane: ${folded} -> ${opened}`);
  await page.screenshot({ path: 'target/e2e/bigmachine.png', fullPage: true });
  // Folding again by keyboard.
  await page.focus(`[data-testid=fold-${node}-${llc}]`);
  await page.keyboard.press('Enter');
  await page.waitForSelector('[data-testid=cpu-40]', { state: 'detached' });
  // epyc: 256 CPUs in a screen or so.
  await page.selectOption('[data-testid=machine]', 'epyc-2x128c');
  await page.waitForFunction(() => document.querySelectorAll('button[data-testid^=fold-]').length > 2);
  const epyc = await height(page);
  await page.screenshot({ path: 'target/e2e/bigmachine-epyc.png', fullPage: true });
  check(epyc <= 2000, `epyc folded: ${epyc} px`);
  problems.push(...(await cspViolations(page)).map((v) => `csp: ${v}`));
  check(problems.length === 0, problems.join('\n'));
  console.log(`bigmachine: ok (xeon ${folded.toFixed(0)} px folded, ${opened.toFixed(0)} px with one LLC shown; epyc ${epyc.toFixed(0)} px)`);
} catch (e) {
  console.error(e);
  failed = true;
} finally {
  await context.close();
}
process.exit(failed ? 1 : 0);
