// Tool calling against a running Juno with the official openai SDK. Usage: node tools-check.mjs BASE_URL MODEL
// Prints one line per check: "ok NAME" or "FAIL NAME: why"; exits 1 if any check failed.
// The bundled model is tiny and random: it would never write a call by itself, so the calls here are forced
// (tool_choice names a function or is "required"), which constrains decoding to the functions' schemas.
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

// Small schemas, no descriptions: stories260K has a 512-token context and spends about one token per character of
// JSON (ToolPromptTest checks that this prompt leaves room for a call).
const weatherSchema = {
  type: 'object',
  properties: { city: { type: 'string', maxLength: 6 }, unit: { enum: ['c', 'f'] } },
  required: ['city', 'unit'],
};
const timeSchema = { type: 'object', properties: { zone: { enum: ['UTC', 'CET'] } }, required: ['zone'] };
const tools = [
  { type: 'function', function: { name: 'get_weather', parameters: weatherSchema } },
  { type: 'function', function: { name: 'get_time', parameters: timeSchema } },
];
const messages = [{ role: 'user', content: 'Weather in Paris?' }];
const base = { model, messages, tools, max_tokens: 120, temperature: 1.0, seed: 11 };

function validWeather(args) {
  return typeof args.city === 'string' && args.city.length <= 6 && ['c', 'f'].includes(args.unit) && Object.keys(args).length === 2;
}

await check('run_tools_round_trip', async () => {
  const calls = [];
  const runner = client.chat.completions.runTools({
    ...base,
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
    tools: [
      {
        type: 'function',
        function: {
          name: 'get_weather', parameters: weatherSchema, parse: JSON.parse,
          function: async (args) => { calls.push(args); return { temperature: 21, unit: args.unit }; },
        },
      },
    ],
  });
  await runner.done();
  assert(calls.length === 1, 'the helper called the function ' + calls.length + ' times');
  assert(validWeather(calls[0]), 'arguments do not match the schema: ' + JSON.stringify(calls[0]));
  const msgs = runner.messages;
  const assistant = msgs.find((m) => m.role === 'assistant' && m.tool_calls && m.tool_calls.length);
  assert(assistant, 'no assistant message with tool_calls: ' + JSON.stringify(msgs));
  assert(assistant.content === null, 'content of a calls-only answer is ' + JSON.stringify(assistant.content));
  assert(/^call_[A-Za-z0-9]{24}$/.test(assistant.tool_calls[0].id), 'id ' + assistant.tool_calls[0].id);
  const tool = msgs.find((m) => m.role === 'tool');
  assert(tool && tool.tool_call_id === assistant.tool_calls[0].id, 'tool message answers the call');
  const first = (await runner.allChatCompletions())[0];
  assert(first.choices[0].finish_reason === 'tool_calls', 'finish_reason ' + first.choices[0].finish_reason);
  // the next turn carries the call and its result back: accepted, and answered in plain text
  const next = await client.chat.completions.create({ model, messages: msgs, tools, tool_choice: 'none', max_tokens: 16, temperature: 0 });
  assert(typeof next.choices[0].message.content === 'string' && !next.choices[0].message.tool_calls, 'next turn ' + JSON.stringify(next.choices[0]));
});

await check('required_calls_a_declared_function', async () => {
  const r = await client.chat.completions.create({ ...base, tool_choice: 'required', parallel_tool_calls: false });
  const m = r.choices[0].message;
  assert(r.choices[0].finish_reason === 'tool_calls', 'finish_reason ' + r.choices[0].finish_reason);
  assert(m.tool_calls.length === 1, 'parallel_tool_calls false: ' + m.tool_calls.length + ' calls');
  const call = m.tool_calls[0];
  assert(call.type === 'function' && ['get_weather', 'get_time'].includes(call.function.name), 'call ' + JSON.stringify(call));
  const args = JSON.parse(call.function.arguments);
  assert(call.function.name === 'get_weather' ? validWeather(args) : ['UTC', 'CET'].includes(args.zone), 'arguments ' + call.function.arguments);
});

function shape(completion) {
  const m = completion.choices[0].message;
  return JSON.stringify({
    content: m.content || null,
    calls: (m.tool_calls || []).map((c) => [c.type, c.function.name, c.function.arguments]),
    finish: completion.choices[0].finish_reason,
  });
}

await check('stream_reassembles_to_blocking', async () => {
  const params = { ...base, tool_choice: 'required' };
  const blocking = await client.chat.completions.create(params);
  assert((blocking.choices[0].message.tool_calls || []).length >= 1, 'blocking answer has no call');
  // the SDK's own accumulation of the deltas
  const stream = client.chat.completions.stream(params);
  const raw = [];
  stream.on('chunk', (c) => raw.push(c));
  const assembled = await stream.finalChatCompletion();
  assert(shape(assembled) === shape(blocking), 'streamed ' + shape(assembled) + ' != blocking ' + shape(blocking));
  // and the deltas are shaped as OpenAI's: a call opens with index, id, type, name and empty arguments, then fragments
  const deltas = raw.flatMap((c) => (c.choices[0] && c.choices[0].delta.tool_calls) || []);
  const opened = new Set();
  for (const d of deltas) {
    if (d.id) {
      assert(!opened.has(d.index) && d.type === 'function' && d.function.name && d.function.arguments === '', 'opening delta ' + JSON.stringify(d));
      opened.add(d.index);
    } else {
      assert(opened.has(d.index) && !d.function.name && typeof d.function.arguments === 'string', 'fragment ' + JSON.stringify(d));
    }
  }
  assert(opened.size === blocking.choices[0].message.tool_calls.length, 'calls opened ' + opened.size);
  assert(deltas.length > opened.size, 'arguments come as fragments after the opening delta');
});

await check('streaming_run_tools', async () => {
  const args = [];
  const runner = client.chat.completions.runTools({
    ...base,
    stream: true,
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
    tools: [{ type: 'function', function: { name: 'get_weather', parameters: weatherSchema, parse: JSON.parse, function: async (a) => { args.push(a); return 'sunny'; } } }],
  });
  await runner.done();
  assert(args.length === 1 && validWeather(args[0]), 'streamed helper call ' + JSON.stringify(args));
  // the same request blocking (runTools sends the one tool it was given): the same seed gives the same call
  const blocking = await client.chat.completions.create({
    ...base, tools: [{ type: 'function', function: { name: 'get_weather', parameters: weatherSchema } }],
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
  });
  assert(JSON.stringify(JSON.parse(blocking.choices[0].message.tool_calls[0].function.arguments)) === JSON.stringify(args[0]),
    'same seed, streamed ' + JSON.stringify(args[0]) + ' != blocking ' + blocking.choices[0].message.tool_calls[0].function.arguments);
});

await check('tool_choice_none_is_plain_text', async () => {
  const r = await client.chat.completions.create({ ...base, tool_choice: 'none', max_tokens: 16 });
  assert(typeof r.choices[0].message.content === 'string' && !r.choices[0].message.tool_calls, JSON.stringify(r.choices[0]));
  assert(['stop', 'length'].includes(r.choices[0].finish_reason), 'finish_reason ' + r.choices[0].finish_reason);
});

process.exit(failed ? 1 : 0);
