// A client that reads nothing (not run by the suite; see src-test-e2e/README-load.md).
// Usage: node noread.mjs BASE_URL MODEL [--n 16] [--max-tokens 2000] [--seconds 40] [--pid SERVER_PID] [--api-key KEY]
// Sends one streaming chat request of n choices and never reads its answer (the socket is paused, so the kernel's
// buffers fill and the server must hold or drop what it writes), samples the server's RSS and its running sequences
// (/q/metrics juno_batch_size) each second, and prints one JSON line: RSS before, peak and after, and the second at which
// the server stopped generating for it (its output bound reached and the stream cut off). Exit 1 if it never stopped.
import http from 'node:http';
import { readFileSync } from 'node:fs';

const [baseURL, model, ...rest] = process.argv.slice(2);
const opt = (name, def) => { const i = rest.indexOf('--' + name); return i >= 0 ? rest[i + 1] : def; };
const n = Number(opt('n', 16)), maxTokens = Number(opt('max-tokens', 2000)), seconds = Number(opt('seconds', 40));
const pid = opt('pid', null), key = opt('api-key', 'none');
const rss = () => { try { return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024; } catch { return null; } };
const origin = new URL(baseURL).origin;
async function running() {
  const text = await (await fetch(origin + '/q/metrics', { headers: { authorization: 'Bearer ' + key } })).text();
  const m = /^juno_batch_size(?:\{[^}]*\})? ([0-9.e+]+)/m.exec(text);
  return m ? Number(m[1]) : null;
}
const before = rss();
const body = JSON.stringify({ model, stream: true, n, max_tokens: maxTokens, temperature: 1,
  messages: [{ role: 'user', content: 'Tell me a very long story' }] });
const req = http.request(baseURL.replace(/\/$/, '') + '/chat/completions', { method: 'POST',
  headers: { 'content-type': 'application/json', authorization: 'Bearer ' + key, 'content-length': Buffer.byteLength(body) } },
(res) => { res.pause(); }); // never read a byte of the answer
req.on('error', () => {});
req.end(body);
let peak = before || 0, stoppedAt = null, sawRunning = false;
for (let s = 1; s <= seconds; s++) {
  await new Promise((r) => setTimeout(r, 1000));
  const r = rss();
  if (r) peak = Math.max(peak, r);
  const k = await running();
  if (k > 0) sawRunning = true;
  if (sawRunning && k === 0 && stoppedAt === null) { stoppedAt = s; break; }
}
const after = rss();
console.log(JSON.stringify({ n, max_tokens: maxTokens, rss_before: before, rss_peak: peak, rss_after: after,
  generation_stopped_after_s: stoppedAt }));
req.destroy();
process.exit(stoppedAt === null ? 1 : 0);
