// Trunk post_build hook: replace the 'sha256-TRUNK-INLINE' placeholder in the
// Content-Security-Policy <meta> with the hashes of every inline <script>
// that Trunk wrote, so the policy allows exactly Trunk's loader and nothing
// else. Under `trunk serve` the autoreload script changes per request, so
// debug builds with autoreload get 'unsafe-inline' instead (dev only).
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';

const PLACEHOLDER = "'sha256-TRUNK-INLINE'";
const file = process.argv[2] ?? `${process.env.TRUNK_STAGING_DIR ?? 'dist'}/index.html`;
const html = readFileSync(file, 'utf8');
if (!html.includes(PLACEHOLDER)) {
  console.error(`csp-hash: ${PLACEHOLDER} not found in ${file}`);
  process.exit(1);
}
const inline = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)]
  .filter(([, attrs]) => !/\bsrc\s*=/i.test(attrs))
  .map(([, , body]) => `'sha256-${createHash('sha256').update(body, 'utf8').digest('base64')}'`);
const hashes = [...new Set(inline)];
const dev = process.env.TRUNK_PROFILE === 'debug' && html.includes('__TRUNK_ADDRESS__');
const policy = dev ? "'unsafe-inline'" : hashes.join(' ');
writeFileSync(file, html.replaceAll(PLACEHOLDER, policy));
console.log(`csp-hash: ${dev ? 'dev build, inline allowed' : `${hashes.length} inline script hash(es)`}`);
