// Loads Juno's health dashboard (/health-ui/) in headless Chromium and checks what it shows against the server's own
// /v1/cluster/health. Usage: node health-check.mjs URL PROFILE_DIR EXPECTED_NODES. Prints "ok health-ui: …" or
// "FAIL health-ui: …"; exit 1 on failure.
import { chromium } from 'playwright-core';

const [url, profile, expectedNodes] = process.argv.slice(2);
const origin = new URL(url).origin;
const foreign = [];
const pageErrors = [];
const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
try {
  const page = context.pages()[0] || (await context.newPage());
  page.on('request', (r) => { if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) foreign.push(r.url()); });
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  await page.goto(new URL('/health-ui/', url).toString());
  await page.waitForFunction(() => document.getElementById('status').textContent.includes('UP'), null, { timeout: 30_000 });
  // two polls, so the rates are computed from a difference
  await page.waitForFunction(() => !document.querySelector('.card[data-label="steps/s"] b').textContent.includes('–'), null, { timeout: 10_000 });
  const problems = [];
  const rows = await page.$$eval('#nodes tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  const want = Number(expectedNodes);
  if (rows.length !== want) problems.push('node rows: ' + rows.length + ', expected ' + want);
  for (const r of rows) {
    if (r[1] !== 'UP') problems.push('node ' + r[0] + ' shows ' + r[1]);
    if (!/^layers \d+–\d+/.test(r[2])) problems.push('node ' + r[0] + ' shard ' + r[2]);
    if (!/ms$/.test(r[6])) problems.push('node ' + r[0] + ' call latency ' + r[6]);
  }
  const kv = await page.textContent('.card[data-label="KV blocks"] b');
  const server = await (await fetch(new URL('/v1/cluster/health', url))).json();
  if (!kv.endsWith('/ ' + server.kvBlocksTotal)) problems.push('KV card ' + kv + ' vs ' + server.kvBlocksTotal + ' blocks');
  if (!(await page.textContent('#status')).includes(server.model)) problems.push('status does not name the model ' + server.model);
  if (want === 0 && (await page.isHidden('#local'))) problems.push('no "computes in process" note');
  if (foreign.length) problems.push('requests outside the server: ' + foreign.join(', '));
  if (pageErrors.length) problems.push('page errors: ' + pageErrors.join(' | '));
  console.log((problems.length ? 'FAIL health-ui: ' + problems.join('; ') : 'ok health-ui') + ' | ' + JSON.stringify(rows) + ' | KV ' + kv);
  process.exitCode = problems.length ? 1 : 0;
} finally {
  await context.close();
}
