// Random cancellations with the official openai SDK (not run by the suite; see src-test-e2e/README-load.md).
// Usage: node cancellations.mjs BASE_URL MODEL [--streams 1000] [--concurrency 32] [--max-tokens 200] [--api-key KEY]
//        [--pid SERVER_PID] [--seed 1]
// Opens --streams streaming chat requests, --concurrency at a time, and aborts each at a random point: before the
// request is sent, before its first token, or after a random number of chunks (a few finish). Then waits for the server
// to settle and reads /v1/cluster/health: KV blocks in use, running and queued sequences must all be 0. With --pid it
// prints the server's threads, file descriptors and RSS before and after. Exit 0 only if nothing leaked.
import OpenAI from 'openai';
import { readFileSync, readdirSync } from 'node:fs';

const [baseURL, model, ...rest] = process.argv.slice(2);
const opt = (name, def) => { const i = rest.indexOf('--' + name); return i >= 0 ? rest[i + 1] : def; };
const total = Number(opt('streams', 1000));
const concurrency = Number(opt('concurrency', 32));
const maxTokens = Number(opt('max-tokens', 200));
const apiKey = opt('api-key', 'none');
const pid = opt('pid', null);
let seed = Number(opt('seed', 1)) >>> 0;
const random = () => { seed = (seed * 1664525 + 1013904223) >>> 0; return seed / 2 ** 32; }; // reproducible
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 120_000 });
const root = baseURL.replace(/\/v1\/?$/, '');

function proc() {
  if (!pid) return null;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return { threads: Number(/Threads:\s+(\d+)/.exec(status)[1]), fds: readdirSync(`/proc/${pid}/fd`).length,
      rss_mb: Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024) };
  } catch { return null; }
}
async function health() {
  const r = await fetch(root + '/v1/cluster/health', { headers: { Authorization: 'Bearer ' + apiKey } });
  const h = await r.json();
  return { kvBlocksUsed: h.kvBlocksUsed, runningSequences: h.runningSequences, queueDepth: h.queueDepth };
}

const before = proc();
const outcome = { before_send: 0, before_first_token: 0, mid_stream: 0, finished: 0, errors: {} };
let next = 0;
async function worker() {
  while (next < total) {
    const i = next++;
    const abort = new AbortController();
    const r = random();
    const mode = r < 0.1 ? 'before_send' : r < 0.3 ? 'before_first_token' : 'mid_stream';
    const afterChunks = 1 + Math.floor(random() * 60);
    try {
      if (mode === 'before_send') abort.abort();
      const promise = client.chat.completions.create({ model, stream: true, max_tokens: maxTokens, temperature: 1, seed: i,
        messages: [{ role: 'user', content: 'Story ' + i }] }, { signal: abort.signal });
      if (mode === 'before_first_token') setTimeout(() => abort.abort(), Math.floor(random() * 5));
      const stream = await promise;
      let chunks = 0;
      for await (const chunk of stream) {
        if (mode === 'mid_stream' && ++chunks >= afterChunks) { abort.abort(); break; }
      }
      if (abort.signal.aborted) outcome[mode]++; else outcome.finished++;
    } catch (e) {
      if (abort.signal.aborted || (e && e.name === 'APIUserAbortError')) outcome[mode]++;
      else { const k = String(e && (e.status || e.name)); outcome.errors[k] = (outcome.errors[k] || 0) + 1; }
    }
  }
}
const t0 = performance.now();
await Promise.all(Array.from({ length: concurrency }, worker));
const seconds = Math.round((performance.now() - t0) / 100) / 10;
let h = await health();
for (let i = 0; i < 100 && (h.kvBlocksUsed || h.runningSequences || h.queueDepth); i++) {
  await new Promise((r) => setTimeout(r, 100));
  h = await health();
}
await new Promise((r) => setTimeout(r, 2000)); // let closed connections' threads go
const after = proc();
const leaked = Boolean(h.kvBlocksUsed || h.runningSequences || h.queueDepth);
console.log(JSON.stringify({ streams: total, concurrency, seconds, outcome, health_after: h, server_before: before, server_after: after, leaked }));
process.exit(leaked || Object.keys(outcome.errors).length ? 1 : 0);
