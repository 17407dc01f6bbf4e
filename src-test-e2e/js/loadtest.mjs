// Load test with the official openai SDK (not run by the suite; see src-test-e2e/README-load.md).
// Usage: node loadtest.mjs BASE_URL MODEL [--clients 64] [--seconds 60] [--max-tokens 64] [--api-key KEY] [--pid SERVER_PID]
//        [--events FILE]
// N clients stream chat completions in a loop for the given time. Prints one JSON line: requests, completed, errors by
// kind (429s apart: they are the designed back-pressure, and a client waits Retry-After before trying again), tokens,
// p50/p99 time to first token and between tokens, the longest request and how many were still open 150 s after time
// was up (hung), and with --pid the server's peak RSS. With --events, one JSON line per failed request is appended to
// FILE: {start, last, error, kind} in epoch milliseconds (its start, its last token, the error), for faults.sh.
import OpenAI from 'openai';
import { readFileSync, appendFileSync } from 'node:fs';

const [baseURL, model, ...rest] = process.argv.slice(2);
const opt = (name, def) => { const i = rest.indexOf('--' + name); return i >= 0 ? rest[i + 1] : def; };
const clients = Number(opt('clients', 64));
const seconds = Number(opt('seconds', 60));
const maxTokens = Number(opt('max-tokens', 64));
const pid = opt('pid', null);
const events = opt('events', null);
const client = new OpenAI({ baseURL, apiKey: opt('api-key', 'none'), maxRetries: 0, timeout: 120_000 });
const end = Date.now() + seconds * 1000;
const ttft = [], gaps = [], errors = {};
let requests = 0, completed = 0, tokens = 0, limited = 0, peakRss = 0, longest = 0, open = 0;

function rss() {
  if (!pid) return;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    if (m) peakRss = Math.max(peakRss, Number(m[1]) * 1024);
  } catch { /* gone */ }
}
const sampler = setInterval(rss, 250);

async function loop(id) {
  while (Date.now() < end) {
    requests++;
    open++;
    const t0 = performance.now();
    const start = Date.now();
    let last = 0, lastWall = 0;
    try {
      const stream = await client.chat.completions.create({ model, stream: true, max_tokens: maxTokens, temperature: 1, seed: id,
        messages: [{ role: 'user', content: 'Tell me a story number ' + id }] });
      for await (const chunk of stream) {
        const piece = chunk.choices[0] && chunk.choices[0].delta.content;
        if (!piece) continue;
        const now = performance.now();
        if (!last) ttft.push(now - t0); else gaps.push(now - last);
        last = now;
        lastWall = Date.now();
        tokens++;
      }
      completed++;
    } catch (e) {
      if (events && !(e instanceof OpenAI.RateLimitError)) {
        appendFileSync(events, JSON.stringify({ start, last: lastWall || null, error: Date.now(),
          kind: String(e && (e.status || e.name || 'error')) }) + '\n');
      }
      if (e instanceof OpenAI.RateLimitError) {
        limited++;
        const after = Number((e.headers && e.headers.get && e.headers.get('retry-after')) || 1);
        await new Promise((r) => setTimeout(r, after * 1000));
      } else {
        const kind = e && (e.status || e.name || 'error');
        errors[kind] = (errors[kind] || 0) + 1;
      }
    } finally {
      open--;
      longest = Math.max(longest, performance.now() - t0);
    }
  }
}

const pct = (a, p) => { if (!a.length) return null; const s = [...a].sort((x, y) => x - y); return Math.round(s[Math.min(s.length - 1, Math.ceil(p / 100 * s.length) - 1)] * 10) / 10; };
const all = Promise.all(Array.from({ length: clients }, (_, i) => loop(i)));
// a request still open 150 s after time is up (the SDK's own timeout is 120 s) has hung: count it, do not wait for it
const stillOpen = await Promise.race([all.then(() => 0), new Promise((r) => setTimeout(() => r(open), seconds * 1000 + 150_000))]);
clearInterval(sampler);
rss();
console.log(JSON.stringify({ clients, seconds, requests, completed, rate_limited_429: limited, errors, tokens,
  tokens_per_s: Math.round(tokens / seconds), ttft_ms: { p50: pct(ttft, 50), p99: pct(ttft, 99) },
  inter_token_ms: { p50: pct(gaps, 50), p99: pct(gaps, 99) }, longest_request_ms: Math.round(longest), hung: stillOpen,
  peak_rss_bytes: pid ? peakRss : undefined }));
process.exit(Object.keys(errors).length || stillOpen ? 1 : 0);
