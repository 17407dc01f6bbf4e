// Loads Juno's web console in headless Chromium, sends a message and waits for streamed text.
// Usage: node console-check.mjs URL PROFILE_DIR. Prints "ok console: …" or "FAIL console: …"; exit 1 on failure.
import { chromium } from 'playwright-core';

const [url, profile] = process.argv.slice(2);
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
  await page.goto(url);
  await page.waitForFunction(() => document.getElementById('model').textContent.includes('context'), null, { timeout: 30_000 });
  await page.fill('#prompt', 'Once upon a time');
  await page.click('#send');
  // streamed: text shows up while the answer is still running (the Stop button is enabled)
  const midStream = await page.waitForFunction(() => {
    const a = document.querySelector('.msg.assistant');
    return a && a.textContent.length > 0 ? { text: a.textContent, running: !document.getElementById('stop').disabled } : null;
  }, null, { timeout: 30_000, polling: 10 });
  const seen = await midStream.jsonValue();
  await page.waitForSelector('.msg.assistant[data-done="true"]', { timeout: 60_000 });
  const answer = await page.textContent('.msg.assistant');
  const stats = await page.textContent('#stats');
  const errors = await page.$$('.msg.error');
  const problems = [];
  if (!answer || answer.length === 0) problems.push('no answer');
  if (!/tokens\/s/.test(stats)) problems.push('no tokens/s in stats: ' + stats);
  if (errors.length) problems.push('error bubble: ' + (await errors[0].textContent()));
  if (foreign.length) problems.push('requests outside the server: ' + foreign.join(', '));
  if (pageErrors.length) problems.push('page errors: ' + pageErrors.join(' | '));
  if (!answer.startsWith(seen.text)) problems.push('final answer does not extend the streamed text');
  console.log((problems.length ? 'FAIL console: ' + problems.join('; ') : 'ok console') +
    ' | first seen while running=' + seen.running + ' ' + JSON.stringify(seen.text) + ' | final ' + JSON.stringify(answer) + ' | ' + stats);
  process.exitCode = problems.length ? 1 : 0;
} finally {
  await context.close();
}
