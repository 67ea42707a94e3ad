// Fidelity report item 7: a preset with kernel reference data shows the
// kernel's numbers as rows under its task's simulated row, with the
// kernel version, the command that reproduces them and a mark; every
// other scenario (the default preset, an edited fidelity preset) is
// marked "not checked against a kernel". The three marks differ in
// symbol and words, not only in colour. On a phone the table stays in
// its pane. Screenshots: target/e2e/fidelity.png, fidelity-phone.png.
import { launch, openPage, cspViolations, check, waitDone } from './lib.mjs';

const base = process.env.APP_URL ?? 'http://127.0.0.1:8080/';
const shot = (page, name) => page.screenshot({ path: `target/e2e/${name}.png`, fullPage: true });
const mark = (page) => page.$eval('[data-testid=fidelity]', (e) => ({ key: e.dataset.mark, text: e.textContent }));
const kernelRows = (page) => page.$$eval('[data-testid=worker-result] tr[data-side=kernel]', (trs) => trs.map((tr) => ({
  task: tr.dataset.task,
  series: tr.dataset.series,
  mark: tr.dataset.mark,
  label: tr.querySelector('td').textContent,
  lat: [...tr.querySelectorAll('td[data-us]')].map((td) => td.dataset.us),
  symbol: tr.querySelector('td.mark')?.textContent,
  title: tr.title,
  // The row above: the task's simulated row or another kernel row.
  above: tr.previousElementSibling?.dataset.side ?? 'sim',
  aboveTask: tr.previousElementSibling?.dataset.task,
})));
const WORDS = {
  agrees: ['✓', 'agrees with the kernel'],
  differs: ['≠', 'differs from the kernel'],
  unchecked: ['–', 'not checked against a kernel'],
};

const context = await launch();
let failed = false;
try {
  const { page, problems } = await openPage(context, base);
  await waitDone(page);

  // The default preset has kernel data (make default-ref): a kernel row
  // under each of its timers, and the mark.
  let m = await mark(page);
  check(m.key === 'agrees', `default mark ${JSON.stringify(m)}`);
  const defaultRows = await kernelRows(page);
  check(defaultRows.length === 2, `kernel rows for the default's ct and tt: ${JSON.stringify(defaultRows)}`);
  // A preset without kernel data: not checked, no kernel rows.
  await page.selectOption('[data-testid=preset]', 'smp4-hogs');
  await waitDone(page);
  m = await mark(page);
  check(m.key === 'unchecked' && m.text.startsWith(WORDS.unchecked.join(' ')), `smp4-hogs mark ${JSON.stringify(m)}`);
  check((await kernelRows(page)).length === 0, 'no kernel rows for smp4-hogs');

  // fidelity-ct-1hog: a kernel row per series under ct, with the mark.
  await page.selectOption('[data-testid=preset]', 'fidelity-ct-1hog');
  await waitDone(page);
  const rows = await kernelRows(page);
  check(rows.length >= 1, 'kernel rows shown');
  for (const r of rows) {
    check(r.task === 'ct' && r.aboveTask === 'ct', `kernel row under ct: ${JSON.stringify(r)}`);
    check(/^kernel \d+\.\d+\.\d+ \(Debian, QEMU\)$/.test(r.label), `label ${r.label}`);
    check(r.lat.length === 5 && r.lat.every((v) => Number(v) > 0), `latencies ${r.lat}`);
    check(r.symbol === WORDS[r.mark]?.[0], `row mark ${r.mark} ${r.symbol}`);
    check(r.title.includes(`eevdf kernel run fidelity-ct-1hog --kernel ${r.series} --seed N`) && r.title.includes('seeds 1-'),
      `row tooltip ${r.title}`);
  }
  m = await mark(page);
  check(m.key === 'agrees' || m.key === 'differs', `fidelity mark ${m.key}`);
  check(m.text.startsWith(WORDS[m.key].join(' ')), `mark words ${m.text}`);
  const cmds = await page.$$eval('[data-testid=kernel-command]', (cs) => cs.map((c) => c.textContent));
  check(cmds.length === new Set(rows.map((r) => r.series)).size
    && cmds.every((c) => /^eevdf kernel run fidelity-ct-1hog --kernel [\d.]+ --seed N$/.test(c)), `commands ${cmds}`);
  console.log(`  fidelity-ct-1hog: ${rows.map((r) => `${r.label} ${r.mark} p99 ${r.lat[2]} us`).join('; ')}; mark ${m.key}`);
  await page.locator('[aria-label=Results]').screenshot({ path: 'target/e2e/fidelity-results.png' });
  await shot(page, 'fidelity');

  // A/B: the kernel rows stay, under the task's A/B/Δ rows.
  await page.click('[data-testid=pin]');
  await page.waitForFunction(() => !document.body.textContent.includes('Baseline still running'), null, { timeout: 30000 });
  const ab = await kernelRows(page);
  check(ab.length === rows.length && ab[0].above === 'delta', `A/B kernel rows ${JSON.stringify(ab)}`);
  await page.click('[data-testid=pin]');

  // Edited away from the preset: not checked.
  const t = await page.$eval('[data-testid=scenario-text]', (e) => e.value);
  await page.fill('[data-testid=scenario-text]', t.replace('duration 10s', 'duration 5s'));
  await waitDone(page);
  m = await mark(page);
  check(m.key === 'unchecked' && (await kernelRows(page)).length === 0, `edited: ${JSON.stringify(m)}`);

  // A phone: the table with its kernel rows fits the pane.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.selectOption('[data-testid=preset]', 'fidelity-ct-4hog');
  await waitDone(page);
  check((await kernelRows(page)).length >= 1, 'kernel rows on the phone');
  // The kernel rows (their label wraps) make the table no wider than
  // the same scenario's table without them (edited: not checked).
  const width = () => page.$eval('[data-testid=worker-result]', (t) => t.getBoundingClientRect().width);
  const withKernel = await width();
  await page.locator('[aria-label=Results]').screenshot({ path: 'target/e2e/fidelity-phone.png' });
  const t4 = await page.$eval('[data-testid=scenario-text]', (e) => e.value);
  await page.fill('[data-testid=scenario-text]', t4.replace('duration 10s', 'duration 5s'));
  await waitDone(page);
  const plain = await width();
  // (a few px: the two runs print different numbers)
  check(withKernel <= plain + 4, `phone table ${withKernel} px with kernel rows, ${plain} px without`);
  console.log(`  phone: table ${withKernel.toFixed(0)} px with kernel rows, ${plain.toFixed(0)} px without`);

  problems.push(...(await cspViolations(page)).map((v) => `csp: ${v}`));
  if (problems.length) {
    failed = true;
    console.error(`FAIL\n  ${problems.join('\n  ')}`);
  } else {
    console.log('ok fidelity: kernel rows, marks, commands, A/B, edited text, phone width');
  }
} catch (e) {
  for (const pg of context.pages()) if (!pg.isClosed()) await pg.screenshot({ path: 'target/e2e/failure.png', fullPage: true });
  throw e;
} finally {
  await context.close();
}
process.exit(failed ? 1 : 0);
