// Accessibility end to end (issue "teaching" item 5): axe-core finds no
// serious or critical violation in the page's main states: the default
// run, an A/B comparison, teaching mode, the dark theme and a phone.
import { launch, openPage, cspViolations, check, waitDone, axeViolations } from './lib.mjs';

const base = process.env.APP_URL ?? 'http://127.0.0.1:8080/';
const context = await launch();
let failed = false;
const found = [];
async function audit(page, state) {
  for (const v of await axeViolations(page)) found.push(`${state}: ${v.impact} ${v.id} (${v.help}) at ${v.nodes.join(', ')}`);
}
// A tour's first step with a caption whose first term is opened in the
// glossary: captions, term links, the glossary and the picture on screen.
async function tourAndGlossary(page) {
  await page.selectOption('[data-testid=tour]', 'preempt-short');
  await page.waitForSelector('[data-testid=tour-next]');
  await page.click('[data-testid=tour-next]');
  await page.waitForSelector('[data-testid=tour-caption] a.term', { timeout: 20000 });
  await page.click('[data-testid=tour-caption] a.term');
  await page.waitForFunction(() => document.querySelector('[data-testid=glossary]')?.open);
}
try {
  const { page, problems } = await openPage(context, base);
  await waitDone(page);
  await audit(page, 'default');

  await page.click('[data-testid=pin]');
  await page.click('input[data-feature=PREEMPT_SHORT]');
  await waitDone(page);
  await page.waitForFunction(() => !document.body.textContent.includes('Baseline still running'), null, { timeout: 30000 });
  await audit(page, 'A/B');
  await page.click('[data-testid=pin]');

  await page.click('[data-testid=teach]');
  await page.waitForSelector('[data-testid=teach-now]');
  await page.click('[data-testid=teach-next-pick]');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=pick-reasons] li').length > 0);
  await audit(page, 'teaching');
  await tourAndGlossary(page);
  await audit(page, 'teaching tour and glossary');
  await page.click('[data-testid=teach]');

  await page.click('[data-testid=theme]');
  check(await page.evaluate(() => document.documentElement.dataset.theme) === 'dark', 'dark theme');
  await waitDone(page);
  await audit(page, 'dark');
  await page.click('[data-testid=teach]');
  await page.waitForSelector('[data-testid=teach-now]');
  await tourAndGlossary(page);
  await audit(page, 'dark teaching tour and glossary');
  await page.click('[data-testid=teach]');
  await waitDone(page);
  await page.click('[data-testid=theme]');

  await page.setViewportSize({ width: 390, height: 844 });
  await waitDone(page);
  await audit(page, 'phone');

  check(found.length === 0, `axe-core:\n  ${found.join('\n  ')}`);
  const csp = await cspViolations(page);
  check(csp.length === 0, `CSP violations: ${csp}`);
  check(problems.length === 0, `page problems: ${problems.join('; ')}`);
  console.log('e2e a11y: ok (axe-core: no serious or critical violation in default, A/B, teaching with a tour and the glossary in both themes, dark, phone)');
} catch (e) {
  failed = true;
  console.error(e.message ?? e);
} finally {
  await context.close();
}
process.exit(failed ? 1 : 0);
