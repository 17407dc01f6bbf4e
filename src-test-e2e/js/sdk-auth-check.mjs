// The official openai SDK against a Juno started with API keys. Usage:
//   node sdk-auth-check.mjs BASE_URL MODEL GOOD_KEY WRONG_KEY BURST_KEY BURST_LIMIT   (phase "keys")
//   node sdk-auth-check.mjs BASE_URL MODEL REVOKED_KEY revoked                          (phase "revoked")
// Prints "ok NAME" / "FAIL NAME: why"; exits 1 if any check failed.
import OpenAI from 'openai';

const args = process.argv.slice(2);
const [baseURL, model] = args;
const client = (apiKey) => new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 60_000 });
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

async function refused(c, status, errorClass) {
  try {
    await c.chat.completions.create({ model, messages: user('Hi'), max_tokens: 4 });
  } catch (e) {
    assert(e instanceof errorClass, 'not a ' + errorClass.name + ': ' + e);
    assert(e.status === status, 'status ' + e.status);
    return e;
  }
  throw new Error('no error');
}

if (args[3] === 'revoked') {
  await check('revoked_key_401', async () => {
    const e = await refused(client(args[2]), 401, OpenAI.AuthenticationError);
    assert(e.code === 'invalid_api_key', 'code ' + e.code);
  });
  await check('revoked_key_models_401', async () => {
    try {
      await client(args[2]).models.list();
      throw new Error('no error');
    } catch (e) {
      assert(e instanceof OpenAI.AuthenticationError, 'not an AuthenticationError: ' + e);
    }
  });
} else {
  const [, , good, wrong, burst, burstLimit] = args;
  await check('key_chat_blocking', async () => {
    const r = await client(good).chat.completions.create({ model, messages: user('Once upon a time'), max_tokens: 12, temperature: 0 });
    assert(r.choices[0].message.content.length > 0 && r.usage.completion_tokens >= 1, 'answer ' + JSON.stringify(r));
  });
  await check('key_chat_streaming', async () => {
    const stream = await client(good).chat.completions.create({ model, messages: user('Once upon a time'), max_tokens: 12, stream: true });
    let text = '';
    for await (const c of stream) text += (c.choices[0] && c.choices[0].delta.content) || '';
    assert(text.length > 0, 'empty stream');
  });
  await check('key_models', async () => {
    const list = [];
    for await (const m of client(good).models.list()) list.push(m.id);
    assert(list.length === 1 && list[0] === model, 'models ' + list);
  });
  await check('wrong_key_401', async () => {
    const e = await refused(client(wrong), 401, OpenAI.AuthenticationError);
    assert(e.code === 'invalid_api_key' && e.type === 'invalid_request_error', 'code/type ' + e.code + ' ' + e.type);
  });
  await check('no_key_401', async () => {
    const c = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0, defaultHeaders: { Authorization: null } });
    await refused(c, 401, OpenAI.AuthenticationError);
  });
  await check('rate_limited_429', async () => {
    const c = client(burst);
    for (let i = 0; i < Number(burstLimit); i++) await c.models.list();
    try {
      await c.models.list();
      throw new Error('no 429 after ' + burstLimit + ' requests');
    } catch (e) {
      assert(e instanceof OpenAI.RateLimitError, 'not a RateLimitError: ' + e);
      assert(e.code === 'rate_limit_exceeded', 'code ' + e.code);
      const after = Number(e.headers.get('retry-after'));
      assert(after >= 1 && after <= 60, 'retry-after ' + after);
    }
  });
}
process.exit(failed ? 1 : 0);
