// Budgets of the playground (issue "playground" item 11), measured on
// the release dist/ and printed for the notes: total gzipped size, time
// from navigation to the first results on screen, an edit's first
// numbers, and the worker's simulation speed against the native CLI.
// Only the size (deterministic) fails the run: timings on a shared CI
// machine are reported, never asserted (no timed tests), each line
// saying whether it is within its budget.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { launch, openPage, check, waitDone } from './lib.mjs';

const verdict = (ok) => (ok ? 'within budget' : 'OVER BUDGET');

const base = process.env.APP_URL ?? 'http://127.0.0.1:8080/';
const files = (d) => readdirSync(d).flatMap((f) => {
  const p = join(d, f);
  return statSync(p).isDirectory() ? files(p) : [p];
});
let gz = 0;
for (const f of files('dist')) gz += gzipSync(readFileSync(f), { level: 9 }).length;
console.log(`budget: dist gzipped ${(gz / 1024).toFixed(1)} KiB (limit 600 KiB)`);
check(gz <= 600 * 1024, `dist is ${gz} bytes gzipped`);

const context = await launch();
try {
  const { page, problems } = await openPage(context, base);
  await page.waitForSelector('[data-testid=worker-result]', { timeout: 20000 });
  const firstMs = await page.evaluate(() => performance.now());
  console.log(`budget: first results ${firstMs.toFixed(0)} ms after navigation (limit 1500 ms): ${verdict(firstMs <= 1500)}`);
  // An edit's first numbers: from the click on a feature switch to a
  // table computed for the new scenario (debounce, worker restart and
  // first chunk included), median of five flips.
  await waitDone(page);
  const flips = [];
  for (let i = 0; i < 5; i++) {
    const [t0, req] = await page.evaluate(() => [performance.now(), document.querySelector('.app').dataset.request]);
    await page.click('input[data-feature=RUN_TO_PARITY]');
    const t1 = await page.evaluate((req) => new Promise((resolve, reject) => {
      const start = performance.now();
      const tick = () => {
        const a = document.querySelector('.app');
        if (a.dataset.request !== req && a.dataset.resultsFor === a.dataset.request) resolve(performance.now());
        else if (performance.now() - start > 10000) reject(new Error('no new results within 10 s'));
        else requestAnimationFrame(tick);
      };
      tick();
    }), req);
    flips.push(t1 - t0);
  }
  flips.sort((a, b) => a - b);
  console.log(`budget: first numbers after an edit ${flips[2].toFixed(0)} ms (median of 5: ${flips.map((f) => f.toFixed(0)).join(' ')}; limit 200 ms): ${verdict(flips[2] <= 200)}`);
  check(problems.length === 0, problems.join('\n'));
  // Its worker would compete for the CPUs with what follows.
  await page.close();

  // Worker speed: the same 130 s scenario natively (the CLI, process
  // start included) and in the worker (its own wall time simulating,
  // snapshots and timeline included). The first run after opening the
  // link also pays for V8 compiling the worker's wasm (Liftoff first,
  // optimised code only for functions that have run hot), so it is
  // reported on its own; the budget is the simulation's speed, measured
  // by re-running the same scenario in the same worker. CLI and worker
  // runs alternate, so both see the same machine (a shared CI machine's
  // speed drifts by up to 2x over seconds), and the best of each counts.
  const cli = ['target/release/eevdf', 'target/debug/eevdf'].find((p) => existsSync(p));
  check(cli, 'no eevdf binary in target/');
  // s08-ct-rtapp's speed is asserted; the hackbench and schbench
  // presets' (issue 20: at least 0.6x native) are reported.
  for (const [preset, limit] of [['s08-ct-rtapp', 0.5], ['hackbench-1g', null], ['nb-v5-schbench', null]]) {
    const native = () => {
      const t0 = process.hrtime.bigint();
      execFileSync(cli, ['run', preset, '--format', 'json']);
      return Number(process.hrtime.bigint() - t0) / 1e6;
    };
    const link = execFileSync(cli, ['url', preset, '--base', base], { encoding: 'utf8' }).trim();
    const { page: p2, problems: pr2 } = await openPage(context, link);
    // Polls on a timer, not on animation frames: the measurement should
    // not make the page draw.
    const finished = async () => {
      await p2.waitForFunction(() => {
        const a = document.querySelector('.app');
        return a?.dataset.state === 'done' && a.dataset.resultsFor === a.dataset.request;
      }, null, { timeout: 120000, polling: 100 });
      return Number(await p2.$eval('[data-testid=progress]', (e) => e.dataset.wallMs));
    };
    const coldMs = await finished();
    const nativeRuns = [];
    const workerRuns = [];
    for (let i = 0; i < 5; i++) {
      nativeRuns.push(native());
      // Flip a switch and flip it back: the first request is cancelled by
      // the second, which runs the link's scenario again.
      await p2.click('input[data-feature=RUN_TO_PARITY]');
      await p2.click('input[data-feature=RUN_TO_PARITY]');
      workerRuns.push(await finished());
    }
    const nativeMs = Math.min(...nativeRuns);
    const workerMs = Math.min(...workerRuns);
    const ratio = nativeMs / workerMs;
    const ms = (a) => a.map((x) => x.toFixed(0)).join(' ');
    const judged = limit === null
      ? `(goal >= 60%, reported): ${ratio >= 0.6 ? 'within' : 'UNDER'} goal`
      : `(limit >= ${limit * 100}%): ${verdict(ratio >= limit)}`;
    console.log(`budget: ${preset} native ${nativeMs.toFixed(0)} ms (${cli}; runs ${ms(nativeRuns)}), ` +
      `worker ${workerMs.toFixed(0)} ms (runs ${ms(workerRuns)}): worker runs at ${(ratio * 100).toFixed(0)}% ` +
      `of native speed ${judged}`);
    console.log(`budget: ${preset} first run after opening the link (wasm compilation included): ` +
      `${coldMs.toFixed(0)} ms, ${(nativeMs / coldMs * 100).toFixed(0)}% of native speed`);
    check(pr2.length === 0, pr2.join('\n'));
    await p2.close();
  }

  // The page against the CLI for the same link (issue 16 item 3): from
  // navigation to the final result on screen (worker start, wasm
  // compilation, every snapshot and its drawing included), against the
  // CLI's whole process. Goal: at most 2x; reported, not asserted.
  // `make budgets` (BUDGETS=all) runs every preset.
  const cases = process.env.BUDGETS === 'all'
    ? execFileSync(cli, ['presets'], { encoding: 'utf8' }).trim().split('\n').map((l) => [l.split(/\s+/)[0]])
    : [
        ['s08-ct-rtapp'],
        ['hackbench-1g'],
        ['nb-v5-schbench', '--set', 'machine=epyc-2x128c', '--duration', '5s'],
        ['flatten-hackbench', '--duration', '120s'],
      ];
  for (const args of cases) {
    const t0 = process.hrtime.bigint();
    execFileSync(cli, ['run', ...args, '--format', 'json']);
    const cliMs = Number(process.hrtime.bigint() - t0) / 1e6;
    const url = execFileSync(cli, ['url', ...args, '--base', base], { encoding: 'utf8' }).trim();
    const { page: p3, problems: pr3 } = await openPage(context, url);
    await p3.waitForFunction(() => {
      const a = document.querySelector('.app');
      return a?.dataset.state === 'done' && a.dataset.resultsFor === a.dataset.request;
    }, null, { timeout: 600000, polling: 100 });
    const pageMs = await p3.evaluate(() => performance.now());
    const ratio = pageMs / cliMs;
    console.log(`budget: page/CLI ${args.join(' ')}: page ${pageMs.toFixed(0)} ms to the final result, ` +
      `CLI ${cliMs.toFixed(0)} ms: ${ratio.toFixed(2)}x (goal <= 2x): ${verdict(ratio <= 2)}`);
    check(pr3.length === 0, pr3.join('\n'));
    await p3.close();
  }
} finally {
  await context.close();
}
