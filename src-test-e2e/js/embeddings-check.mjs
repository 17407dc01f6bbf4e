// Drives a running Juno's /v1/embeddings with the official openai SDK. Usage: node embeddings-check.mjs BASE_URL MODEL
// Prints one line per check: "ok NAME" or "FAIL NAME: why"; exits 1 if any check failed.
import OpenAI from 'openai';

const [baseURL, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: 'not-needed', maxRetries: 0, timeout: 60_000 });
const texts = ['Once upon a time', 'The little dog ran to the park', 'Tom'];
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

function fromBase64(s) {
  const bytes = Buffer.from(s, 'base64');
  const out = [];
  for (let i = 0; i < bytes.length; i += 4) out.push(bytes.readFloatLE(i));
  return out;
}

function sameFloats(a, b, what) {
  assert(a.length === b.length, what + ': lengths ' + a.length + ' and ' + b.length);
  for (let i = 0; i < a.length; i++) {
    assert(Math.fround(a[i]) === Math.fround(b[i]), what + ': element ' + i + ' ' + a[i] + ' vs ' + b[i]);
  }
}

let floats = null;

await check('shape', async () => {
  const r = await client.embeddings.create({ model, input: texts, encoding_format: 'float' });
  assert(r.object === 'list', 'object ' + r.object);
  assert(r.model === model, 'model ' + r.model);
  assert(r.data.length === texts.length, r.data.length + ' items');
  r.data.forEach((d, i) => {
    assert(d.object === 'embedding' && d.index === i, 'item ' + i + ': ' + d.object + ' ' + d.index);
    assert(Array.isArray(d.embedding) && d.embedding.length === r.data[0].embedding.length && d.embedding.length > 0,
      'item ' + i + ' length ' + d.embedding.length);
    const norm = Math.sqrt(d.embedding.reduce((s, x) => s + x * x, 0));
    assert(Math.abs(norm - 1) < 1e-5, 'item ' + i + ' norm ' + norm);
  });
  assert(r.usage.prompt_tokens > texts.length && r.usage.total_tokens === r.usage.prompt_tokens,
    'usage ' + JSON.stringify(r.usage));
  floats = r.data.map((d) => d.embedding);
});

await check('float_base64_equal', async () => {
  const raw = await client.embeddings.create({ model, input: texts, encoding_format: 'base64' });
  raw.data.forEach((d, i) => {
    assert(typeof d.embedding === 'string', 'base64 item ' + i + ' is ' + typeof d.embedding);
    sameFloats(floats[i], fromBase64(d.embedding), 'base64 item ' + i);
  });
  // the SDK's default asks for base64 and decodes it into numbers itself
  const sdk = await client.embeddings.create({ model, input: texts });
  sdk.data.forEach((d, i) => sameFloats(floats[i], d.embedding, 'default item ' + i));
});

await check('deterministic', async () => {
  const again = await client.embeddings.create({ model, input: texts, encoding_format: 'float' });
  again.data.forEach((d, i) => sameFloats(floats[i], d.embedding, 'again item ' + i));
});

await check('batched_equals_single', async () => {
  for (let i = 0; i < texts.length; i++) {
    const one = await client.embeddings.create({ model, input: texts[i], encoding_format: 'float' });
    assert(one.data.length === 1, one.data.length + ' items');
    sameFloats(floats[i], one.data[0].embedding, 'single ' + i);
  }
  const differs = floats[0].some((x, k) => x !== floats[2][k]);
  assert(differs, 'two texts gave one vector');
});

await check('dimensions_refused', async () => {
  const size = floats[0].length;
  const ok = await client.embeddings.create({ model, input: 'x', dimensions: size, encoding_format: 'float' });
  assert(ok.data[0].embedding.length === size, 'dimensions ' + size);
  try {
    await client.embeddings.create({ model, input: 'x', dimensions: 8 });
    throw new Error('dimensions 8 was accepted');
  } catch (e) {
    assert(e instanceof OpenAI.BadRequestError, 'expected BadRequestError, got ' + e);
    assert(e.status === 400 && e.param === 'dimensions', 'status ' + e.status + ' param ' + e.param);
  }
});

await check('empty_refused', async () => {
  try {
    await client.embeddings.create({ model, input: [] });
    throw new Error('an empty input was accepted');
  } catch (e) {
    assert(e instanceof OpenAI.BadRequestError && e.param === 'input', 'expected BadRequestError on input, got ' + e);
  }
});

process.exit(failed === 0 ? 0 : 1);
