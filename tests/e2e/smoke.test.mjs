// Smoke test: the release page loads at / and under a sub-path, shows the
// app frame, runs its Web Worker and renders the worker's answer, with no
// console error, CSP violation or off-origin request. Saves a screenshot.
import { readFileSync } from 'node:fs';
import { launch, openPage, cspViolations, check, waitDone, resultRows } from './lib.mjs';

const base = process.env.APP_URL ?? 'http://127.0.0.1:8080/';
const context = await launch();
let failed = false;
try {
  for (const path of ['', 'sub/']) {
    const url = new URL(path, base).href;
    const { page, problems } = await openPage(context, url);
    await waitDone(page);
    const title = await page.textContent('h1');
    check(title === 'eevdf-playground', `title is ${title}`);
    const rows = (await resultRows(page)).map((r) => [r.label, r.samples, ...r.lat, r.cpuMs]);
    // The worker's numbers equal the native CLI's golden run of the
    // default preset (tests/golden/default.json).
    const golden = JSON.parse(readFileSync('tests/golden/default.json', 'utf8'));
    const want = Object.entries(golden.by_name).map(([name, n]) => [
      `${name} ×${n.tasks}`, String(n.samples),
      ...(n.samples ? ['p50', 'p90', 'p99', 'p99_9', 'max'].map((k) => n.latency_us[k].toFixed(3)) : ['-', '-', '-', '-', '-']),
      n.cpu_ms.toFixed(1),
    ]);
    check(JSON.stringify(rows) === JSON.stringify(want),
      `worker rows ${JSON.stringify(rows)} != golden ${JSON.stringify(want)}`);
    await page.waitForTimeout(300);
    const csp = await cspViolations(page);
    problems.push(...csp.map((v) => `csp: ${v}`));
    if (path === '') await page.screenshot({ path: 'target/e2e/smoke.png', fullPage: true });
    // Share links: the fragment carries the scenario; the page runs it.
    if (path === '') {
      const two = JSON.parse(readFileSync('tests/golden/two-tasks.json', 'utf8'));
      const frag = 'v1;' + two.scenario.split('\n')
        .filter((l) => l && l !== 'eevdf-scenario v1' && l !== 'end')
        .map((l) => l.replaceAll(' ', '+')).join(';');
      await page.goto(`${url}#${frag}`);
      await page.reload();
      await waitDone(page);
      const got = (await resultRows(page)).map((r) => [r.label, r.cpuMs]);
      const wantTwo = Object.entries(two.by_name).map(([n, v]) => [`${n} ×${v.tasks}`, v.cpu_ms.toFixed(1)]);
      check(JSON.stringify(got) === JSON.stringify(wantTwo), `link rows ${JSON.stringify(got)} != ${JSON.stringify(wantTwo)}`);
      // The user edits it: that is their last scenario (local storage).
      const mine = (await page.$eval('[data-testid=scenario-text]', (e) => e.value)).replace(/duration \S+/, 'duration 3s');
      await page.fill('[data-testid=scenario-text]', mine);
      await waitDone(page);
      // A link from a newer playground: reported, the default runs, and
      // the last scenario is kept and one click away.
      await page.goto(`${url}#v9;future`);
      await page.reload();
      await page.waitForSelector('[data-testid=link-error]', { timeout: 20000 });
      await waitDone(page);
      const shown = await page.$eval('[data-testid=scenario-text]', (e) => e.value);
      check(shown.includes('task ct kind=timer') && !shown.includes('duration 3s'), 'the default runs after a bad link');
      await page.click('[data-testid=restore-last]');
      await page.waitForFunction((m) => document.querySelector('[data-testid=scenario-text]').value === m, mine);
      await waitDone(page);
      check((await resultRows(page)).length === wantTwo.length, 'the last scenario runs again');
      // The next visit (under /sub/, same origin) opens on the default.
      await page.evaluate(() => localStorage.clear());
      // A link saved from engine 0.1 says which engine made it and keeps
      // 0.1's preemption model (full) although v7.1 defaults to lazy.
      const old = readFileSync('fuzz/corpus/link/v0.1-preset-default.txt', 'utf8').trim();
      await page.goto(`${url}#${old.split('#')[1]}`);
      await page.reload();
      const note = await page.waitForSelector('[data-testid=engine-note]', { timeout: 20000 });
      await waitDone(page);
      const noteText = await note.textContent();
      check(noteText.startsWith('made with engine 0.1, computed by 0.12'), `engine note ${noteText}`);
      const model = await page.$eval('[data-testid=preempt]', (e) => e.value);
      check(model === 'full', `a 0.1 link runs under ${model}`);
      await page.screenshot({ path: 'target/e2e/engine-note.png' });
      await page.evaluate(() => localStorage.clear());
      // A link whose scenario is invalid: the worker's typed error shows.
      await page.goto(`${url}#v1;hz+7`);
      await page.reload();
      const e = await page.waitForSelector('[data-testid=scenario-error]', { timeout: 20000 });
      const msg = await e.textContent();
      check(msg.startsWith('2:4:') || msg.startsWith('3:4:'), `scenario error ${msg}`);
      // An over-budget link (one hackbench line of 131072 threads, which
      // once took the tab to 3.5 GB): refused before it runs, with the
      // numbers, and the page stays responsive.
      await page.goto(`${url}#v1;machine+smp512;task+hb+kind=hackbench+groups=256+fds=256`);
      await page.reload();
      await page.waitForFunction(
        () => document.querySelector('[data-testid=scenario-error]')?.textContent.includes('131072 threads'),
        null,
        { timeout: 20000 },
      );
      const big = await page.$eval('[data-testid=scenario-error]', (el) => el.textContent);
      check(big.includes('over the limit of 16384'), `over-budget error ${big}`);
      // The error shows before the worker has loaded; let it load, so
      // closing the page aborts no request.
      await page.waitForLoadState('networkidle');
      await page.evaluate(() => localStorage.clear());
    }
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
