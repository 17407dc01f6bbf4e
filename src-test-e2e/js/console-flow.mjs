// The web console's whole flow in headless Chromium: settings sent as set, Enter / Shift+Enter, a streamed answer with
// its figures, "cut off" at max tokens, Stop (marked "stopped"), Regenerate, Copy, the conversation and settings kept
// across a reload, markdown rendered and sanitized (a stored answer carrying script, event handler, javascript: link,
// iframe and svg injections goes through the same render function as a streamed one), JSON mode (alone and with a schema,
// whose answer must parse and follow it), the favicon, a narrow
// screen, and no page error, console error, failed request or request leaving the server along the way.
// Usage: node console-flow.mjs URL PROFILE_DIR SCREENSHOT_DIR EXPECTED_JSON_MODE
//   EXPECTED_JSON_MODE: what the server does with response_format json_object, probed by the caller:
//   "parses" (a JSON answer), "cut" (max_tokens ended it inside the object, marked cut off), "refused" (a 400), or
//   "ignored" (plain text): the console must show the same.
// Prints "ok console-flow | …" or "FAIL console-flow: …"; exit 1 on failure.
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const [url, profile, shots, expectedJson] = process.argv.slice(2);
mkdirSync(shots, { recursive: true });
const origin = new URL(url).origin;
const problems = [];
const notes = [];
const foreign = [], pageErrors = [], consoleErrors = [], failed = [], bad = [], chats = [];
let expect400 = false; // while a step makes the server refuse a request on purpose

const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1280, height: 860 },
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
const check = (ok, what) => { if (!ok) problems.push(what); return ok; };

try {
  const page = context.pages()[0] || (await context.newPage());
  page.on('request', (r) => {
    if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) foreign.push(r.url());
    if (r.url().endsWith('/v1/chat/completions')) chats.push(JSON.parse(r.postData()));
  });
  page.on('requestfailed', (r) => {
    // the Stop button aborts the answer's fetch: that one is expected
    if (!(r.url().endsWith('/v1/chat/completions') && /ERR_ABORTED/.test(r.failure().errorText))) failed.push(r.url() + ' ' + r.failure().errorText);
  });
  page.on('response', (r) => {
    if (r.status() >= 400 && !(expect400 && r.url().endsWith('/v1/chat/completions') && r.status() === 400)) bad.push(r.status() + ' ' + r.url());
  });
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error' && !(expect400 && /status of 400/.test(m.text()))) consoleErrors.push(m.text());
  });
  page.on('dialog', (d) => { problems.push('unexpected dialog: ' + d.message()); d.dismiss(); });

  const ready = () => page.waitForFunction(() => /context/.test(document.getElementById('model').textContent), null, { timeout: 30_000 });
  const messages = () => page.$$eval('#log .msg', (els) => els.map((e) => ({
    role: e.classList.contains('assistant') ? 'assistant' : e.classList.contains('user') ? 'user' : 'error',
    raw: e.classList.contains('assistant') ? e.dataset.raw : e.querySelector('.content').textContent,
    finish: e.dataset.finish || null, done: e.dataset.done, meta: (e.querySelector('.meta .stats') || {}).textContent || '',
  })));
  // a turn is over when the Stop button is off again and the last bubble is a finished answer or an error
  const turn = (count) => page.waitForFunction((n) => {
    const all = document.querySelectorAll('#log .msg');
    const last = all[all.length - 1];
    return all.length >= n && document.getElementById('stop').disabled && last
      && (last.classList.contains('error') || last.dataset.done === 'true');
  }, count, { timeout: 60_000 });
  const setField = async (id, value) => { await page.fill('#' + id, String(value)); await page.dispatchEvent('#' + id, 'change'); };

  await page.goto(url);
  await ready();
  check((await page.$$eval('#log .msg', (e) => e.length)) === 0, 'a fresh profile starts with messages');

  // labels: every control has an accessible name
  const unnamed = await page.$$eval('input, select, textarea', (els) => els.filter((e) => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')).map((e) => e.id));
  check(unnamed.length === 0, 'controls without a label: ' + unnamed.join(', '));

  // ---- 1. settings, Shift+Enter, Enter, a streamed answer cut at max tokens -------------------------------------
  await setField('system', 'You tell short stories.');
  await setField('temperature', 0.7);
  await setField('top-p', 0.9);
  await setField('top-k', 40);
  await setField('seed', 7);
  await setField('max-tokens', 12);
  await page.evaluate(() => {
    window.__seen = [];
    const stop = document.getElementById('stop');
    new MutationObserver(() => {
      const a = document.querySelector('#log .msg.assistant');
      const text = a ? a.dataset.raw : '';
      const last = window.__seen[window.__seen.length - 1];
      if (text && (!last || last.text !== text)) window.__seen.push({ text, running: !stop.disabled, html: a.querySelector('.content').textContent });
    }).observe(document.getElementById('log'), { childList: true, subtree: true, characterData: true, attributes: true });
  });
  await page.focus('#prompt');
  await page.keyboard.type('Once upon');
  await page.keyboard.press('Shift+Enter');
  await page.keyboard.type('a time');
  check((await page.inputValue('#prompt')) === 'Once upon\na time', 'Shift+Enter did not insert a new line: ' + JSON.stringify(await page.inputValue('#prompt')));
  check(chats.length === 0, 'Shift+Enter sent the message');
  await page.keyboard.press('Enter');
  await turn(2);
  let msgs = await messages();
  const first = chats[0] || {};
  check(chats.length === 1, chats.length + ' chat requests for one message');
  check(first.messages && first.messages[0].role === 'system' && first.messages[0].content === 'You tell short stories.', 'system prompt not sent first: ' + JSON.stringify(first.messages));
  check(first.messages && first.messages[1].content === 'Once upon\na time', 'the user message was not sent as typed');
  check(first.temperature === 0.7 && first.top_p === 0.9 && first.top_k === 40 && first.seed === 7 && first.max_tokens === 12 && first.stream === true,
    'settings not sent as set: ' + JSON.stringify(first));
  check(!('response_format' in first), 'response_format sent without JSON mode');
  check(msgs.length === 2 && msgs[0].role === 'user' && msgs[1].role === 'assistant', 'not one question and one answer: ' + JSON.stringify(msgs));
  const a1 = msgs[1] || {};
  check(a1.raw && a1.raw.length > 0, 'no answer');
  check(/12 tokens/.test(a1.meta) && /tokens\/s/.test(a1.meta) && /first token \d+ ms/.test(a1.meta), 'answer figures missing: ' + a1.meta);
  check(a1.finish === 'length', 'an answer of max_tokens tokens is not marked cut off: ' + a1.finish);
  check((await page.textContent('#log .msg.assistant .badge')) === 'cut off', 'no "cut off" badge');
  check(/tokens\/s/.test(await page.textContent('#stats')), 'no tokens/s in the header');
  const seen = await page.evaluate(() => window.__seen);
  const running = seen.filter((s) => s.running);
  // (piece-by-piece growth of a longer answer is console-check.mjs's; 12 tokens may arrive within one 30 ms redraw)
  if (check(running.length >= 1, 'no text was shown while the answer was running')) {
    for (let i = 1; i < running.length; i++) {
      if (!running[i].text.startsWith(running[i - 1].text)) { problems.push('streamed text was rewritten, not extended'); break; }
    }
    check(running[0].html.trim().length > 0, 'streamed text not shown in the bubble');
  }
  check(a1.raw.startsWith(running.length ? running[0].text : ''), 'final answer does not extend the streamed text');
  await page.screenshot({ path: join(shots, '1-answer.png') });

  // ---- 2. Stop: pressed the moment the first text shows --------------------------------------------------------
  await setField('max-tokens', 1500);
  await page.evaluate(() => {
    const stop = document.getElementById('stop');
    const obs = new MutationObserver(() => {
      const all = document.querySelectorAll('#log .msg.assistant');
      const a = all[all.length - 1];
      if (all.length === 2 && a.dataset.raw && !stop.disabled) { obs.disconnect(); stop.click(); }
    });
    obs.observe(document.getElementById('log'), { childList: true, subtree: true, characterData: true, attributes: true });
  });
  await page.fill('#prompt', 'Tell me a very long story about a dragon');
  await page.click('#send');
  await turn(4);
  msgs = await messages();
  const stopped = msgs[3] || {};
  check(stopped.role === 'assistant' && stopped.finish === 'stopped', 'the stopped answer is not marked stopped: ' + JSON.stringify(stopped));
  check((await page.textContent('#log .msg.assistant:last-child .badge')) === 'stopped', 'no "stopped" badge');
  const stoppedTokens = Number((/^(\d+) tokens?/.exec(stopped.meta) || [])[1]);
  check(stoppedTokens >= 1 && stoppedTokens < 1500, 'stopped answer token count ' + stopped.meta);
  check(!(await page.isDisabled('#send')) && (await page.isDisabled('#stop')), 'buttons not back after Stop');
  notes.push('stopped after ' + stoppedTokens + ' tokens');
  await page.screenshot({ path: join(shots, '2-stopped.png') });

  // ---- 3. Regenerate the stopped answer: the same conversation goes out again ----------------------------------
  await setField('max-tokens', 10);
  const before = chats.length;
  await page.click('#log .msg.assistant:last-child .regenerate');
  await turn(4);
  msgs = await messages();
  check(chats.length === before + 1, 'regenerate sent ' + (chats.length - before) + ' requests');
  const again = chats[chats.length - 1] || {}, prev = chats[chats.length - 2] || {};
  check(JSON.stringify(again.messages) === JSON.stringify(prev.messages), 'regenerate sent another conversation: ' + JSON.stringify(again.messages));
  check(msgs.length === 4 && msgs[3].role === 'assistant' && msgs[3].finish !== 'stopped' && msgs[3].raw.length > 0, 'regenerated answer wrong: ' + JSON.stringify(msgs));

  // ---- 4. Copy -------------------------------------------------------------------------------------------------
  await page.click('#log .msg.assistant:last-child .meta .copy');
  const clip = await page.evaluate(() => navigator.clipboard.readText());
  check(clip === msgs[3].raw, 'Copy put ' + JSON.stringify(clip) + ' on the clipboard, not the answer');

  // ---- 5. a reload keeps the conversation and the settings ------------------------------------------------------
  const kept = JSON.stringify(msgs.map((m) => [m.role, m.raw, m.finish]));
  await page.reload();
  await ready();
  const after = JSON.stringify((await messages()).map((m) => [m.role, m.raw, m.finish]));
  check(after === kept, 'the conversation changed across a reload: ' + after + ' vs ' + kept);
  check((await page.inputValue('#temperature')) === '0.7' && (await page.inputValue('#system')) === 'You tell short stories.', 'settings not kept across a reload');

  // ---- 6. markdown, code blocks and injections through the console's render function ---------------------------
  const crafted = [
    '# Title', '', 'Some **bold** text and `inline code`.', '', '```js', 'console.log(1 < 2);', '```', '',
    '<img src="x" onerror="window.__pwned=\'img\'">', '<script>window.__pwned=\'script\'</script>',
    '[bad link](javascript:window.__pwned=\'link\')', '<a href="#top" onclick="window.__pwned=\'click\'">anchor</a>',
    '<iframe src="javascript:window.__pwned=\'frame\'"></iframe>', '<svg onload="window.__pwned=\'svg\'"><circle r="1"/></svg>',
    '<details open ontoggle="window.__pwned=\'toggle\'">x</details>', '<p style="background:url(x)">styled</p>',
  ].join('\n');
  await page.evaluate((md) => localStorage.setItem('juno.conversation', JSON.stringify([
    { role: 'user', content: 'show me markdown <b>not bold</b>' }, { role: 'assistant', content: md, meta: { tokens: 1 } }])), crafted);
  await page.reload();
  await ready();
  await page.waitForTimeout(300);
  const md = await page.$eval('#log .msg.assistant .content', (c) => ({
    h1: (c.querySelector('h1') || {}).textContent, strong: (c.querySelector('strong') || {}).textContent,
    code: (c.querySelector('pre code') || {}).textContent, inline: (c.querySelector(':not(pre) > code') || {}).textContent,
    dangerous: [...c.querySelectorAll('script, img, iframe, svg, style, object, embed')].map((e) => e.tagName),
    handlers: [...c.querySelectorAll('*')].flatMap((e) => [...e.attributes].filter((a) => /^on/i.test(a.name) || a.name === 'style').map((a) => e.tagName + '@' + a.name)),
    hrefs: [...c.querySelectorAll('a')].map((a) => a.getAttribute('href')),
  }));
  check(md.h1 === 'Title' && md.strong === 'bold' && md.inline === 'inline code', 'markdown not rendered: ' + JSON.stringify(md));
  check(md.code && md.code.includes('console.log(1 < 2);'), 'code block not rendered: ' + JSON.stringify(md.code));
  check(md.dangerous.length === 0, 'dangerous elements kept: ' + md.dangerous.join(','));
  check(md.handlers.length === 0, 'event handlers or styles kept: ' + md.handlers.join(','));
  check(md.hrefs.every((h) => h === null || !/^\s*javascript:/i.test(h)), 'javascript: link kept: ' + md.hrefs.join(','));
  const userShown = await page.$eval('#log .msg.user .content', (c) => ({ text: c.textContent, b: c.querySelectorAll('b').length }));
  check(userShown.text === 'show me markdown <b>not bold</b>' && userShown.b === 0, 'the user text was not shown as typed');
  for (const a of await page.$$('#log .msg.assistant .content a')) await a.click();
  await page.waitForTimeout(300);
  check((await page.evaluate(() => window.__pwned)) === undefined, 'injected code ran: ' + (await page.evaluate(() => window.__pwned)));
  await page.screenshot({ path: join(shots, '3-markdown.png') });

  // ---- 7. a request the server refuses: its message in an error bubble, then Retry --------------------------------
  await page.click('#new-chat');
  await setField('top-p', 2); // the field's max is 1, but a typed value still goes out; the server answers 400
  expect400 = true;
  await page.fill('#prompt', 'Once upon a time');
  await page.click('#send');
  await turn(2);
  expect400 = false;
  msgs = await messages();
  const refusal = msgs[msgs.length - 1] || {};
  check(refusal.role === 'error' && /refused/.test(refusal.raw) && /top_p/.test(refusal.raw), 'a 400 is not shown with its message: ' + JSON.stringify(refusal));
  check((await page.getAttribute('#log .msg.error', 'role')) === 'alert', 'the error bubble is not an alert');
  await setField('top-p', 0.9);
  await page.click('#log .msg.error .regenerate');
  await turn(2);
  msgs = await messages();
  check(msgs.length === 2 && msgs[0].role === 'user' && msgs[1].role === 'assistant' && msgs[1].raw.length > 0, 'Retry after the error: ' + JSON.stringify(msgs));

  // ---- 8. JSON mode --------------------------------------------------------------------------------------------
  await page.click('#new-chat');
  check((await page.$$('#log .msg')).length === 0 && (await page.evaluate(() => localStorage.getItem('juno.conversation'))) === '[]', 'New chat did not clear the conversation');
  await setField('max-tokens', 400);
  await setField('temperature', 0);
  await page.check('#json-mode');
  await page.dispatchEvent('#json-mode', 'change');
  expect400 = expectedJson === 'refused';
  await page.fill('#prompt', 'Describe a cat as a JSON object');
  await page.click('#send');
  await turn(2);
  const jsonRequest = chats[chats.length - 1] || {};
  check(jsonRequest.response_format && jsonRequest.response_format.type === 'json_object', 'JSON mode did not send response_format: ' + JSON.stringify(jsonRequest.response_format));
  msgs = await messages();
  const last = msgs[msgs.length - 1] || {};
  let jsonState;
  if (last.role === 'error') {
    jsonState = 'refused';
    check(/refused/.test(last.raw) && /response_format/.test(last.raw), 'the refusal does not say what was refused: ' + last.raw);
    check(await page.isVisible('#log .msg.error'), 'the refusal is not shown');
  } else {
    let parsed = true;
    try { JSON.parse(last.raw); } catch (e) { parsed = false; }
    jsonState = parsed ? 'parses' : last.finish === 'length' && last.raw.trim().startsWith('{') ? 'cut' : 'ignored';
    const badge = await page.textContent('#log .msg.assistant .json-valid, #log .msg.assistant .json-invalid').catch(() => '');
    check(badge === (parsed ? 'valid JSON' : 'not valid JSON'), 'JSON badge says ' + JSON.stringify(badge) + ' for ' + JSON.stringify(last.raw));
    check(await page.isVisible('#log .msg.assistant pre code.language-json'), 'JSON answer not shown as a code block');
  }
  check(jsonState === expectedJson, 'JSON mode: the console shows "' + jsonState + '" but the server ' + expectedJson + ' (' + JSON.stringify(last.raw) + ')');
  notes.push('json-mode=' + jsonState);
  await page.screenshot({ path: join(shots, '4-json-mode.png') });

  // ---- 8b. JSON mode with a schema: the answer follows it, so it closes and parses even on a tiny model ----------
  if (expectedJson !== 'refused') {
    await page.click('#new-chat');
    const sent = chats.length;
    await setField('json-schema', '{"type": "object", "properties": {');
    check((await page.textContent('#mode')) === 'JSON schema', 'the mode badge does not say JSON schema');
    await page.fill('#prompt', 'Describe a cat as a JSON object');
    await page.click('#send');
    await turn(2);
    msgs = await messages();
    const broken = msgs[msgs.length - 1] || {};
    check(broken.role === 'error' && /schema/.test(broken.raw) && /not valid JSON/.test(broken.raw), 'a broken schema is not said: ' + JSON.stringify(broken));
    check(chats.length === sent, 'a broken schema was sent to the server');
    const catSchema = {
      type: 'object', additionalProperties: false, required: ['name', 'color', 'purrs'],
      properties: { name: { type: 'string', minLength: 1, maxLength: 12 }, color: { enum: ['black', 'white', 'orange', 'grey'] }, purrs: { type: 'boolean' } },
    };
    await page.click('#new-chat');
    await setField('json-schema', JSON.stringify(catSchema, null, 1));
    await page.fill('#prompt', 'Describe a cat as a JSON object');
    await page.click('#send');
    await turn(2);
    const schemaRequest = chats[chats.length - 1] || {};
    const rf = schemaRequest.response_format || {};
    check(rf.type === 'json_schema' && rf.json_schema && rf.json_schema.strict === true && JSON.stringify(rf.json_schema.schema) === JSON.stringify(catSchema),
      'the schema was not sent as response_format json_schema: ' + JSON.stringify(rf));
    msgs = await messages();
    const cat = msgs[msgs.length - 1] || {};
    let value = null;
    try { value = JSON.parse(cat.raw); } catch (e) { /* checked below */ }
    check(cat.role === 'assistant' && value !== null, 'JSON schema answer does not parse: ' + JSON.stringify(cat));
    if (value !== null) {
      const keys = Object.keys(value).sort().join(',');
      check(keys === 'color,name,purrs' && typeof value.name === 'string' && value.name.length >= 1 && value.name.length <= 12
        && catSchema.properties.color.enum.includes(value.color) && typeof value.purrs === 'boolean',
        'JSON schema answer does not follow the schema: ' + cat.raw);
      check(cat.finish === null, 'a closed schema answer is marked ' + cat.finish + ' (only cut or stopped answers are)');
      notes.push('json-schema=' + JSON.stringify(value));
    }
    const badge = await page.textContent('#log .msg.assistant .json-valid, #log .msg.assistant .json-invalid').catch(() => '');
    check(badge === 'valid JSON', 'JSON badge says ' + JSON.stringify(badge) + ' for a schema answer');
    await page.screenshot({ path: join(shots, '4b-json-schema.png') });
    await setField('json-schema', '');
  }
  await page.uncheck('#json-mode');
  await page.dispatchEvent('#json-mode', 'change');
  expect400 = false;

  // ---- 9. favicon ----------------------------------------------------------------------------------------------
  const icons = await page.evaluate(async () => {
    const out = [];
    for (const l of document.querySelectorAll('link[rel~="icon"]')) {
      const r = await fetch(l.href);
      out.push({ href: l.getAttribute('href'), status: r.status, type: r.headers.get('content-type'), size: (await r.arrayBuffer()).byteLength });
    }
    const ico = await fetch('/favicon.ico');
    out.push({ href: '/favicon.ico', status: ico.status, type: ico.headers.get('content-type'), size: (await ico.arrayBuffer()).byteLength });
    return out;
  });
  check(icons.length >= 2 && icons.every((i) => i.status === 200 && /^image\//.test(i.type) && i.size > 0), 'favicon: ' + JSON.stringify(icons));

  // ---- 10. a narrow screen: settings behind a toggle ----------------------------------------------------------------
  await page.setViewportSize({ width: 400, height: 800 });
  check(!(await page.isVisible('#settings')) && (await page.isVisible('#settings-toggle')), 'narrow screen: settings not folded away');
  await page.click('#settings-toggle');
  check((await page.isVisible('#settings')) && (await page.getAttribute('#settings-toggle', 'aria-expanded')) === 'true', 'narrow screen: the toggle does not open the settings');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow <= 0, 'narrow screen: the page is ' + overflow + ' px wider than the window');
  await page.screenshot({ path: join(shots, '5-narrow.png') });

  if (foreign.length) problems.push('requests outside the server: ' + foreign.join(', '));
  if (failed.length) problems.push('failed requests: ' + failed.join(', '));
  if (bad.length) problems.push('error responses: ' + bad.join(', '));
  if (pageErrors.length) problems.push('page errors: ' + pageErrors.join(' | '));
  if (consoleErrors.length) problems.push('console errors: ' + consoleErrors.join(' | '));
  console.log((problems.length ? 'FAIL console-flow: ' + problems.join('; ') : 'ok console-flow') + ' | ' + notes.join(' | ')
    + ' | ' + chats.length + ' chat requests | first answer ' + JSON.stringify(a1.raw) + ' (' + a1.meta + ')');
  process.exitCode = problems.length ? 1 : 0;
} catch (e) {
  console.log('FAIL console-flow: ' + (e && e.stack || e) + (problems.length ? ' | also: ' + problems.join('; ') : ''));
  process.exitCode = 1;
} finally {
  await context.close();
}
