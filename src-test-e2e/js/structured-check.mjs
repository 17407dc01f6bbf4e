// Structured output through the official openai SDK. Usage: node structured-check.mjs BASE_URL MODEL
// Prints one line per check: "ok NAME" or "FAIL NAME: why"; exits 1 if any check failed.
// The bundled model is far too small to write JSON on its own: every document that parses and fits here does so
// because Juno constrained the decoding.
import OpenAI from 'openai';

const [baseURL, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: 'not-needed', maxRetries: 0, timeout: 120_000 });
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

// A small validator for the keywords the schemas below use (type, properties, required, additionalProperties,
// items, minItems, maxItems, minLength, maxLength, enum, anyOf, $ref): independent of Juno's own compiler.
function validate(schema, value, root = schema, path = '$') {
  if (schema.$ref) {
    const target = schema.$ref.slice(2).split('/').reduce((s, k) => s[k], root);
    return validate(target, value, root, path);
  }
  if (schema.anyOf) {
    const errors = schema.anyOf.map((s) => validate(s, value, root, path));
    return errors.some((e) => e === null) ? null : path + ': no anyOf branch fits (' + errors.join('; ') + ')';
  }
  if (schema.enum) {
    return schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value)) ? null : path + ': not in enum: ' + JSON.stringify(value);
  }
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : null;
  const typeOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);
  if (types) {
    const t = typeOf(value);
    if (!types.includes(t) && !(t === 'integer' && types.includes('number'))) return path + ': type ' + t + ', wanted ' + types;
  }
  if (typeof value === 'string') {
    const n = [...value].length;
    if (schema.minLength !== undefined && n < schema.minLength) return path + ': shorter than ' + schema.minLength;
    if (schema.maxLength !== undefined && n > schema.maxLength) return path + ': longer than ' + schema.maxLength;
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) return path + ': fewer than ' + schema.minItems + ' items';
    if (schema.maxItems !== undefined && value.length > schema.maxItems) return path + ': more than ' + schema.maxItems + ' items';
    for (let i = 0; i < value.length && schema.items; i++) {
      const e = validate(schema.items, value[i], root, path + '[' + i + ']');
      if (e) return e;
    }
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const r of schema.required || []) if (!(r in value)) return path + ': missing ' + r;
    for (const [k, v] of Object.entries(value)) {
      if (schema.properties && k in schema.properties) {
        const e = validate(schema.properties[k], v, root, path + '.' + k);
        if (e) return e;
      } else if (schema.additionalProperties === false) {
        return path + ': unexpected property ' + k;
      }
    }
  }
  return null;
}

const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'rating', 'genre', 'characters'],
  properties: {
    title: { type: 'string', minLength: 1, maxLength: 24 },
    rating: { type: 'integer' },
    genre: { enum: ['fairy tale', 'fable', 'adventure'] },
    characters: { type: 'array', minItems: 1, maxItems: 3, items: { $ref: '#/$defs/character' } },
    moral: { anyOf: [{ type: 'string', maxLength: 30 }, { type: 'null' }] },
  },
  $defs: {
    character: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'kind'],
      properties: { name: { type: 'string', maxLength: 12 }, kind: { enum: ['girl', 'boy', 'dog', 'cat', 'bird'] }, age: { type: 'integer' } },
    },
  },
};
const format = { type: 'json_schema', json_schema: { name: 'story', strict: true, schema } };

// 20 prompts made of random words, random seeds and temperatures: a fixed generator, so a failure replays
let state = 20251201;
const rand = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648);
const words = ['dog', 'happy', 'sun', 'little', 'girl', 'ran', 'park', 'tree', 'big', 'ball', 'mom', 'saw', 'red', 'bird', 'sky'];
const prompt = () => Array.from({ length: 3 + Math.floor(rand() * 6) }, () => words[Math.floor(rand() * words.length)]).join(' ');

await check('json_schema_20_prompts', async () => {
  for (let i = 0; i < 20; i++) {
    const p = prompt();
    const seed = Math.floor(rand() * 1e6);
    const temperature = 0.5 + rand();
    const r = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Write a story about ' + p }],
      response_format: format, max_tokens: 400, seed, temperature });
    const c = r.choices[0];
    const where = ' (prompt ' + JSON.stringify(p) + ', seed ' + seed + '): ' + JSON.stringify(c.message.content);
    assert(c.finish_reason === 'stop', 'finish_reason ' + c.finish_reason + where);
    let doc;
    try {
      doc = JSON.parse(c.message.content);
    } catch (e) {
      throw new Error('does not parse' + where);
    }
    const error = validate(schema, doc);
    assert(error === null, error + where);
  }
});

await check('sdk_parse_helper', async () => {
  // the SDK's own structured-output helper parses message.content into message.parsed
  const r = await client.chat.completions.parse({ model, messages: [{ role: 'user', content: 'A story, please' }],
    response_format: format, max_tokens: 400, seed: 9 });
  const parsed = r.choices[0].message.parsed;
  assert(parsed && validate(schema, parsed) === null, 'parsed ' + JSON.stringify(parsed));
});

await check('json_schema_streaming_n2', async () => {
  const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Tell me a story' }],
    response_format: format, max_tokens: 400, seed: 4, n: 2, stream: true });
  const text = ['', ''];
  const finish = [null, null];
  for await (const chunk of stream) {
    for (const c of chunk.choices) {
      text[c.index] += c.delta.content || '';
      if (c.finish_reason) finish[c.index] = c.finish_reason;
    }
  }
  for (const i of [0, 1]) {
    assert(finish[i] === 'stop', 'choice ' + i + ' finish ' + finish[i] + ': ' + text[i]);
    assert(validate(schema, JSON.parse(text[i])) === null, 'choice ' + i + ': ' + text[i]);
  }
});

await check('json_object', async () => {
  // Free-form JSON: the model writes story text into strings and rarely closes its object, so the bias leans on the
  // closing quote and brace (the ids from Juno's /v1/tokenize); bias comes after the grammar's mask, so every token
  // is still one the grammar allows, and every answer must be an object or, cut by max_tokens, the start of one.
  const lastToken = async (text) => {
    const r = await fetch(baseURL + '/tokenize', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ text }) });
    const ids = (await r.json()).tokens;
    return ids[ids.length - 1];
  };
  for (const t of ['{', '{ "a', '{"a":', '{"a": 1.', '{"a": [1, {"b": tru', '{"a":"x\\', '{"a":{}, "b":[]', '{"a":-', '{}']) {
    assert(isObjectPrefix(t), 'the scanner refuses ' + t);
  }
  for (const t of ['[', '{"a" 1', '{"a":1,}', '{,', '{"a":01', '{} x', '{"a":1]', 'x', '{"a":1.}', '{"a":-x']) {
    assert(!isObjectPrefix(t), 'the scanner takes ' + t);
  }
  const logit_bias = { [await lastToken('a"')]: 10, [await lastToken('a}')]: 10 };
  let complete = 0;
  for (const seed of [1, 2, 3, 4, 5]) {
    const r = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Answer in JSON' }],
      response_format: { type: 'json_object' }, max_tokens: 300, seed, logit_bias });
    const c = r.choices[0];
    const text = c.message.content;
    if (c.finish_reason === 'stop') {
      const doc = JSON.parse(text);
      assert(doc !== null && typeof doc === 'object' && !Array.isArray(doc), 'not an object: ' + text);
      complete++;
    } else {
      assert(c.finish_reason === 'length', 'finish ' + c.finish_reason);
      assert(isObjectPrefix(text), 'not the start of a JSON object: ' + text);
    }
  }
  assert(complete >= 3, 'only ' + complete + ' of 5 objects closed within 300 tokens');
});

// True if text can be continued into a JSON object: a small scanner of JSON's syntax, independent of Juno's grammar.
function isObjectPrefix(text) {
  let i = 0;
  const stack = [];
  let expect = 'object'; // what may come next: value, object (the root), key, colon, comma
  const ws = () => { while (i < text.length && ' \t\n\r'.includes(text[i])) i++; };
  ws();
  if (text[i] !== '{') return false;
  while (i < text.length) {
    ws();
    if (i >= text.length) return true;
    const ch = text[i];
    if (expect === 'comma') {
      const top = stack[stack.length - 1];
      if (ch === ',') { i++; expect = top === '{' ? 'key' : 'value'; continue; }
      if ((ch === '}' && top === '{') || (ch === ']' && top === '[')) { stack.pop(); i++; if (!stack.length) return i === text.length; continue; }
      return false;
    }
    if (expect === 'colon') { if (ch !== ':') return false; i++; expect = 'value'; continue; }
    if (ch === '"') {
      i++;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '\\') { i++; if (i < text.length && !'"\\/bfnrtu'.includes(text[i])) return false; }
        else if (text.charCodeAt(i) < 0x20) return false;
        i++;
      }
      if (i >= text.length) return true; // inside a string
      i++;
      expect = expect === 'key' ? 'colon' : 'comma';
      continue;
    }
    if (expect === 'key') {
      if (ch === '}' && text[i - 1] !== ',') { stack.pop(); i++; if (!stack.length) return i === text.length; expect = 'comma'; continue; }
      return false;
    }
    if (ch === '{') { stack.push('{'); i++; expect = 'key'; continue; }
    if (ch === '[') { stack.push('['); i++; ws(); if (text[i] === ']') { stack.pop(); i++; expect = 'comma'; } else expect = 'value'; continue; }
    if (expect === 'object') return false;
    const rest = text.slice(i);
    if (/^[-+.0-9eEa-z]+$/.test(rest)) { // the text ends inside a number or a literal
      return /^-?(0|[1-9][0-9]*)?(\.[0-9]*)?([eE][-+]?[0-9]*)?$/.test(rest) && /^-?[0-9]/.test(rest + '0')
        || ['true', 'false', 'null'].some((w) => w.startsWith(rest));
    }
    const m = /^(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?|true|false|null)/.exec(rest);
    if (!m) return false;
    i += m[0].length;
    expect = 'comma';
  }
  return true;
}

await check('grammar_field', async () => {
  // llama.cpp's GBNF "grammar" field: not in the SDK's types, sent as an extra body field
  const gbnf = 'root ::= "The " animal " is " color "." \nanimal ::= "dog" | "cat" | "bird"\ncolor ::= [a-z]{3,6}';
  const re = /^The (dog|cat|bird) is [a-z]{3,6}\.$/;
  const chat = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 40, seed: 3, grammar: gbnf });
  assert(re.test(chat.choices[0].message.content) && chat.choices[0].finish_reason === 'stop', 'chat: ' + JSON.stringify(chat.choices[0]));
  const comp = await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 40, seed: 3, grammar: gbnf });
  assert(re.test(comp.choices[0].text), 'completion: ' + JSON.stringify(comp.choices[0].text));
});

await check('errors_name_the_field', async () => {
  const cases = [
    [{ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'string', pattern: '^a' } } } }, 'response_format', 'pattern'],
    [{ grammar: 'root ::= missing' }, 'grammar', 'missing'],
    [{ grammar: 'root ::= "a"', response_format: { type: 'json_object' } }, 'grammar', 'together'],
  ];
  for (const [extra, param, word] of cases) {
    try {
      await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4, ...extra });
      throw new Error('no error for ' + JSON.stringify(extra));
    } catch (e) {
      assert(e instanceof OpenAI.BadRequestError, 'not a BadRequestError: ' + e);
      assert(e.param === param && e.message.includes(word), 'param ' + e.param + ', message ' + e.message);
    }
  }
});

process.exit(failed ? 1 : 0);
