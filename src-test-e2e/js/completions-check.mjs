// Issue 23's completions and stream-shape behaviour through the official openai SDK. Usage: node completions-check.mjs BASE_URL MODEL
// Prints one line per check: "ok NAME" or "FAIL NAME: why"; exits 1 if any check failed.
import OpenAI from 'openai';

const [baseURL, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: 'not-needed', maxRetries: 0, timeout: 60_000 });
let failed = 0;

function assert(cond, message) {
  if (!cond) throw new Error(message);
}

async function check(name, fn) {
  try {
    await fn();
    console.log('ok ' + name);
  } catch (e) {
    failed++;
    console.log('FAIL ' + name + ': ' + (e && e.stack ? e.stack.split('\n').slice(0, 3).join(' | ') : e));
  }
}

async function collect(stream) {
  const chunks = [];
  for await (const c of stream) chunks.push(c);
  return chunks;
}

const prompt = 'Once upon a time';
const greedy = { model, max_tokens: 12, temperature: 0 };

await check('echo_logprobs', async () => {
  const plain = await client.completions.create({ ...greedy, prompt });
  const r = await client.completions.create({ ...greedy, prompt, echo: true, logprobs: 2 });
  const c = r.choices[0];
  assert(c.text === prompt + plain.choices[0].text, 'echoed text ' + JSON.stringify(c.text));
  const lp = c.logprobs;
  assert(lp.tokens.length === lp.token_logprobs.length && lp.tokens.length === lp.text_offset.length, 'parallel lists');
  const generated = plain.usage.completion_tokens;
  const promptShown = lp.tokens.length - generated;
  assert(promptShown >= 3, 'prompt tokens listed: ' + promptShown + ' of ' + JSON.stringify(lp.tokens));
  assert(lp.tokens.slice(0, promptShown).join('').trim() === prompt, 'prompt tokens spell the prompt: ' + JSON.stringify(lp.tokens));
  for (let i = 0; i < promptShown; i++) {
    const v = lp.token_logprobs[i];
    assert(v === null ? i === 0 : v <= 0, 'prompt token ' + i + ' logprob ' + v);
  }
  assert(lp.token_logprobs.slice(1).every((v) => typeof v === 'number'), 'numbers after the first');
  // the generated part is what logprobs without echo reports
  const noEcho = await client.completions.create({ ...greedy, prompt, logprobs: 2 });
  const tail = lp.token_logprobs.slice(promptShown);
  noEcho.choices[0].logprobs.token_logprobs.forEach((v, i) => assert(Math.abs(v - tail[i]) < 1e-4, 'generated logprob ' + i));
});

await check('prompt_array', async () => {
  const prompts = [prompt, 'The little dog'];
  const single = [];
  for (const p of prompts) single.push((await client.completions.create({ ...greedy, prompt: p })).choices[0].text);
  const r = await client.completions.create({ ...greedy, prompt: prompts, n: 2 });
  assert(r.choices.length === 4, 'choices ' + r.choices.length);
  r.choices.forEach((c, i) => {
    assert(c.index === i, 'index ' + c.index + ' at ' + i);
    assert(c.text === single[Math.floor(i / 2)], 'choice ' + i + ' ' + JSON.stringify(c.text));
  });
  const s = await collect(await client.completions.create({ ...greedy, prompt: prompts, stream: true }));
  const texts = ['', ''];
  for (const c of s) texts[c.choices[0].index] += c.choices[0].text;
  assert(texts[0] === single[0] && texts[1] === single[1], 'streamed ' + JSON.stringify(texts));
});

await check('usage_null_until_last', async () => {
  const chat = await collect(await client.chat.completions.create({ ...greedy, messages: [{ role: 'user', content: 'Hi' }],
    stream: true, stream_options: { include_usage: true } }));
  const text = await collect(await client.completions.create({ ...greedy, prompt, stream: true, stream_options: { include_usage: true } }));
  for (const chunks of [chat, text]) {
    const last = chunks[chunks.length - 1];
    assert(chunks.slice(0, -1).every((c) => c.usage === null && c.choices.length === 1), 'usage: null on every chunk but the last');
    assert(last.choices.length === 0 && last.usage.total_tokens === last.usage.prompt_tokens + last.usage.completion_tokens,
      'last chunk ' + JSON.stringify(last));
  }
});

await check('logprobs_match_content_with_stop', async () => {
  const base = { ...greedy, max_tokens: 24, messages: [{ role: 'user', content: prompt }], logprobs: true };
  const free = await client.chat.completions.create(base);
  const pieces = free.choices[0].logprobs.content.map((e) => Buffer.from(e.bytes).toString('utf8'));
  assert(pieces.length >= 6, 'too short: ' + JSON.stringify(pieces));
  const joined = pieces.join('');
  // a stop string that starts inside the 4th token (mid-token) and one that starts at the 3rd (a boundary)
  const at3 = pieces.slice(0, 3).join('').length;
  for (const cut of [at3, at3 + Math.max(1, Math.floor(pieces[3].length / 2))]) {
    const stop = joined.slice(cut, cut + 3);
    if (stop.trim().length === 0) continue;
    const r = await client.chat.completions.create({ ...base, stop: [stop] });
    const content = r.choices[0].message.content;
    assert(r.choices[0].finish_reason === 'stop', 'finish ' + r.choices[0].finish_reason);
    assert(!content.includes(stop), 'the stop string shows');
    const got = r.choices[0].logprobs.content.map((e) => Buffer.from(e.bytes).toString('utf8'));
    const all = got.join('').trimStart();
    const allButLast = got.slice(0, -1).join('').trimStart();
    assert(all.startsWith(content.trimStart()), 'tokens ' + JSON.stringify(got) + ' do not spell ' + JSON.stringify(content));
    assert(allButLast.length < content.trimStart().length, 'a token inside the stop string is listed: ' + JSON.stringify(got)
      + ' for ' + JSON.stringify(content));
  }
});

await check('best_of', async () => {
  const r = await client.completions.create({ model, prompt, max_tokens: 8, temperature: 1.2, seed: 3, best_of: 3, logprobs: 0 });
  assert(r.choices.length === 1, 'one choice');
  const n3 = await client.completions.create({ model, prompt, max_tokens: 8, temperature: 1.2, seed: 3, n: 3, logprobs: 0 });
  const mean = (c) => c.logprobs.token_logprobs.reduce((a, b) => a + b, 0) / c.logprobs.token_logprobs.length;
  const best = n3.choices.reduce((a, b) => (mean(b) > mean(a) ? b : a));
  assert(r.choices[0].text === best.text, 'best_of picked ' + JSON.stringify(r.choices[0].text) + ', best is ' + JSON.stringify(best.text));
  assert(r.usage.completion_tokens === n3.usage.completion_tokens, 'usage counts all');
});

await check('refused_parameters', async () => {
  for (const [params, param] of [[{ prompt, suffix: 'The end.' }, 'suffix'], [{ prompt, best_of: 2, stream: true }, 'best_of']]) {
    try {
      await client.completions.create({ model, max_tokens: 2, ...params });
      throw new Error('accepted ' + param);
    } catch (e) {
      assert(e instanceof OpenAI.BadRequestError, param + ': ' + e);
      assert(e.param === param, 'param ' + e.param + ' for ' + param);
    }
  }
  try {
    await client.chat.completions.create({ model, messages: [{ role: 'user' }] });
    throw new Error('accepted a user message without content');
  } catch (e) {
    assert(e instanceof OpenAI.BadRequestError && e.param === 'messages[0].content', 'no content: ' + e);
  }
  try {
    await client.post('/embeddingz', { body: {} });
    throw new Error('an unknown route answered');
  } catch (e) {
    assert(e instanceof OpenAI.NotFoundError && /Invalid URL/.test(e.message), 'unknown route: ' + e);
  }
});

process.exit(failed ? 1 : 0);
