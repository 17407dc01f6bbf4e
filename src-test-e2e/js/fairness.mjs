// Fairness run with the official openai SDK (not run by the suite; see src-test-e2e/README-load.md).
// Usage: node fairness.mjs BASE_URL MODEL [--big 4] [--n 16] [--max-tokens 2000] [--big-key KEY] [--small-key KEY]
//        [--warm-seconds 10] [--small 3]
// Starts --big streaming chat requests of n choices and max-tokens each (with --big-key), waits until every one of them
// streams and --warm-seconds more, then sends --small small requests one after another (max_tokens 8) with
// --small-key (another key) and then with --big-key (the same key), and measures each one's time to first token while
// the big ones still run. Prints one JSON line (with the server's running and queued sequences just before the small
// requests, from /q/metrics, to show the big ones were still there), then aborts the big requests.
import OpenAI from 'openai';

const [baseURL, model, ...rest] = process.argv.slice(2);
const opt = (name, def) => { const i = rest.indexOf('--' + name); return i >= 0 ? rest[i + 1] : def; };
const big = Number(opt('big', 4));
const n = Number(opt('n', 16));
const maxTokens = Number(opt('max-tokens', 2000));
const bigKey = opt('big-key', 'none');
const smallKey = opt('small-key', bigKey);
const warm = Number(opt('warm-seconds', 10));
const smalls = Number(opt('small', 3));
const client = (key) => new OpenAI({ baseURL, apiKey: key, maxRetries: 0, timeout: 600_000 });

const abort = new AbortController();
const bigTokens = new Array(big).fill(0);
const started = [];
const bigDone = [];
const t00 = performance.now();
for (let i = 0; i < big; i++) {
  let first;
  started.push(new Promise((r) => { first = r; }));
  bigDone.push((async () => {
    try {
      const stream = await client(bigKey).chat.completions.create({ model, stream: true, n, max_tokens: maxTokens, temperature: 1, seed: i,
        messages: [{ role: 'user', content: 'Tell me a very long story, number ' + i }] }, { signal: abort.signal });
      for await (const chunk of stream) {
        if (chunk.choices.length && chunk.choices[0].delta && chunk.choices[0].delta.content) {
          if (bigTokens[i]++ === 0) first(performance.now() - t00);
        }
      }
      first(-1);
      return 'finished';
    } catch (e) {
      first(-1);
      return abort.signal.aborted ? 'aborted' : String(e.status || e.message);
    }
  })());
}
const bigFirst = await Promise.all(started);
await new Promise((r) => setTimeout(r, warm * 1000));
async function serverLoad() {
  try {
    const text = await (await fetch(new URL(baseURL).origin + '/q/metrics', { headers: { authorization: 'Bearer ' + bigKey } })).text();
    const g = (name) => { const m = new RegExp('^' + name + '(?:\\{[^}]*\\})? ([0-9.e+]+)', 'm').exec(text); return m ? Number(m[1]) : null; };
    return { running: g('juno_batch_size'), queued: g('juno_queue_depth') };
  } catch (e) { return String(e.message); }
}
const loadBefore = await serverLoad();

async function small(key, i) {
  const t0 = performance.now();
  let ttft = null;
  const stream = await client(key).chat.completions.create({ model, stream: true, max_tokens: 8, temperature: 0,
    messages: [{ role: 'user', content: 'Hello ' + i }] });
  for await (const chunk of stream) {
    if (ttft === null && chunk.choices.length && chunk.choices[0].delta && chunk.choices[0].delta.content) ttft = performance.now() - t0;
  }
  return { ttft_ms: ttft === null ? null : Math.round(ttft), total_ms: Math.round(performance.now() - t0) };
}
const otherKey = [], sameKey = [];
for (let i = 0; i < smalls; i++) otherKey.push(await small(smallKey, i));
for (let i = 0; i < smalls; i++) sameKey.push(await small(bigKey, 100 + i));
const tokensWhileMeasured = [...bigTokens];
const loadAfter = await serverLoad();
abort.abort();
const ends = await Promise.all(bigDone);
console.log(JSON.stringify({ big, n, max_tokens: maxTokens, big_first_token_ms: bigFirst.map(Math.round),
  big_tokens_streamed: tokensWhileMeasured, server_before_small: loadBefore, server_after_small: loadAfter, small_other_key: otherKey, small_same_key: sameKey, big_ends: ends }));
process.exit(0);
