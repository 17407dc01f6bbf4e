// Loads Juno's web console in headless Chromium, sends a message and waits for streamed text (the API-key flow uses
// this too; console-flow.mjs checks the rest of the console).
// Usage: node console-check.mjs URL PROFILE_DIR [API_KEY]: with a key, the console's prompt for it is answered with
// it (once: a second prompt is a failure). Prints "ok console: …" or "FAIL console: …"; exit 1 on failure.
import { chromium } from 'playwright-core';

const [url, profile, apiKey] = process.argv.slice(2);
let keyPrompts = 0;
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
  page.on('dialog', async (d) => {
    keyPrompts++;
    if (apiKey && keyPrompts === 1) await d.accept(apiKey); else await d.dismiss();
  });
  await page.goto(url);
  await page.waitForFunction(() => document.getElementById('model').textContent.includes('context'), null, { timeout: 30_000 });
  // Every change of the answer bubble is recorded by a MutationObserver, together with whether the answer was still
  // running (Stop enabled) at that moment. Observer callbacks run as microtasks between the console's awaits, so a
  // short, fast answer is seen as reliably as a long one (polling from outside missed a 128-token answer at 580 tokens/s).
  await page.evaluate(() => {
    window.__seen = [];
    const stop = document.getElementById('stop');
    new MutationObserver(() => {
      const a = document.querySelector('.msg.assistant');
      const text = a ? a.dataset.raw || '' : ''; // the answer's markdown as streamed so far (the bubble shows it rendered)
      const last = window.__seen[window.__seen.length - 1];
      if (text.length > 0 && (!last || last.text !== text)) window.__seen.push({ text, running: !stop.disabled });
    }).observe(document.getElementById('log'), { childList: true, subtree: true, characterData: true, attributes: true });
  });
  await page.fill('#prompt', 'Once upon a time');
  await page.click('#send');
  await page.waitForSelector('.msg.assistant[data-done="true"]', { timeout: 60_000 });
  const states = await page.evaluate(() => window.__seen);
  const whileRunning = states.filter((s) => s.running);
  const seen = whileRunning[0] || states[0] || { text: '', running: false };
  const answer = await page.getAttribute('.msg.assistant', 'data-raw');
  const shown = await page.textContent('.msg.assistant .content');
  const stats = await page.textContent('#stats');
  const errors = await page.$$('.msg.error');
  const problems = [];
  if (!answer || answer.length === 0) problems.push('no answer');
  if (!shown || shown.trim().length === 0) problems.push('the answer is not shown');
  if (!/tokens\/s/.test(stats)) problems.push('no tokens/s in stats: ' + stats);
  if (apiKey && keyPrompts !== 1) problems.push('asked for the API key ' + keyPrompts + ' times, not once');
  if (!apiKey && keyPrompts !== 0) problems.push('asked for an API key on a server without keys');
  if (apiKey && (await page.evaluate(() => localStorage.getItem('juno.apiKey'))) !== apiKey) problems.push('key not kept in localStorage');
  if (errors.length) problems.push('error bubble: ' + (await errors[0].textContent()));
  if (foreign.length) problems.push('requests outside the server: ' + foreign.join(', '));
  if (pageErrors.length) problems.push('page errors: ' + pageErrors.join(' | '));
  if (!answer.startsWith(seen.text)) problems.push('final answer does not extend the streamed text');
  const tokenCount = Number((/^(\d+) tokens/.exec(stats) || [])[1] || 0);
  // streamed: text shows up while the answer is still running, and grows piece by piece
  if (whileRunning.length === 0) problems.push('no text was shown while the answer was running');
  else if (tokenCount >= 2 && whileRunning.length < 2) problems.push('the answer appeared in one piece (' + tokenCount + ' tokens)');
  for (let i = 1; i < whileRunning.length; i++) {
    if (!whileRunning[i].text.startsWith(whileRunning[i - 1].text)) { problems.push('streamed text was rewritten, not extended'); break; }
  }
  console.log((problems.length ? 'FAIL console: ' + problems.join('; ') : 'ok console') +
    ' | first seen while running=' + seen.running + ' ' + JSON.stringify(seen.text) + ' | ' + whileRunning.length + ' updates while running' + ' | final ' + JSON.stringify(answer) + ' | ' + stats);
  process.exitCode = problems.length ? 1 : 0;
} finally {
  await context.close();
}
