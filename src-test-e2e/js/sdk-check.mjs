// Drives a running Juno with the official openai SDK. Usage: node sdk-check.mjs BASE_URL MODEL
// Prints one line per check: "ok NAME" or "FAIL NAME: why"; exits 1 if any check failed.
import OpenAI from 'openai';

const [baseURL, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: 'not-needed', maxRetries: 0, timeout: 60_000 });
const user = (content) => [{ role: 'user', content }];
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

async function streamed(params) {
  const stream = await client.chat.completions.create({ ...params, stream: true });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const greedy = { model, messages: user('Once upon a time'), max_tokens: 24, temperature: 0 };
let blockingText = null;

await check('chat_blocking', async () => {
  const r = await client.chat.completions.create(greedy);
  assert(r.id.startsWith('chatcmpl-'), 'id ' + r.id);
  assert(r.object === 'chat.completion', 'object ' + r.object);
  assert(Number.isInteger(r.created) && r.created > 1_600_000_000, 'created ' + r.created);
  assert(r.model === model, 'model ' + r.model);
  assert(typeof r.system_fingerprint === 'string' && r.system_fingerprint.length > 0, 'fingerprint');
  assert(r.choices.length === 1 && r.choices[0].message.role === 'assistant', 'choices ' + JSON.stringify(r.choices));
  assert(['stop', 'length'].includes(r.choices[0].finish_reason), 'finish_reason ' + r.choices[0].finish_reason);
  assert(r.usage.completion_tokens >= 1 && r.usage.prompt_tokens >= 1, 'usage ' + JSON.stringify(r.usage));
  assert(r.usage.total_tokens === r.usage.prompt_tokens + r.usage.completion_tokens, 'total');
  blockingText = r.choices[0].message.content;
  assert(blockingText.length > 0, 'empty answer');
});

await check('chat_streaming', async () => {
  const chunks = await streamed(greedy);
  assert(chunks.length >= 3, 'chunks ' + chunks.length);
  assert(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === chunks[0].id && c.id.startsWith('chatcmpl-')), 'ids/objects');
  assert(chunks[0].choices[0].delta.role === 'assistant', 'first delta has the role');
  const text = chunks.map((c) => (c.choices[0] && c.choices[0].delta.content) || '').join('');
  assert(text === blockingText, 'streamed text ' + JSON.stringify(text) + ' != blocking ' + JSON.stringify(blockingText));
  const last = chunks[chunks.length - 1];
  assert(['stop', 'length'].includes(last.choices[0].finish_reason), 'last finish_reason ' + JSON.stringify(last));
  assert(chunks.slice(0, -1).every((c) => c.choices[0].finish_reason === null), 'finish_reason only at the end');
  assert(chunks.every((c) => !c.usage), 'no usage unless asked');
});

await check('stream_usage', async () => {
  const chunks = await streamed({ ...greedy, stream_options: { include_usage: true } });
  const last = chunks[chunks.length - 1];
  assert(Array.isArray(last.choices) && last.choices.length === 0, 'usage chunk has empty choices');
  assert(last.usage && last.usage.completion_tokens >= 1 && last.usage.prompt_tokens >= 1, 'usage ' + JSON.stringify(last.usage));
  assert(chunks.slice(0, -1).every((c) => !c.usage), 'only the last chunk has usage');
});

let completionText = null;
await check('completions', async () => {
  const r = await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 24, temperature: 0 });
  assert(r.id.startsWith('cmpl-') && r.object === 'text_completion', 'id/object ' + r.id + ' ' + r.object);
  assert(r.choices.length === 1 && typeof r.choices[0].text === 'string', 'choices');
  assert(r.usage.completion_tokens >= 1, 'usage');
  completionText = r.choices[0].text;
  const s = await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 24, temperature: 0, stream: true });
  let streamedText = '';
  for await (const c of s) streamedText += c.choices[0] ? c.choices[0].text : '';
  assert(streamedText === completionText, 'streamed completion ' + JSON.stringify(streamedText) + ' != ' + JSON.stringify(completionText));
});

await check('stop', async () => {
  // stop at a piece of the greedy continuation: the answer is everything before it, and the stop text never shows
  const words = completionText.split(' ').filter((w) => w.length >= 2);
  assert(words.length >= 2, 'greedy text too short to pick a stop word: ' + JSON.stringify(completionText));
  const stopWord = words[1];
  const cut = completionText.slice(0, completionText.indexOf(stopWord));
  const r = await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 24, temperature: 0, stop: [stopWord, 'zzzq'] });
  assert(r.choices[0].text === cut, 'text ' + JSON.stringify(r.choices[0].text) + ' != ' + JSON.stringify(cut));
  assert(r.choices[0].finish_reason === 'stop', 'finish_reason ' + r.choices[0].finish_reason);
});

await check('seed_reproducible', async () => {
  const params = { model, messages: user('Tell me a story'), max_tokens: 24, temperature: 1.0 };
  const a = await client.chat.completions.create({ ...params, seed: 42 });
  const b = await client.chat.completions.create({ ...params, seed: 42 });
  assert(a.choices[0].message.content === b.choices[0].message.content, 'same seed, different text');
  const others = new Set([a.choices[0].message.content]);
  for (const seed of [1, 2, 3]) {
    others.add((await client.chat.completions.create({ ...params, seed })).choices[0].message.content);
  }
  assert(others.size > 1, 'different seeds all gave the same text: sampling ignores the seed');
});

await check('n_2', async () => {
  const r = await client.chat.completions.create({ model, messages: user('Tell me a story'), max_tokens: 16, temperature: 1.0, seed: 7, n: 2 });
  assert(r.choices.length === 2, 'choices ' + r.choices.length);
  assert(r.choices[0].index === 0 && r.choices[1].index === 1, 'indexes');
  assert(r.choices[0].message.content !== r.choices[1].message.content, 'two identical choices');
  const one = await client.chat.completions.create({ model, messages: user('Tell me a story'), max_tokens: 16, temperature: 1.0, seed: 7 });
  assert(one.choices[0].message.content === r.choices[0].message.content, 'choice 0 of n=2 equals n=1 with the same seed');
  const single = one.usage.prompt_tokens;
  assert(r.usage.prompt_tokens === single, 'prompt counted once: ' + r.usage.prompt_tokens + ' vs ' + single);
  const chunks = await streamed({ model, messages: user('Tell me a story'), max_tokens: 8, temperature: 1.0, seed: 7, n: 2 });
  const finished = new Set(chunks.filter((c) => c.choices[0] && c.choices[0].finish_reason).map((c) => c.choices[0].index));
  assert(finished.size === 2, 'both streamed choices finish');
});

await check('bad_request', async () => {
  try {
    await client.chat.completions.create({ model, messages: user('Hi'), temperature: 5 });
    throw new Error('no error for temperature 5');
  } catch (e) {
    assert(e instanceof OpenAI.BadRequestError, 'not a BadRequestError: ' + e);
    assert(e.status === 400 && e.param === 'temperature', 'status/param ' + e.status + ' ' + e.param);
    assert(e.type === 'invalid_request_error', 'type ' + e.type);
  }
  try {
    await client.chat.completions.create({ model: 'gpt-9', messages: user('Hi') });
    throw new Error('no error for an unknown model');
  } catch (e) {
    assert(e instanceof OpenAI.NotFoundError, 'not a NotFoundError: ' + e);
  }
});

await check('models', async () => {
  const list = [];
  for await (const m of client.models.list()) list.push(m.id);
  assert(list.length === 1 && list[0] === model, 'models ' + list);
  const m = await client.models.retrieve(model);
  assert(m.id === model && m.object === 'model', 'retrieve');
});

process.exit(failed ? 1 : 0);
