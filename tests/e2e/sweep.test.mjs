// The sweep pane (issue 20 item 3): a link with a `&sweep=` section
// opens the pane and runs the grid on a pool of workers (at most one per
// core); the chart draws a point per x value and series; the page's JSON
// lines are `eevdf sweep LINK`'s byte for byte; the address bar carries
// the sweep; Cancel stops every worker; a bad flag is said, not run.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { launch, openPage, cspViolations, check } from './lib.mjs';

const base = process.env.APP_URL ?? 'http://127.0.0.1:8080/';
const cli = 'target/release/eevdf';
const scenario = execFileSync(cli, ['url', 'default', '--duration', '1s', '--base', base], { encoding: 'utf8' }).trim();
const args = '--vary task.hog.slice=1ms,4ms,16ms --features-axis PREEMPT_SHORT,NO_PREEMPT_SHORT --seeds 1..2';
const link = `${scenario}&sweep=${args.replaceAll(' ', '+')}`;

const context = await launch();
let failed = false;
try {
  const { page, problems } = await openPage(context, link);
  const pane = '[data-testid=sweep-pane]';
  await page.waitForSelector(`${pane}[data-state=done]`, { timeout: 180000 });
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  const workers = Number(await page.getAttribute(pane, 'data-workers'));
  check(workers >= 1 && workers <= Math.min(cores, 8), `${workers} workers on ${cores} cores`);
  check(await page.getAttribute(pane, 'data-finished') === '12', 'every cell ran');
  // The chart: one line per feature set, a point per slice.
  const chart = '[data-testid=sweep-chart]';
  check(await page.getAttribute(chart, 'data-series') === '2', 'two series');
  check(await page.getAttribute(chart, 'data-points') === '6', 'six points');
  const xs = await page.$$eval(`${chart} circle`, (cs) => cs.map((c) => c.dataset.x));
  check(JSON.stringify(xs) === JSON.stringify(['1ms', '4ms', '16ms', '1ms', '4ms', '16ms']), `x values ${xs}`);
  const runs = await page.$$eval(`${chart} circle`, (cs) => cs.map((c) => c.dataset.runs));
  check(runs.every((r) => r === '2'), `each point is two seeds: ${runs}`);
  // The same sweep in the CLI, from the same link: the same lines.
  const jsonl = await page.$eval('[data-testid=sweep-jsonl]', (e) => e.textContent);
  const want = execFileSync(cli, ['sweep', link], { encoding: 'utf8' });
  check(jsonl === want, `page lines differ from the CLI's:\n${jsonl.slice(0, 300)}\n---\n${want.slice(0, 300)}`);
  const table = await page.$eval('[data-testid=sweep-table]', (e) => e.textContent);
  const wantTable = execFileSync(cli, ['sweep', link, '--format', 'table'], { encoding: 'utf8' });
  check(table === wantTable, `page table differs from the CLI's:\n${table}\n---\n${wantTable}`);
  check(page.url().endsWith(`&sweep=${args.replaceAll(' ', '+')}`), `address bar ${page.url()}`);
  const cmd = await page.$eval('[data-testid=sweep-cli]', (e) => e.textContent);
  check(cmd.startsWith("eevdf sweep '") && cmd.endsWith(`' ${args}`), `cli line ${cmd}`);
  await page.screenshot({ path: 'target/e2e/sweep.png', fullPage: true });
  // The chart for slides, captioned with the sweep.
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=sweep-export-svg]')]);
  const svg = readFileSync(await dl.path(), 'utf8');
  check(svg.includes(`eevdf sweep ${args}</text>`) && svg.includes('engine '), `svg caption: ${svg.slice(-300)}`);
  check((svg.match(/<circle /g) ?? []).length === 6, 'six points in the file');
  writeFileSync('target/e2e/sweep-export.svg', svg);

  // A bad flag is said, and the last sweep's points stay.
  await page.fill('[data-testid=sweep-spec]', '--jobs 2');
  await page.press('[data-testid=sweep-spec]', 'Enter');
  const err = await page.textContent('[data-testid=sweep-error]');
  check(err.includes('unknown flag `--jobs`'), `error ${err}`);
  check(await page.getAttribute(chart, 'data-points') === '6', 'the chart stays');

  // Cancel stops the pool: no point arrives after it. (Cells of 600 s
  // simulated take a while each, so the run is still going.)
  await page.fill('[data-testid=sweep-spec]', '--vary duration=600s --seeds 1..40');
  await page.click('[data-testid=sweep-run]');
  await page.waitForFunction((p) => Number(document.querySelector(p).dataset.finished) >= 1, pane, { timeout: 60000 });
  await page.click('[data-testid=sweep-cancel]');
  await page.waitForSelector(`${pane}[data-state=cancelled]`);
  const at = await page.getAttribute(pane, 'data-finished');
  await page.waitForTimeout(1500);
  check(await page.getAttribute(pane, 'data-finished') === at, 'a point arrived after Cancel');
  check(Number(at) < 40, `cancelled after ${at} of 40`);
  check(page.url().includes('&sweep=--vary+duration=600s+--seeds+1..40'), `the link follows the run: ${page.url()}`);

  const csp = await cspViolations(page);
  problems.push(...csp.map((v) => `csp: ${v}`));
  check(problems.length === 0, `problems:\n${problems.join('\n')}`);
  console.log(`sweep: ok (12 cells on ${workers} workers of ${cores} cores; cancelled at ${at} of 40)`);
} catch (e) {
  console.error(e);
  failed = true;
} finally {
  await context.close();
}
process.exit(failed ? 1 : 0);
