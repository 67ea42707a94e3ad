// The playground end to end (issue "playground" item 9): drag a
// cyclictest template onto CPU 1, toggle PREEMPT_SHORT and see the
// percentiles change, pin an A/B baseline, copy the link and reopen it
// (same scenario, and the p99 the CLI prints for that link), copy the mail
// block and paste it back (quoted and raw; with A/B, the same bytes as
// `eevdf run -` prints, and the pin comes back), open two links in one tab,
// edit and delete tasks by keyboard and dialog,
// stream a long run, help overlay, dark theme, phone width. Screenshots
// of the main states go to target/e2e/ (docs/ holds the committed ones).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { inflateRawSync } from 'node:zlib';
import { launch, openPage, cspViolations, check, waitDone, resultRows, drag, phoneMisses } from './lib.mjs';

// The scenario lines a share fragment carries (#v1; or #z1.).
const fragText = (hash) => {
  const f = hash.replace(/^#/, '');
  if (f.startsWith('v1;')) return decodeURIComponent(f.slice(3).replaceAll('+', ' ')).replaceAll(';', '\n');
  if (f.startsWith('z1.')) return inflateRawSync(Buffer.from(f.slice(3), 'base64url')).toString('utf8');
  return '';
};
const cli = ['target/release/eevdf', 'target/debug/eevdf'].find((p) => existsSync(p));
const text = (page) => page.$eval('[data-testid=scenario-text]', (e) => e.value);
const row = async (page, task, side = null) => (await resultRows(page, side)).find((r) => r.task === task);
const shot = (page, name) => page.screenshot({ path: `target/e2e/${name}.png`, fullPage: true });

const base = process.env.APP_URL ?? 'http://127.0.0.1:8080/';
const context = await launch();
await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(base).origin });
let failed = false;
const all = [];
try {
  const { page, problems } = await openPage(context, base);
  all.push([page, problems]);
  await waitDone(page);
  await shot(page, 'default');
  await page.screenshot({ path: 'target/e2e/default-top.png' }); // docs/default.png
  // The max says when its wakeup was due (perf sched latency's "max at").
  const at = await page.$eval('[data-testid=worker-result] tbody tr[data-task=ct] .max-at', (e) => [e.textContent, e.dataset.maxAt]);
  check(/^at \d+\.\d{3} s$/.test(at[0]) && Number(at[1]) >= 0 && Number(at[1]) < 10, `max at: ${at}`);

  // 0. The default demonstrates (issue 16 item 1): each of its Try
  // buttons flips one feature and moves the named percentile by at least
  // a fifth, the way the real kernel does (tests/kernel-ref).
  const defaultText = await text(page);
  const tries = await page.$$eval('[data-testid=try-flip] button', (bs) => bs.map((b) => b.dataset.token));
  check(tries.length >= 3 && ['NO_PREEMPT_SHORT', 'NO_RUN_TO_PARITY', 'NEXT_BUDDY'].every((t) => tries.includes(t)), `the default's flips: ${tries}`);
  const said = await page.textContent('[data-testid=try-flip]');
  const baseline = await resultRows(page);
  for (const token of tries) {
    const [, task, pct, way] = new RegExp(`Try ${token}: (\\w+)'s (p[\\d.]+) (rises|falls)`).exec(said);
    const col = { p50: 0, p90: 1, p99: 2, 'p99.9': 3 }[pct]; // resultRows' lat: p50, p90, p99, p99.9, max
    const before = Number(baseline.find((r) => r.task === task).lat[col]);
    await page.click(`[data-testid=try-flip] button[data-token=${token}]`);
    await page.waitForFunction((t) => document.querySelector('[data-testid=scenario-text]').value.includes(t), token);
    await page.waitForFunction(([t, c, b]) => {
      const td = document.querySelectorAll(`[data-testid=worker-result] tbody tr[data-task=${t}] td[data-us]`)[c];
      return document.querySelector('.app[data-state=done]') && td && Number(td.dataset.us) !== b;
    }, [task, col, before], { timeout: 60000 }).catch(() => {}); // unchanged: the check below says so
    const after = Number((await row(page, task)).lat[col]);
    const moved = way === 'rises' ? after >= before * 1.2 : after <= before * 0.8;
    check(moved, `default: ${token} moves ${task}'s ${pct} ${before} -> ${after} us, the page says it ${way}`);
    console.log(`  default: ${token}: ${task}'s ${pct} ${before} -> ${after} us (${way})`);
    await page.fill('[data-testid=scenario-text]', defaultText);
    await page.waitForFunction(([t, c, b]) => {
      const td = document.querySelectorAll(`[data-testid=worker-result] tbody tr[data-task=${t}] td[data-us]`)[c];
      return document.querySelector('.app[data-state=done]') && td && Number(td.dataset.us) === b;
    }, [task, col, before], { timeout: 60000 });
  }
  // The rest drags onto a four-CPU machine.
  await page.selectOption('[data-testid=preset]', 'smp4-hogs');
  await page.waitForSelector('[data-testid=cpu-3]');
  await waitDone(page);

  // 1. Drag the cyclictest template onto CPU 1: a pinned task appears,
  // as a chip on that CPU and as a line in the scenario.
  await drag(page, '[data-template=cyclictest]', '[data-testid=cpu-1]');
  await page.waitForSelector('[data-testid=cpu-1] [data-task=ct2]', { timeout: 5000 });
  check((await text(page)).includes('task ct2 kind=timer period=1ms slice=1ms cpus=1\n'), 'dropped task in the text');
  await waitDone(page);
  const ct2 = await row(page, 'ct2');
  check(ct2 && Number(ct2.samples) > 1000, `ct2 ran: ${JSON.stringify(ct2)}`);
  check(fragText(await page.evaluate(() => location.hash)).includes('cpus=1'), 'the fragment follows the drop');
  await shot(page, 'dropped');

  // 2. PREEMPT_SHORT off: the dropped cyclictest's percentiles move.
  const before = (await row(page, 'ct2')).lat;
  await page.click('input[data-feature=PREEMPT_SHORT]');
  await page.waitForFunction(() => document.querySelector('[data-testid=scenario-text]').value.includes('NO_PREEMPT_SHORT'));
  await waitDone(page);
  const after = (await row(page, 'ct2')).lat;
  check(JSON.stringify(before) !== JSON.stringify(after), `percentiles unchanged: ${before}`);
  console.log(`  PREEMPT_SHORT off: ct2 p50..max ${before} -> ${after} us`);

  // 3. A/B: pin this as A, turn PREEMPT_SHORT back on as B.
  await page.click('[data-testid=pin]');
  await page.click('input[data-feature=PREEMPT_SHORT]');
  await page.waitForFunction(() => !document.querySelector('[data-testid=scenario-text]').value.includes('NO_PREEMPT_SHORT'));
  await waitDone(page);
  await page.waitForFunction(() => !document.body.textContent.includes('Baseline still running'), null, { timeout: 30000 });
  const a = await row(page, 'ct2', 'A');
  const b = await row(page, 'ct2', 'B');
  const d = await page.$eval('[data-testid=worker-result] tr[data-side=delta][data-task=ct2]', (tr) => tr.textContent);
  check(JSON.stringify(a.lat) === JSON.stringify(after) && JSON.stringify(b.lat) === JSON.stringify(before), `A/B rows: ${a.lat} / ${b.lat}`);
  check(/[+-]\d+\.\d%/.test(d), `delta row: ${d}`);
  // B (PREEMPT_SHORT) has the lower p99: + and "better", as eevdf
  // compare signs it, and the table says so.
  const p99 = await page.$eval('[data-testid=worker-result] tr[data-side=delta][data-task=ct2]', (tr) => [tr.querySelectorAll('td')[5].textContent, tr.querySelectorAll('td')[5].className]);
  check(p99[0].startsWith('+') && p99[1] === 'better', `p99 change ${p99}`);
  check((await page.textContent('[data-testid=delta-convention]')).includes('+ is better'), 'the table states its sign convention');
  await shot(page, 'ab');
  check((await page.textContent('[data-testid=worker-result] caption')).includes('A = pinned baseline (NO_PREEMPT_SHORT), B = current (PREEMPT_SHORT)'),
    'the A/B caption names what differs');

  // 3a. A/B travels: the mail carries the pin as a `baseline` block and
  // its comparison table, byte for byte what `eevdf run -` prints for
  // it; the link reopens both sides; the mail pasted back pins A again.
  await page.click('[data-testid=copy-mail]');
  await page.waitForFunction(() => document.querySelector('[data-testid=copy-status]')?.textContent.includes('Mail block copied'));
  const abMail = await page.evaluate(() => navigator.clipboard.readText());
  check(abMail.includes('\nbaseline\nfeatures') && abMail.includes('A = baseline, B = scenario'), `A/B mail: ${abMail}`);
  const cliMail = execFileSync(cli, ['run', '-', '--format', 'mail', '--base', base], { input: abMail, encoding: 'utf8' });
  check(cliMail === abMail, `page mail != eevdf run - --format mail:\n${abMail}\n---\n${cliMail}`);
  const abText = await text(page);
  await page.click('[data-testid=copy-link]');
  await page.waitForFunction(() => document.querySelector('[data-testid=copy-status]')?.textContent.includes('Link copied'));
  const abLink = await page.evaluate(() => navigator.clipboard.readText());
  check(abLink === abMail.trimEnd().split('\n').at(-1), 'the copied link is the mail\'s');
  const { page: p3, problems: pr3 } = await openPage(context, abLink);
  all.push([p3, pr3]);
  await waitDone(p3);
  await p3.waitForFunction(() => !document.body.textContent.includes('Baseline still running'), null, { timeout: 30000 });
  check(await text(p3) === abText, 'the A/B link restores B');
  check(await p3.getAttribute('[data-testid=pin]', 'aria-pressed') === 'true', 'the A/B link pins A');
  check(JSON.stringify((await row(p3, 'ct2', 'A')).lat) === JSON.stringify(a.lat), 'the A/B link runs A');
  await p3.close();
  await page.click('[data-testid=pin]');
  await page.fill('[data-testid=scenario-text]', 'Numbers from the playground:\n\n' + abMail);
  await page.waitForFunction((w) => document.querySelector('[data-testid=scenario-text]').value === w, abText);
  check(await page.getAttribute('[data-testid=pin]', 'aria-pressed') === 'true', 'a pasted A/B mail pins A');
  await waitDone(page);
  await page.click('[data-testid=pin]');

  // 3b. The documented case (spec 13.6): a cyclictest with a shorter
  // slice than two rt-app tasks on one CPU keeps its p99 near the floor
  // only with PREEMPT_SHORT (engine 0.9: 113 us, as a delayed wakee
  // placed afresh can lose a pick; the 7.2.13 kernel's v2-rtapp row has
  // 64 to 68 us on four seeds and 187 on one).
  // From a preset without a flip, its hint and the preset's own Try
  // button get there in two clicks.
  const mine = await text(page);
  await page.selectOption('[data-testid=preset]', 'smp4-hogs');
  await page.click('[data-testid=try-preset] button');
  await page.waitForFunction(() => document.querySelector('[data-testid=preset]').value === 'preempt-short');
  await waitDone(page);
  const on = (await row(page, 'ct')).lat[2];
  check((await page.textContent('[data-testid=try-flip]')).includes("ct's p99 rises"), 'the preset says what its flip does');
  await page.click('[data-testid=try-flip] button');
  await page.waitForFunction(() => document.querySelector('[data-testid=scenario-text]').value.includes('NO_PREEMPT_SHORT'));
  await waitDone(page);
  const off = (await row(page, 'ct')).lat[2];
  check(Number(on) < 200 && Number(off) > 1000, `preempt-short p99 ${on} -> ${off}`);
  console.log(`  preempt-short preset: ct p99 ${on} -> ${off} us without PREEMPT_SHORT`);
  await page.fill('[data-testid=scenario-text]', mine);
  await waitDone(page);

  // 4. Copy the link, open it in a new page: same scenario; the p99 the
  // page shows equals the CLI's for the same link.
  await page.click('[data-testid=copy-link]');
  await page.waitForSelector('[data-testid=copy-status]');
  const link = await page.evaluate(() => navigator.clipboard.readText());
  check(link.startsWith(base) && link.includes('#'), `copied link ${link}`);
  const { page: p2, problems: pr2 } = await openPage(context, link);
  all.push([p2, pr2]);
  await waitDone(p2);
  check(await text(p2) === await text(page), 'the link restores the scenario');
  const shown = (await row(p2, 'ct2')).lat[2];
  if (cli) {
    const json = JSON.parse(execFileSync(cli, ['run', link, '--format', 'json'], { encoding: 'utf8' }));
    const want = json.by_name.ct2.latency_us.p99.toFixed(3);
    check(shown === want, `page p99 ${shown} != CLI ${want}`);
    console.log(`  link p99 ${shown} us = CLI (${cli})`);
  } else {
    throw new Error('no eevdf binary in target/; run cargo build first');
  }
  await p2.close();

  // 5. Copy for email: 72 columns but the link; pasting it back quoted
  // restores the scenario.
  await page.click('[data-testid=copy-mail]');
  await page.waitForFunction(() => document.querySelector('[data-testid=copy-status]')?.textContent.includes('Mail block copied'));
  const mail = await page.evaluate(() => navigator.clipboard.readText());
  const lines = mail.trimEnd().split('\n');
  check(lines.slice(0, -1).every((l) => l.length <= 72), 'mail lines within 72 columns');
  check(lines.at(-1).startsWith(base), `mail ends with the link: ${lines.at(-1)}`);
  const want = await text(page);
  await page.fill('[data-testid=scenario-text]', 'Here is my setup:\n\n' + mail.split('\n').map((l) => `> ${l}`).join('\n'));
  await page.waitForFunction((w) => document.querySelector('[data-testid=scenario-text]').value === w, want);
  // The raw block, as copied (scenario, table, link), pastes back too.
  await page.fill('[data-testid=scenario-text]', '');
  await page.fill('[data-testid=scenario-text]', mail);
  await page.waitForFunction((w) => document.querySelector('[data-testid=scenario-text]').value === w, want);

  // 5b. Two links opened one after the other in this tab (only the
  // fragment changes, no reload): each opens its scenario; one that
  // cannot be decoded is reported, and the scenario on the page is kept.
  const before5b = await text(page);
  const editorIs = (w) => page.waitForFunction((v) => document.querySelector('[data-testid=scenario-text]').value === v, w);
  for (const name of ['preempt-short', 'fidelity-ct-1hog']) {
    const link = execFileSync(cli, ['url', name, '--base', base]).toString().trim();
    await page.evaluate((u) => { location.href = u; }, link);
    await editorIs(execFileSync(cli, ['check', name]).toString());
    await waitDone(page);
  }
  const kept = await text(page);
  await page.evaluate((u) => { location.href = u; }, `${base}#z1.AAAA`);
  const le = await page.waitForSelector('[data-testid=link-error]');
  check((await le.textContent()).includes('The scenario on the page is kept'), 'a bad second link is reported');
  check((await text(page)) === kept, 'a bad second link keeps the scenario');
  // Back to the scenario of the steps above, by its own link.
  const back = execFileSync(cli, ['url', '-', '--base', base], { input: before5b }).toString().trim();
  await page.evaluate((u) => { location.href = u; }, back);
  await page.waitForSelector('[data-testid=link-error]', { state: 'detached' });
  await editorIs(before5b);
  await waitDone(page);

  // 5c. A typo, or a link that decodes to an invalid scenario, keeps the
  // panes where they were (the last scenario that parsed, inert), says
  // the run did not happen and which line to fix, and offers the last
  // scenario back.
  // Relative to the layout: a notice above it (a copy's status) may come
  // and go meanwhile.
  const box = async (sel) => page.$eval(sel, (e) => {
    const r = e.getBoundingClientRect();
    return [r.top - document.querySelector('main.layout').getBoundingClientRect().top, r.height];
  });
  const panes = async () => [await box('[data-testid=machine-pane]'), await box('[data-testid=features-pane]')];
  const good = await panes();
  const chips = await page.$$eval('[data-testid=machine-pane] .chip', (cs) => cs.length);
  await page.fill('[data-testid=scenario-text]', before5b.replace(/\nend\n?$/, '\ntask x kind=nope\nend\n'));
  const nr = await page.waitForSelector('[data-testid=not-run]');
  const nrText = await nr.textContent();
  check(/^Not run: fix line \d+ of the scenario\. The results below are the last run's\.$/.test(nrText), `not run: ${nrText}`);
  check(JSON.stringify(await panes()) === JSON.stringify(good), `the panes moved on a typo: ${JSON.stringify(good)} -> ${JSON.stringify(await panes())}`);
  check(await page.$eval('[data-testid=machine-pane]', (e) => e.inert && e.classList.contains('stale')), 'the stale machine pane is inert');
  check(await page.$$eval('[data-testid=machine-pane] .chip', (cs) => cs.length) === chips, 'the machine keeps its chips');
  check((await page.$$('[data-testid=worker-pending]')).length === 0, 'no "Simulating" for a scenario that cannot run');
  await shot(page, 'typo');
  await page.click('[data-testid=restore-last]');
  await editorIs(before5b);
  await waitDone(page);
  // The plain v1 form of the same scenario plus a line that cannot run.
  const plain = before5b.split('\n')
    .filter((x) => x && !x.startsWith('#') && x !== 'end' && !x.startsWith('eevdf-scenario'))
    .map((x) => x.replace(/ /g, '+'));
  const bad = `${base}#v1;${[...plain, 'task+x+kind=nope'].join(';')}`;
  await page.evaluate((u) => { location.href = u; }, bad);
  await page.waitForSelector('[data-testid=not-run]');
  check(JSON.stringify(await panes()) === JSON.stringify(good), 'the panes moved on an invalid link');
  await page.click('[data-testid=restore-last]');
  await editorIs(before5b);
  await waitDone(page);

  // 5d. Columns sort: worst p99 first, then best first, then the
  // scenario's order; min and avg are shown as cyclictest prints them.
  const order = async () => (await resultRows(page)).map((r) => r.task);
  const scenarioOrder = await order();
  const p99s = async () => (await resultRows(page)).filter((r) => r.samples !== '0').map((r) => Number(r.lat[2]));
  await page.click('button[data-sort=p99]');
  const down = await p99s();
  check(down.every((v, i) => i === 0 || down[i - 1] >= v), `p99 descending ${down}`);
  check(await page.$eval('button[data-sort=p99]', (b) => b.parentElement.getAttribute('aria-sort')) === 'descending', 'aria-sort');
  await page.click('button[data-sort=p99]');
  const up = await p99s();
  check(up.every((v, i) => i === 0 || up[i - 1] <= v), `p99 ascending ${up}`);
  await page.click('button[data-sort=p99]');
  check(JSON.stringify(await order()) === JSON.stringify(scenarioOrder), 'a third click restores the order');
  const minAvg = await page.$$eval('[data-testid=worker-result] tbody tr td[data-min]', (tds) => tds.map((t) => [Number(t.dataset.min), Number(t.nextElementSibling.dataset.avg)]));
  check(minAvg.length > 0 && minAvg.every(([mn, av]) => mn <= av || mn === 0), `min <= avg: ${JSON.stringify(minAvg)}`);

  // 6. Keyboard: Enter on a template, Enter on CPU 2; the chip's editor;
  // a re-pin; Delete on a chip.
  await page.focus('[data-template=rtapp]');
  await page.keyboard.press('Enter');
  await page.waitForSelector('[data-testid=machine-zone].placing');
  await page.focus('[data-testid=cpu-2]');
  await page.keyboard.press('Enter');
  await page.waitForSelector('[data-testid=cpu-2] [data-task=rt]');
  check((await text(page)).includes('task rt kind=periodic run=3ms sleep=7ms cpus=2'), 'keyboard placement');
  // Enter on a chip opens its editor, a modal dialog that takes and keeps
  // the focus; Escape closes it.
  const openByKey = async (chip, key) => {
    await page.focus(chip);
    await page.keyboard.press(key);
    await page.waitForSelector('[data-testid=task-editor]');
  };
  await openByKey('[data-testid=cpu-2] [data-task=rt]', 'Enter');
  const inEditor = () => page.evaluate(() => !!document.activeElement?.closest('[data-testid=task-editor]'));
  check(await inEditor(), 'focus moves into the editor');
  const controls = await page.$$eval('[data-testid=task-editor] input, [data-testid=task-editor] button', (es) => es.length);
  for (let k = 0; k < controls + 2; k++) await page.keyboard.press('Tab');
  check(await inEditor(), 'Tab stays in the editor');
  for (let k = 0; k < 3; k++) await page.keyboard.press('Shift+Tab');
  check(await inEditor(), 'Shift+Tab stays in the editor');
  await page.keyboard.press('Escape');
  await page.waitForSelector('[data-testid=task-editor]', { state: 'detached' });
  const focused = () => page.evaluate(() => {
    const a = document.activeElement;
    return a?.dataset?.task ? `chip ${a.dataset.task}` : (a?.dataset?.testid ?? a?.tagName);
  });
  check(await focused() === 'chip rt', `closing the editor returns the focus to its chip: ${await focused()}`);
  // Re-pin by keyboard: Space on the chip, Move…, Enter on CPU 3.
  await openByKey('[data-testid=cpu-2] [data-task=rt]', ' ');
  await page.focus('[data-testid=task-editor] button:text("Move…")');
  await page.keyboard.press('Enter');
  await page.waitForSelector('[data-testid=machine-zone].placing');
  await page.focus('[data-testid=cpu-3]');
  await page.keyboard.press('Enter');
  await page.waitForSelector('[data-testid=cpu-3] [data-task=rt]');
  check((await text(page)).includes('task rt kind=periodic run=3ms sleep=7ms cpus=3'), `keyboard re-pin: ${await text(page)}`);
  await page.focus('[data-testid=cpu-3] [data-task=rt]');
  await page.keyboard.press('Delete');
  await page.waitForFunction(() => !document.querySelector('[data-testid=scenario-text]').value.includes('task rt '));
  // Deleting the first task leaves the other tasks' colours alone.
  const colours = () => page.$$eval('button.chip', (es) => es.filter((e) => e.dataset.task !== 'ct').map((e) => `${e.dataset.task}:${e.className}`).sort().join(' '));
  const coloursBefore = await colours();
  const full = await text(page);
  check(/^task ct .*\n(task .*\n)+/m.test(full), `ct is not the first of several tasks: ${full}`);
  await page.fill('[data-testid=scenario-text]', full.replace(/^task ct .*\n/m, ''));
  await page.waitForSelector('button.chip[data-task=ct]', { state: 'detached' });
  check((await colours()) === coloursBefore, `colours moved: ${coloursBefore} -> ${await colours()}`);
  await page.fill('[data-testid=scenario-text]', full);
  await page.waitForSelector('button.chip[data-task=ct]');

  // 7. The task editor: a bad value is explained, a good one saved;
  // dragging the chip to the machine unpins it.
  await page.click('[data-testid=cpu-1] [data-task=ct2]');
  await page.waitForSelector('[data-testid=task-editor]');
  // The fields, their order, placeholders and help come from the
  // scenario's task-key table.
  const fields = await page.$$eval('[data-testid=task-editor] input[type=text]',
    (es) => es.map((e) => `${e.name}:${e.placeholder}:${e.closest('label').title.split(' (')[0]}`));
  check(fields[0] === 'name::' && fields[2] === 'period:required:cyclictest\'s interval: an absolute timer'
        && fields.includes('slice:the base slice:A custom slice, as sched_setattr\'s sched_runtime sets it.'),
    `editor fields from the table: ${fields.join(' | ')}`);
  await shot(page, 'editor');
  await page.fill('[data-testid=task-editor] input[name=slice]', '3');
  await page.click('[data-testid=task-editor] button[type=submit]');
  const ee = await page.waitForSelector('[data-testid=editor-error]');
  check((await ee.textContent()).includes('unit'), 'editor error hints at units');
  // A slice past the kernel's clamp is saved with a note of what runs.
  await page.fill('[data-testid=task-editor] input[name=slice]', '10us');
  await page.click('[data-testid=task-editor] button[type=submit]');
  const sn = await (await page.waitForSelector('[data-testid=slice-note]')).textContent();
  check(sn.includes('task ct2: slice=10us') && sn.includes('it runs with 100us'), `slice note: ${sn}`);
  await page.click('[data-testid=cpu-1] [data-task=ct2]');
  await page.waitForSelector('[data-testid=task-editor]');
  await page.fill('[data-testid=task-editor] input[name=slice]', '2ms');
  await page.click('[data-testid=task-editor] button[type=submit]');
  await page.waitForFunction(() => document.querySelector('[data-testid=scenario-text]').value.includes('task ct2 kind=timer period=1ms slice=2ms cpus=1'));
  check(await focused() === 'chip ct2', `saving returns the focus to the chip: ${await focused()}`);
  // Deleting from the editor sends the focus to CPU 0, not to the page.
  const beforeDelete = await text(page);
  await page.click('[data-testid=cpu-1] [data-task=ct2]');
  await page.click('[data-testid=delete-task]');
  await page.waitForSelector('button.chip[data-task=ct2]', { state: 'detached' });
  check(await focused() === 'cpu-0', `after a delete the focus is on CPU 0: ${await focused()}`);
  await page.fill('[data-testid=scenario-text]', beforeDelete);
  await page.waitForSelector('[data-testid=cpu-1] [data-task=ct2]');
  await drag(page, '[data-testid=cpu-1] [data-task=ct2]', '[data-testid=machine-zone] > .zone-head');
  await page.waitForFunction(() => document.querySelector('[data-testid=scenario-text]').value.includes('task ct2 kind=timer period=1ms slice=2ms\n'));

  // 8. A long run streams: numbers while it runs, then done.
  await page.selectOption('[data-testid=machine]', 'laptop-4c8t');
  await page.fill('[data-testid=scenario-text]', (await text(page)).replace(/duration \S+/, 'duration 120s'));
  await page.waitForSelector('.app[data-state=running] [data-testid=progress]', { timeout: 5000 });
  const p0 = Number(await page.$eval('[data-testid=progress]', (e) => e.value));
  await page.waitForFunction((v) => Number(document.querySelector('[data-testid=progress]').value) > v, p0, { timeout: 5000 });
  check(await page.$eval('[data-testid=timeline]', (c) => c.width > 0), 'timeline drawn');
  await shot(page, 'streaming');
  // Input stays responsive while the worker runs.
  const t0 = Date.now();
  await page.click('[data-testid=help]');
  await page.waitForSelector('[data-testid=help-overlay]');
  const helpMs = Date.now() - t0;
  check(helpMs < 1000, `help took ${helpMs} ms during a run`);
  await shot(page, 'help');
  await page.keyboard.press('Escape');
  await page.waitForSelector('[data-testid=help-overlay]', { state: 'detached' });
  // A long run says how long it has left, and stops on request: the
  // last numbers stay, nothing advances, and it can run again.
  await page.fill('[data-testid=scenario-text]', (await text(page)).replace(/duration \S+/, 'duration 900s'));
  await page.waitForSelector('.app[data-state=running] [data-testid=stop]', { timeout: 5000 });
  await page.waitForFunction(() => /about \d+ s left|under a second left/.test(document.querySelector('[data-testid=eta]')?.textContent ?? ''));
  await page.click('[data-testid=stop]');
  await page.waitForSelector('.app[data-state=stopped]');
  const stoppedAt = Number(await page.$eval('[data-testid=progress]', (e) => e.value));
  await page.waitForTimeout(600);
  check(Number(await page.$eval('[data-testid=progress]', (e) => e.value)) === stoppedAt, 'a stopped run advanced');
  const eta = await page.textContent('[data-testid=eta]');
  check(eta.startsWith('Stopped at ') && (await page.$$('[data-testid=worker-result] tbody tr')).length > 0, `stopped: ${eta}`);
  await page.click('[data-testid=resume]');
  await page.waitForSelector('.app[data-state=running] [data-testid=stop]');

  // 8b. A real debugfs line: the tokens the engine keeps without
  // modelling are named, not added silently.
  await page.fill('[data-testid=debugfs]', 'PLACE_LAG RUN_TO_PARITY TTWU_QUEUE NO_LB_MIN UTIL_EST');
  await page.click('form.debugfs button[type=submit]');
  const dn = await (await page.waitForSelector('[data-testid=debugfs-note]')).textContent();
  check(dn.includes('accepted, not modelled') && dn.includes('TTWU_QUEUE NO_LB_MIN UTIL_EST'), `debugfs note: ${dn}`);

  // 8c. Twin presets share one text: the menu keeps the one picked, and
  // both threads' numbers are shown (issue 18).
  await page.selectOption('[data-testid=preset]', 'v2-ct-rtapp');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=preset-source]').length === 2);
  await page.waitForTimeout(300);
  const twin = await page.evaluate(() => ({
    value: document.querySelector('[data-testid=preset]').value,
    titles: [...document.querySelectorAll('[data-testid=preset-source] summary')].map((s) => s.textContent),
  }));
  check(twin.value === 'v2-ct-rtapp' && twin.titles[0].startsWith('v2 0/6') && twin.titles[1].startsWith('0/8 series'),
    `twin presets: ${JSON.stringify(twin)}`);
  await page.click('[data-testid=preset-source] summary');
  await shot(page, 'twins');

  // 9. Dark theme and phone width.
  await page.click('[data-testid=theme]');
  check(await page.evaluate(() => document.documentElement.dataset.theme) === 'dark', 'dark theme');
  await page.selectOption('[data-testid=preset]', 't1-clear-buddies');
  await page.waitForSelector('[data-testid=cpu-7-running]', { timeout: 10000 });
  // The hackbench chip counts threads, as the results table does.
  await page.waitForFunction(() => [...document.querySelectorAll('.results .chip-dot')].some((e) => e.textContent.startsWith('hb ×')));
  const times = (sel) => page.$$eval(sel, (es) => es.map((e) => e.textContent.match(/×(\d+)/)?.[1]));
  const chipN = await times('button.chip[data-task=hb]');
  const rowN = (await times('.results .chip-dot')).filter(Boolean);
  check(chipN.length === 1 && chipN[0] !== '1' && rowN.includes(chipN[0]), `hb chip ×${chipN} vs table ×${rowN}`);
  await page.waitForTimeout(1500);
  await shot(page, 'dark');
  await page.click('[data-testid=theme]');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.selectOption('[data-testid=preset]', 'preempt-short');
  await waitDone(page);
  const heard = await page.textContent('[data-testid=announce]');
  check(/^Results ready: 10\.0 s simulated in /.test(heard), `finished run announced: ${heard}`);
  check(await page.getAttribute('[data-testid=announce]', 'aria-live') === 'polite', 'the announcement is polite');
  // Phone (issue 19): the switches that matter sit on the results table,
  // which scrolls inside its box; 44 px targets, 11 px text.
  const phone = await page.evaluate(() => {
    const sw = [...document.querySelectorAll('[data-testid=quick-switches] label')].map((l) => l.getBoundingClientRect());
    const head = document.querySelector('[data-testid=worker-result] thead').getBoundingClientRect();
    const box = document.querySelector('[data-testid=results-scroll]');
    const fonts = [...document.querySelectorAll('[data-testid=worker-result] td, [data-testid=worker-result] th, [data-testid=quick-switches] code')]
      .map((e) => parseFloat(getComputedStyle(e).fontSize));
    return {
      n: sw.length,
      span: Math.max(head.bottom, ...sw.map((b) => b.bottom)) - Math.min(head.top, ...sw.map((b) => b.top)),
      small: sw.filter((b) => b.width < 44 || b.height < 44).length,
      pageWidth: document.documentElement.scrollWidth,
      boxRight: box.getBoundingClientRect().right,
      minFont: Math.min(...fonts),
    };
  });
  check(phone.n === 3 && phone.span <= 844, `phone: ${phone.n} quick switches and the table's head span ${phone.span} px`);
  check(phone.small === 0, `phone: ${phone.small} quick switches under 44 px`);
  check(phone.pageWidth <= 390 && phone.boxRight <= 390, `phone: page ${phone.pageWidth} px wide, table box ends at ${phone.boxRight}`);
  check(phone.minFont >= 11, `phone: table text at ${phone.minFont} px`);
  await page.click('input[data-quick=PREEMPT_SHORT]');
  await page.waitForFunction(() => document.querySelector('[data-testid=scenario-text]').value.includes('NO_PREEMPT_SHORT'));
  check(!(await page.isChecked('input[data-feature=PREEMPT_SHORT]')), 'the quick switch and the features pane agree');
  await waitDone(page);
  await page.click('input[data-quick=PREEMPT_SHORT]');
  await page.waitForFunction(() => !document.querySelector('[data-testid=scenario-text]').value.includes('NO_PREEMPT_SHORT'));
  await waitDone(page);
  // Back to the preset's text: the selector names it again.
  check(await page.$eval('[data-testid=preset]', (e) => e.value) === 'preempt-short', `preset selector: ${await page.$eval('[data-testid=preset]', (e) => e.value)}`);
  await shot(page, 'phone');
  // Every control of the phone's main states is a 44 px target and every
  // label 11 px or more, the teaching picture's as rendered included.
  const phoneCheck = async (state) => {
    const m = await phoneMisses(page);
    check(m.small.length === 0, `phone ${state}: controls under 44 px: ${m.small.join('; ')}`);
    check(m.tiny.length === 0, `phone ${state}: text under 11 px: ${m.tiny.join('; ')}`);
  };
  await phoneCheck('results');
  await page.click('[data-testid=teach]');
  await page.selectOption('[data-testid=tour]', 'lag');
  await page.click('[data-testid=tour-next]');
  await page.waitForSelector('svg.vaxis g.ent');
  await page.click('[data-testid=tour-caption] a.term');
  await page.waitForFunction(() => document.querySelector('[data-testid=glossary]')?.open);
  await phoneCheck('teaching');
  await page.locator('[data-testid=teaching]').screenshot({ path: 'target/e2e/phone-teaching.png' });
  await page.click('[data-testid=teach]');
  await page.click('[data-testid=sweep]');
  await page.waitForSelector('[data-testid=sweep-pane]');
  await phoneCheck('sweep');
  await page.click('[data-testid=sweep]');

  for (const [pg, pr] of all) {
    if (!pg.isClosed()) pr.push(...(await cspViolations(pg)).map((v) => `csp: ${v}`));
  }
  const problems2 = all.flatMap(([, pr]) => pr);
  if (problems2.length) {
    failed = true;
    console.error(`FAIL\n  ${problems2.join('\n  ')}`);
  } else {
    console.log('ok playground: drag, toggle, A/B, link, mail, two links in a tab, keyboard, editor, streaming, help, themes');
  }
} catch (e) {
  // Leave a picture of the moment it failed.
  for (const [pg] of all) if (!pg.isClosed()) await pg.screenshot({ path: 'target/e2e/failure.png', fullPage: true });
  throw e;
} finally {
  await context.close();
}
process.exit(failed ? 1 : 0);
