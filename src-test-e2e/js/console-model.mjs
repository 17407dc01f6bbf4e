// The console's model picker on a server with a named LoRA adapter (--lora-modules): the adapter is listed as
// "adapter of BASE", picking it sends it as the request's model, the answer names it, and the choice survives a reload.
// Usage: node console-model.mjs URL PROFILE_DIR ADAPTER BASE. Prints "ok console-model …" or "FAIL console-model: …".
import { chromium } from 'playwright-core';

const [url, profile, adapter, base] = process.argv.slice(2);
const problems = [];
const chats = [];
const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
try {
  const page = context.pages()[0] || (await context.newPage());
  page.on('request', (r) => { if (r.url().endsWith('/v1/chat/completions')) chats.push(JSON.parse(r.postData())); });
  page.on('pageerror', (e) => problems.push('page error: ' + e));
  const ready = () => page.waitForFunction(() => /context/.test(document.getElementById('model').textContent), null, { timeout: 30_000 });
  await page.goto(url);
  await ready();
  const options = await page.$$eval('#model option', (os) => os.map((o) => ({ value: o.value, text: o.textContent })));
  const a = options.find((o) => o.value === adapter);
  if (!options.some((o) => o.value === base)) problems.push('the base model is not listed: ' + JSON.stringify(options));
  if (!a) problems.push('the adapter is not listed: ' + JSON.stringify(options));
  else if (!a.text.includes('adapter of ' + base)) problems.push('the adapter is not shown as one: ' + a.text);
  await page.selectOption('#model', adapter);
  await page.fill('#max-tokens', '8');
  await page.dispatchEvent('#max-tokens', 'change');
  await page.fill('#prompt', 'Once upon a time');
  await page.click('#send');
  await page.waitForSelector('#log .msg.assistant[data-done="true"], #log .msg.error', { timeout: 60_000 });
  if (chats.length !== 1 || chats[0].model !== adapter) problems.push('the request did not name the adapter: ' + JSON.stringify(chats.map((c) => c.model)));
  const meta = await page.textContent('#log .msg.assistant .meta .stats').catch(() => '');
  if (!meta.includes(adapter)) problems.push('the answer does not name the adapter: ' + meta);
  if (await page.$('#log .msg.error')) problems.push('error: ' + (await page.textContent('#log .msg.error')));
  await page.reload();
  await ready();
  if ((await page.inputValue('#model')) !== adapter) problems.push('the adapter is not picked after a reload: ' + (await page.inputValue('#model')));
  console.log((problems.length ? 'FAIL console-model: ' + problems.join('; ') : 'ok console-model') + ' | ' + JSON.stringify(options.map((o) => o.text)) + ' | ' + meta);
  process.exitCode = problems.length ? 1 : 0;
} catch (e) {
  console.log('FAIL console-model: ' + (e && e.stack || e));
  process.exitCode = 1;
} finally {
  await context.close();
}
