// Teaching mode end to end (issue "teaching" item 5): every guided tour
// plays to its end; stepping shows the engine's pick reasons and going
// back restores the picture; clicking a task's worst latency jumps to
// the moment it happened, a click on the CDF to a sample that slow, a
// click on the timeline to that CPU at that moment. Screenshot:
// target/e2e/teaching.png.
import { readFileSync, writeFileSync } from 'node:fs';
import { launch, openPage, cspViolations, check, waitDone } from './lib.mjs';

const base = process.env.APP_URL ?? 'http://127.0.0.1:8080/';
const context = await launch();
let failed = false;
const nowText = (page) => page.textContent('[data-testid=teach-now]');
try {
  const { page, problems } = await openPage(context, base);
  page.on('crash', () => problems.push('page crashed'));
  await waitDone(page);

  // Open teaching mode on the page's scenario; step by pick and back.
  await page.click('[data-testid=teach]');
  await page.waitForSelector('[data-testid=teach-now]');
  await page.click('[data-testid=teach-next-pick]');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=pick-reasons] li').length > 0);
  // The next picks (a switch to idle has no reasons: step past it).
  let reasons = '';
  let t1 = '';
  for (let i = 0; i < 5 && !reasons.trim(); i++) {
    t1 = await nowText(page);
    await page.click('[data-testid=teach-next-pick]');
    await page.waitForFunction((x) => document.querySelector('[data-testid=teach-now]').textContent !== x, t1);
    reasons = await page.textContent('[data-testid=pick-reasons]');
  }
  check(/eligible|only queued|protected|next buddy/.test(reasons), `pick reasons: ${reasons}`);
  check(await page.$$eval('svg.vaxis g.ent', (g) => g.length) >= 1, 'entities drawn on the virtual-time axis');
  await page.click('[data-testid=teach-back]');
  await page.waitForFunction((t) => document.querySelector('[data-testid=teach-now]').textContent === t, t1);

  // Every tour plays to its end without an error.
  const tours = await page.$$eval('[data-testid=tour] option', (os) => os.map((o) => o.value).filter(Boolean));
  check(tours.length >= 8, `tours: ${tours}`);
  const captions = {};
  const CLAIMS = [
    ['does not preempt', 'does not preempt'],
    ['whose deadline is earlier', 'whose deadline is earlier'],
    ['preempts under PREEMPT_SHORT', 'preempts under PREEMPT_SHORT'],
    ['but the running task is protected', 'current and protected'],
  ];
  let claimed = 0;
  for (const id of tours) {
    captions[id] = [];
    await page.selectOption('[data-testid=tour]', id);
    await page.waitForSelector('[data-testid=tour-next]');
    for (let i = 0; i < 10 && await page.$('[data-testid=tour-next]'); i++) {
      const before = await page.textContent('[data-testid=tour-caption]');
      await page.click('[data-testid=tour-next]');
      await page.waitForFunction((b) => document.querySelector('[data-testid=tour-caption]').textContent !== b, before, { timeout: 20000 });
      const err = await page.$('[data-testid=teach-error]');
      check(!err, `tour ${id}: ${err && await err.textContent()}`);
      const caption = await page.textContent('[data-testid=tour-caption] p');
      captions[id].push(caption);
      // A caption's claim about the wakeup agrees with the verdict shown
      // (the engine's words; the native tour test holds the same pairs).
      for (const [claim, verdict] of CLAIMS) {
        if (!caption.includes(claim)) continue;
        await page.waitForFunction((v) => document.querySelector('[data-testid=wakeup-reason]')?.textContent.includes(v), verdict, { timeout: 20000 })
          .catch(() => {});
        const shown = await page.textContent('[data-testid=wakeup-reason]').catch(() => '');
        check(shown.includes(verdict), `tour ${id} step ${i + 1} says "${claim}", the page's verdict: ${shown}`);
        claimed++;
      }
      check(page.url().endsWith(`&tour=${id}&step=${i + 1}`), `the link names the step: ${page.url()}`);
      if (id === 'preempt-short' && i === 1) {
        // The second step is a shorter-slice preemption, in the engine's words.
        await page.waitForFunction(() => document.querySelector('[data-testid=wakeup-reason]')?.textContent.includes('shorter slice'), null, { timeout: 20000 });
        await page.screenshot({ path: 'target/e2e/teaching.png', fullPage: true });
      }
    }
    await page.waitForSelector('[data-testid=tour-done]');
    check(captions[id].length >= 5 && captions[id].length <= 10, `tour ${id} has ${captions[id].length} steps (5-10)`);
    console.log(`  tour ${id}: played, ${captions[id].length} steps`);
  }
  check(claimed >= 6, `only ${claimed} captions make a claim the page's verdict is checked against`);
  console.log(`  ${claimed} caption claims agree with the verdicts shown`);
  // A tour shows its own scenario in the editor (and so the machine and
  // results); "My scenario" brings the user's back.
  const editor = () => page.$eval('[data-testid=scenario-text]', (e) => e.value);
  check((await editor()).includes('task TA '), `the last tour's scenario is in the editor: ${(await editor()).slice(0, 80)}`);
  await page.click('[data-testid=teach-restart]');
  await page.waitForFunction(() => document.querySelector('[data-testid=scenario-text]').value.includes('task ct kind=timer period=1ms slice=500us'));
  check(!(await editor()).includes('task TA '), 'My scenario restores the user\'s own');

  // A tail sample: the worst wakeup of ct from the results table, on
  // four CPUs (the timeline click below picks CPU 1's lane).
  await page.click('[data-testid=teach]'); // close
  await page.selectOption('[data-testid=preset]', 'smp4-hogs');
  await page.waitForSelector('[data-testid=cpu-3]');
  await waitDone(page);
  await page.click('[data-testid=worker-result] tr[data-task=ct] [data-testid=jump]');
  await page.waitForSelector('[data-testid=teach-note]', { timeout: 20000 });
  const note = await page.textContent('[data-testid=teach-note]');
  check(note.includes('worst wakeup'), `jump note: ${note}`);
  const ct = await page.$$eval('svg.vaxis g.ent', (gs) => gs.map((g) => g.dataset.entity));
  // A worst wakeup onto an idle CPU waited in the wakeup path (its costs)
  // and is enqueued as it is picked: then the note says so instead.
  const inWakeup = note.includes('on its way there');
  check(inWakeup || ct.some((n) => n.startsWith('ct.')), `ct on the axis at its worst wakeup: ${ct} (${note})`);
  console.log(`  worst wakeup: ${note}`);
  await page.screenshot({ path: 'target/e2e/teaching-jump.png', fullPage: true });

  // A sample clicked on the latency CDF: the end of ct's curve.
  await page.click('[data-testid=teach]'); // close
  const probe = await page.getAttribute('[data-testid=cdf]', 'data-probe');
  const [px, py] = probe.split(',').map(Number);
  await page.click('[data-testid=cdf]', { position: { x: px, y: py } });
  await page.waitForFunction(() => document.querySelector('[data-testid=teach-note]')?.textContent.includes('first wakeup this slow'), null, { timeout: 20000 });
  console.log(`  CDF click: ${await page.textContent('[data-testid=teach-note]')}`);

  // A moment clicked on the timeline (CPU 1's lane, half way): teaching
  // mode on that CPU at that time.
  await page.click('[data-testid=teach]'); // close
  const [ws, we] = (await page.getAttribute('[data-testid=timeline]', 'data-window')).split(',').map(Number);
  const cw = await page.$eval('[data-testid=timeline]', (c) => c.clientWidth);
  const x = 40 + Math.round((cw - 44) / 2);
  await page.click('[data-testid=timeline]', { position: { x, y: 27 } });
  const wantMs = (ws + (x - 40) / (cw - 44) * (we - ws)) / 1e6;
  await page.waitForFunction(() => {
    const m = /t = ([\d.]+) ms .* CPU1 runs/.exec(document.querySelector('[data-testid=teach-now]')?.textContent ?? '');
    return m && Number(m[1]) > 1;
  }, null, { timeout: 20000 });
  const at = await nowText(page);
  check(Math.abs(Number(/t = ([\d.]+) ms/.exec(at)[1]) - wantMs) < 0.002, `timeline click at ${wantMs} ms: ${at}`);
  console.log(`  timeline click: ${at}`);

  // A teacher's link to step 2 of a tour opens teaching mode there, on
  // a fresh load and in an open tab (hashchange), and Next goes on.
  await page.click('[data-testid=teach]'); // close
  const scenarioLink = page.url().split('&')[0];
  check(!page.url().includes('&tour='), `a closed tour leaves the link: ${page.url()}`);
  await page.goto(`${scenarioLink}&tour=preempt-short&step=2`);
  await page.reload();
  await page.waitForFunction((c) => document.querySelector('[data-testid=tour-caption] p')?.textContent === c,
    captions['preempt-short'][1], { timeout: 20000 });
  await page.waitForFunction(() => document.querySelector('[data-testid=wakeup-reason]')?.textContent.includes('shorter slice'), null, { timeout: 20000 });
  const n = captions['preempt-short'].length;
  check(await page.textContent('[data-testid=tour-next]') === `Next ▶ (3/${n})`, 'the link opens after step 2');
  check(await page.$eval('[data-testid=tour]', (s) => s.value) === 'preempt-short', 'the tour is selected');
  await page.click('[data-testid=tour-next]');
  await page.waitForFunction((c) => document.querySelector('[data-testid=tour-caption] p')?.textContent === c,
    captions['preempt-short'][2], { timeout: 20000 });
  check(page.url().endsWith('&tour=preempt-short&step=3'), `the link follows: ${page.url()}`);
  await page.goto(`${scenarioLink}&tour=weights&step=1`);
  await page.waitForFunction((c) => document.querySelector('[data-testid=tour-caption] p')?.textContent === c,
    captions.weights[0], { timeout: 20000 });
  check(await page.$eval('[data-testid=tour]', (s) => s.value) === 'weights', 'a second link in the tab opens its tour');
  console.log('  tour links: step 2 of preempt-short (fresh load), step 1 of weights (same tab)');

  // The caption's words link into the glossary, which opens at the word
  // without touching the share link.
  const before = page.url();
  const terms = await page.$$eval('[data-testid=tour-caption] a.term', (as) => as.map((a) => a.dataset.term));
  check(terms.length >= 1, 'the caption links into the glossary');
  await page.click(`[data-testid=tour-caption] a.term[data-term=${terms[0]}]`);
  await page.waitForFunction((t) => document.activeElement?.id === `glossary-${t}`, terms[0]);
  check(await page.$eval('[data-testid=glossary]', (d) => d.open), 'the glossary opens');
  check(page.url() === before, `the link is unchanged: ${page.url()}`);
  const entry = await page.$eval(`#glossary-${terms[0]} + dd`, (d) => d.textContent);
  console.log(`  glossary: ${terms.join(', ')}; ${terms[0]}: ${entry.slice(0, 60)}...`);

  // The animation: Play steps pick by pick, Pause stops; entities glide
  // unless the user asks for reduced motion.
  await page.selectOption('[data-testid=teach-speed]', '8');
  const seen = new Set([await nowText(page)]);
  const glider = await page.$eval('svg.vaxis g.ent', (g) => { g.firstElementChild.__glider = true; return g.dataset.entity; });
  await page.click('[data-testid=teach-play]');
  for (let i = 0; i < 60 && seen.size < 4; i++) {
    seen.add(await nowText(page));
    await page.waitForTimeout(100);
  }
  check(seen.size >= 4, `play advanced through ${seen.size - 1} picks`);
  // The same element moves (keyed by entity), so it can glide.
  check(await page.$eval(`svg.vaxis g.ent[data-entity="${glider}"]`, (g) => g.firstElementChild.__glider === true),
    `${glider}'s element was replaced, not moved`);
  await page.click('[data-testid=teach-play]');
  check(await page.getAttribute('[data-testid=teach-play]', 'aria-pressed') === 'false', 'paused');
  await page.waitForTimeout(400);
  const paused = await nowText(page);
  await page.waitForTimeout(700);
  check(await nowText(page) === paused, 'Pause stops the animation');
  const glide = () => page.$eval('svg.vaxis g.ent rect', (r) => getComputedStyle(r).transitionDuration);
  check((await glide()).startsWith('0.35s'), `entities glide: ${await glide()}`);
  await page.emulateMedia({ reducedMotion: 'reduce' });
  check((await glide()).split(',').every((d) => d.trim() === '0s'), `reduced motion steps: ${await glide()}`);
  await page.emulateMedia({ reducedMotion: null });
  console.log(`  animation: ${seen.size - 1} picks played at 8/s, paused at ${paused.slice(0, 24)}...`);

  // The picture for slides: SVG and PNG, captioned with the tour step
  // and the engine version.
  const [svgDl] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=teach-export-svg]')]);
  const svg = readFileSync(await svgDl.path(), 'utf8');
  check(svgDl.suggestedFilename() === 'eevdf-teaching.svg', `svg name ${svgDl.suggestedFilename()}`);
  check(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'), `a standalone SVG: ${svg.slice(0, 80)}`);
  const caption = /<text[^>]*data-caption="1">([^<]*)<\/text>/.exec(svg)?.[1] ?? '';
  check(/^eevdf-playground, engine \d+\.\d+ · tour Weights and shares, step 1 of \d+ · t = [\d.]+ ms, CPU0$/.test(caption), `caption: ${caption}`);
  const entities = await page.$$eval('svg.vaxis g.ent', (g) => g.length);
  check((svg.match(/<rect /g) ?? []).length >= entities, 'every entity bar is in the file');
  check(!svg.includes('class='), 'paint is inlined, not left to the page\'s CSS');
  const [pngDl] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid=teach-export-png]')]);
  const png = readFileSync(await pngDl.path());
  check(png.subarray(1, 4).toString() === 'PNG' && png.length > 2000, `a PNG of ${png.length} bytes`);
  writeFileSync('target/e2e/teaching-export.svg', svg);
  writeFileSync('target/e2e/teaching-export.png', png);
  console.log(`  export: SVG (${svg.length} bytes, "${caption}"), PNG (${png.length} bytes)`);

  problems.push(...(await cspViolations(page)).map((v) => `csp: ${v}`));
  if (problems.length) {
    failed = true;
    console.error(`FAIL\n  ${problems.join('\n  ')}`);
  } else {
    console.log(`ok teaching: ${tours.length} tours, stepping, back, jump to the worst wakeup`);
  }
} finally {
  await context.close();
}
process.exit(failed ? 1 : 0);
