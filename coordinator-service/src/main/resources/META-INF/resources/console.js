// Juno web console: one static page, no external resources. Streams answers from /v1/chat/completions
// (fetch + a small SSE parser) and shows generation speed.
(function () {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const log = $('log'), prompt = $('prompt'), send = $('send'), stop = $('stop'), stats = $('stats');
  let model = null;
  let history = [];
  let controller = null;
  const KEY = 'juno.apiKey';

  // With API keys on the server every /v1 call needs "Authorization: Bearer KEY": the console asks once, on the
  // first 401, and keeps the key in this browser's localStorage (a wrong key is asked for again).
  async function api(path, init) {
    for (let attempt = 0; ; attempt++) {
      const headers = Object.assign({}, (init && init.headers) || {});
      const key = localStorage.getItem(KEY);
      if (key) headers['Authorization'] = 'Bearer ' + key;
      const r = await fetch(path, Object.assign({}, init, { headers }));
      if (r.status !== 401 || attempt >= 2) return r;
      const entered = window.prompt(key ? 'That API key was refused. API key:' : 'This server needs an API key:');
      if (!entered) return r;
      localStorage.setItem(KEY, entered.trim());
    }
  }

  function bubble(role, text) {
    const div = document.createElement('div');
    div.className = 'msg ' + role;
    div.textContent = text;
    log.appendChild(div);
    log.scrollTop = log.scrollHeight;
    return div;
  }

  async function loadModel() {
    try {
      const r = await api('/v1/models');
      if (r.status === 401) {
        $('model').textContent = 'an API key is needed (reload to enter one)';
        return;
      }
      const body = await r.json();
      if (body.data && body.data.length > 0) {
        model = body.data[0].id;
        $('model').textContent = model + ' (context ' + body.data[0].context_length + ')';
      } else {
        $('model').textContent = 'model still loading…';
        setTimeout(loadModel, 1000);
      }
    } catch (e) {
      $('model').textContent = 'server unreachable';
      setTimeout(loadModel, 2000);
    }
  }

  // Yields the JSON payload of each "data:" event of an SSE byte stream.
  async function* events(body) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        for (const line of event.split('\n')) {
          if (line.startsWith('data:')) yield line.slice(5).trim();
        }
      }
    }
  }

  async function ask(text) {
    history.push({ role: 'user', content: text });
    bubble('user', text);
    const out = bubble('assistant', '');
    send.disabled = true;
    stop.disabled = false;
    controller = new AbortController();
    const started = performance.now();
    let first = 0, tokens = 0, answer = '';
    try {
      const r = await api('/v1/chat/completions', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Accept': 'text/event-stream' },
        body: JSON.stringify({
          model: model, messages: history, stream: true, stream_options: { include_usage: true },
          max_tokens: Number($('max-tokens').value) || 128,
          temperature: Number($('temperature').value)
        }),
        signal: controller.signal
      });
      if (!r.ok) {
        const err = await r.json().catch(() => ({}));
        throw new Error((err.error && err.error.message) || ('HTTP ' + r.status));
      }
      for await (const data of events(r.body)) {
        if (data === '[DONE]') break;
        const chunk = JSON.parse(data);
        if (chunk.error) throw new Error(chunk.error.message);
        if (chunk.usage) tokens = chunk.usage.completion_tokens;
        for (const c of chunk.choices || []) {
          const piece = c.delta && c.delta.content;
          if (piece) {
            if (!first) first = performance.now();
            tokens++;
            answer += piece;
            out.textContent = answer;
            log.scrollTop = log.scrollHeight;
            const secs = (performance.now() - first) / 1000;
            stats.textContent = tokens + ' tokens' + (secs > 0 ? ', ' + (tokens / secs).toFixed(1) + ' tokens/s' : '');
          }
        }
      }
      const secs = (performance.now() - (first || started)) / 1000;
      stats.textContent = tokens + ' tokens, ' + (secs > 0 ? (tokens / secs).toFixed(1) : '–') + ' tokens/s, first token after '
        + ((first || performance.now()) - started).toFixed(0) + ' ms';
      history.push({ role: 'assistant', content: answer });
    } catch (e) {
      if (e.name !== 'AbortError') bubble('error', String(e.message || e));
      history.pop();
    } finally {
      send.disabled = false;
      stop.disabled = true;
      controller = null;
      out.dataset.done = 'true';
    }
  }

  $('chat').addEventListener('submit', (e) => {
    e.preventDefault();
    const text = prompt.value.trim();
    if (!text || !model || controller) return;
    prompt.value = '';
    ask(text);
  });
  prompt.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      $('chat').requestSubmit();
    }
  });
  stop.addEventListener('click', () => controller && controller.abort());
  $('clear').addEventListener('click', () => { history = []; log.textContent = ''; stats.textContent = ''; });
  loadModel();
})();
