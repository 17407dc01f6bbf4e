// Juno web console: one static page, nothing loaded from outside the server. Streams answers from
// /v1/chat/completions (fetch + a small SSE parser), renders them as markdown (marked) through an HTML sanitizer
// (DOMPurify), both shipped as webjars, and keeps the conversation and the settings in localStorage.
(function () {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const log = $('log'), prompt = $('prompt'), send = $('send'), stop = $('stop'), stats = $('stats'), picker = $('model');
  const KEY = 'juno.apiKey', CONVERSATION = 'juno.conversation', SETTINGS = 'juno.settings';
  const FIELDS = ['system', 'temperature', 'top-p', 'top-k', 'seed', 'max-tokens', 'json-mode', 'json-schema'];
  const DEFAULTS = {};
  // messages: {role: 'user'|'assistant'|'error', content, meta?: {tokens, tokensPerSecond, firstTokenMs, finish, json, model}}
  let conversation = [];
  let controller = null;

  // ---- storage ----------------------------------------------------------------------------------------------------
  function load(name, fallback) {
    try {
      const v = JSON.parse(localStorage.getItem(name));
      return v == null ? fallback : v;
    } catch (e) {
      return fallback;
    }
  }
  function save() {
    try {
      localStorage.setItem(CONVERSATION, JSON.stringify(conversation));
    } catch (e) {
      // full or disabled storage: the conversation still works, it just is not kept
    }
  }
  function saveSettings() {
    const s = {};
    for (const f of FIELDS) s[f] = $(f).type === 'checkbox' ? $(f).checked : $(f).value;
    s.model = picker.value || load(SETTINGS, {}).model;
    localStorage.setItem(SETTINGS, JSON.stringify(s));
    showMode();
  }
  function restoreSettings() {
    for (const f of FIELDS) DEFAULTS[f] = $(f).type === 'checkbox' ? $(f).checked : $(f).value;
    const s = load(SETTINGS, {});
    for (const f of FIELDS) {
      if (!(f in s)) continue;
      if ($(f).type === 'checkbox') $(f).checked = !!s[f]; else $(f).value = s[f];
    }
    $('api-key').value = localStorage.getItem(KEY) || '';
    showMode();
  }
  function showMode() {
    $('mode').textContent = !$('json-mode').checked ? '' : $('json-schema').value.trim() ? 'JSON schema' : 'JSON mode';
  }

  // ---- the API ----------------------------------------------------------------------------------------------------
  // With API keys on the server every /v1 call needs "Authorization: Bearer KEY": the console asks once, on the
  // first 401, and keeps the key in this browser's localStorage (a wrong key is asked for again). The key can also be
  // entered or changed in the settings.
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
      $('api-key').value = entered.trim();
    }
  }

  async function loadModels() {
    try {
      const r = await api('/v1/models');
      if (r.status === 401) {
        picker.replaceChildren(new Option('an API key is needed (enter it in Settings)', ''));
        return;
      }
      const body = await r.json();
      if (!body.data || body.data.length === 0) {
        picker.replaceChildren(new Option('model still loading…', ''));
        setTimeout(loadModels, 1000);
        return;
      }
      const wanted = load(SETTINGS, {}).model;
      picker.replaceChildren(...body.data.map((m) => {
        const label = m.id + (m.parent ? ' (adapter of ' + m.parent + ')' : '') + ' (context ' + m.context_length + ')';
        return new Option(label, m.id, false, m.id === wanted);
      }));
      if (!body.data.some((m) => m.id === wanted)) picker.selectedIndex = 0;
    } catch (e) {
      picker.replaceChildren(new Option('server unreachable, retrying…', ''));
      setTimeout(loadModels, 2000);
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

  function number(id) {
    const v = $(id).value.trim();
    return v === '' || !isFinite(Number(v)) ? undefined : Number(v);
  }

  function request() {
    const messages = [];
    const system = $('system').value.trim();
    if (system) messages.push({ role: 'system', content: system });
    for (const m of conversation) {
      if (m.role === 'user' || m.role === 'assistant') messages.push({ role: m.role, content: m.content });
    }
    const body = {
      model: picker.value || undefined, messages, stream: true, stream_options: { include_usage: true },
      max_tokens: number('max-tokens') || 256, temperature: number('temperature'), top_p: number('top-p'),
      top_k: number('top-k'), seed: number('seed')
    };
    if ($('json-mode').checked) body.response_format = responseFormat();
    return body;
  }

  // JSON mode alone asks for any JSON object. With a schema in the settings the answer must follow it: strings the
  // schema bounds (maxLength, enum) end where it says, so even a small model's answer closes and parses.
  function responseFormat() {
    const text = $('json-schema').value.trim();
    if (!text) return { type: 'json_object' };
    let schema;
    try {
      schema = JSON.parse(text);
    } catch (e) {
      throw new Error('The JSON schema in the settings is not valid JSON (' + e.message + '); fix it or empty the field.');
    }
    if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
      throw new Error('The JSON schema in the settings must be a JSON object, like {"type": "object", ...}.');
    }
    return { type: 'json_schema', json_schema: { name: 'console', strict: true, schema } };
  }

  // ---- rendering --------------------------------------------------------------------------------------------------
  const rendering = typeof window.marked !== 'undefined' && typeof window.DOMPurify !== 'undefined' && DOMPurify.isSupported;
  if (rendering) {
    marked.setOptions({ gfm: true, breaks: true });
    // links open in a new tab and cannot reach back into the console
    DOMPurify.addHook('afterSanitizeAttributes', (node) => {
      if (node.tagName === 'A') {
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer');
      }
    });
  }
  // Model output is untrusted: markdown becomes HTML, then only harmless elements and attributes are kept (no
  // scripts, event handlers, styles, forms or frames; no images either, as they would load from anywhere).
  const PURIFY = {
    USE_PROFILES: { html: true },
    FORBID_TAGS: ['img', 'picture', 'video', 'audio', 'source', 'style', 'form', 'input', 'button', 'textarea', 'select', 'iframe'],
    FORBID_ATTR: ['style', 'srcset']
  };

  function renderInto(el, m) {
    if (m.meta && m.meta.json) {
      // JSON mode: the answer as it came, pretty-printed when it parses
      const pre = document.createElement('pre');
      pre.className = 'json';
      const code = document.createElement('code');
      code.className = 'language-json';
      let text = m.content;
      try { text = JSON.stringify(JSON.parse(m.content), null, 2); } catch (e) { /* shown as it came */ }
      code.textContent = text;
      pre.appendChild(code);
      el.replaceChildren(pre);
    } else if (rendering) {
      el.innerHTML = DOMPurify.sanitize(marked.parse(m.content), PURIFY);
    } else {
      el.textContent = m.content; // the libraries did not load: plain text, never unsanitized HTML
    }
    for (const pre of el.querySelectorAll('pre')) {
      const b = button('Copy', 'copy-code', () => copy(pre.querySelector('code') ? pre.querySelector('code').textContent : pre.textContent, b));
      b.setAttribute('aria-label', 'Copy code');
      pre.appendChild(b);
    }
  }

  function button(text, cls, onClick) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = cls;
    b.textContent = text;
    b.addEventListener('click', onClick);
    return b;
  }

  async function copy(text, b) {
    try {
      await navigator.clipboard.writeText(text);
    } catch (e) {
      const t = document.createElement('textarea');
      t.value = text;
      document.body.appendChild(t);
      t.select();
      document.execCommand('copy');
      t.remove();
    }
    const was = b.textContent;
    b.textContent = 'Copied';
    setTimeout(() => { b.textContent = was; }, 1200);
  }

  const FINISH = {
    stopped: ['stopped', 'Stopped by you'],
    length: ['cut off', 'The answer reached the max tokens limit (or the context is full)'],
    tool_calls: ['tool call', 'The model asked for a tool'],
    content_filter: ['filtered', 'Cut by a content filter']
  };

  function metaLine(m) {
    const parts = [];
    const x = m.meta || {};
    if (x.tokens != null) parts.push(x.tokens + (x.tokens === 1 ? ' token' : ' tokens'));
    if (x.tokensPerSecond != null) parts.push(x.tokensPerSecond.toFixed(1) + ' tokens/s');
    if (x.firstTokenMs != null) parts.push('first token ' + x.firstTokenMs + ' ms');
    if (x.model) parts.push(x.model);
    return parts.join(' · ');
  }

  function bubble(m, index) {
    const div = document.createElement('div');
    div.className = 'msg ' + m.role;
    div.dataset.index = index;
    const content = document.createElement('div');
    content.className = 'content';
    div.appendChild(content);
    if (m.role === 'assistant') {
      div.dataset.raw = m.content;
      renderInto(content, m);
      const foot = document.createElement('div');
      foot.className = 'meta';
      const finish = m.meta && FINISH[m.meta.finish];
      if (finish) {
        const badge = document.createElement('span');
        badge.className = 'badge finish-' + m.meta.finish;
        badge.textContent = finish[0];
        badge.title = finish[1];
        foot.appendChild(badge);
        div.dataset.finish = m.meta.finish;
      }
      if (m.meta && m.meta.json) {
        const badge = document.createElement('span');
        let valid = true;
        try { JSON.parse(m.content); } catch (e) { valid = false; }
        badge.className = 'badge ' + (valid ? 'json-valid' : 'json-invalid');
        badge.textContent = valid ? 'valid JSON' : 'not valid JSON';
        foot.appendChild(badge);
      }
      const info = document.createElement('span');
      info.className = 'stats';
      info.textContent = metaLine(m);
      foot.appendChild(info);
      if (m.streaming) {
        div.appendChild(foot);
        div.dataset.done = 'false';
        return div;
      }
      const copyButton = button('Copy', 'copy', () => copy(m.content, copyButton));
      copyButton.setAttribute('aria-label', 'Copy the answer');
      foot.appendChild(copyButton);
      if (index === conversation.length - 1) {
        const again = button('Regenerate', 'regenerate', regenerate);
        again.setAttribute('aria-label', 'Regenerate the answer');
        again.disabled = !!controller;
        foot.appendChild(again);
      }
      div.appendChild(foot);
      div.dataset.done = 'true';
    } else if (m.role === 'error') {
      div.setAttribute('role', 'alert');
      content.textContent = m.content;
      if (index === conversation.length - 1) {
        const again = button('Retry', 'regenerate', regenerate);
        again.disabled = !!controller;
        div.appendChild(again);
      }
    } else {
      content.textContent = m.content; // the user's own text, shown as typed
    }
    return div;
  }

  function renderAll() {
    const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
    log.replaceChildren(...conversation.map(bubble));
    if (conversation.length === 0) {
      const p = document.createElement('p');
      p.className = 'empty muted';
      p.textContent = 'Ask something. Answers stream in as they are generated; markdown and code blocks are shown formatted.';
      log.appendChild(p);
    }
    if (atBottom || controller) log.scrollTop = log.scrollHeight;
  }

  // ---- a turn -----------------------------------------------------------------------------------------------------
  function errorText(status, err) {
    const message = err && err.error && err.error.message;
    return (status === 400 ? 'The server refused the request: ' : 'Error ' + status + ': ') + (message || 'no details');
  }

  async function answer() {
    let body;
    try {
      body = request();
    } catch (e) { // a setting the console can judge itself (the JSON schema): said here, nothing is sent
      conversation.push({ role: 'error', content: e.message });
      save();
      renderAll();
      return;
    }
    const m = { role: 'assistant', content: '', streaming: true, meta: { json: !!body.response_format, model: body.model } };
    const mine = new AbortController();
    controller = mine;
    const signal = mine.signal;
    send.disabled = true;
    stop.disabled = false;
    conversation.push(m);
    renderAll();
    const el = log.lastElementChild;
    const content = el.querySelector('.content');
    el.setAttribute('aria-busy', 'true');
    const started = performance.now();
    let first = 0, lastPiece = 0, counted = 0, usage = null, finish = null, drawn = 0, pending = null;
    const draw = () => {
      pending = null;
      drawn = performance.now();
      el.dataset.raw = m.content;
      renderInto(content, m);
      log.scrollTop = log.scrollHeight;
    };
    try {
      const r = await api('/v1/chat/completions', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Accept': 'text/event-stream' },
        body: JSON.stringify(body),
        signal
      });
      if (!r.ok) throw Object.assign(new Error(errorText(r.status, await r.json().catch(() => null))), { server: true });
      for await (const data of events(r.body)) {
        if (signal.aborted) break; // what is already buffered is not shown once Stop was pressed
        if (data === '[DONE]') break;
        const chunk = JSON.parse(data);
        if (chunk.error) throw Object.assign(new Error('The server stopped with an error: ' + chunk.error.message), { server: true });
        if (chunk.usage) usage = chunk.usage;
        if (chunk.model) m.meta.model = chunk.model; // the model (or adapter) that answered, as the server names it
        for (const c of chunk.choices || []) {
          if (c.finish_reason) finish = c.finish_reason;
          const piece = c.delta && c.delta.content;
          if (piece) {
            if (!first) first = performance.now();
            lastPiece = performance.now();
            counted++;
            m.content += piece;
            // redraw at most every 30 ms: markdown is parsed again on each draw
            if (performance.now() - drawn > 30) draw();
            else if (!pending) pending = setTimeout(draw, 30);
            const live = rate(counted, started, first, lastPiece);
            stats.textContent = counted + ' tokens' + (live != null ? ', ' + live.toFixed(1) + ' tokens/s' : '');
          }
        }
      }
      if (signal.aborted) finish = 'stopped';
    } catch (e) {
      if (e.name === 'AbortError' || signal.aborted) {
        finish = 'stopped';
      } else {
        if (!m.content) conversation.pop();
        conversation.push({ role: 'error', content: e.server ? e.message : 'Could not reach the server: ' + (e.message || e) });
      }
    } finally {
      if (pending) clearTimeout(pending);
      const tokens = usage ? usage.completion_tokens : counted;
      m.streaming = false;
      m.meta.finish = finish;
      m.meta.tokens = tokens;
      m.meta.firstTokenMs = first ? Math.round(first - started) : null;
      m.meta.tokensPerSecond = rate(tokens, started, first, lastPiece);
      if (controller === mine) { // (New chat may have dropped this answer and started another)
        stats.textContent = tokens + ' tokens, ' + (m.meta.tokensPerSecond != null ? m.meta.tokensPerSecond.toFixed(1) : '–')
          + ' tokens/s, first token after ' + (first ? m.meta.firstTokenMs : '–') + ' ms';
        controller = null;
        send.disabled = false;
        stop.disabled = true;
      }
      save();
      if (conversation.includes(m) || controller === null) renderAll();
      // one line for screen readers per answer, instead of every streamed piece
      const lastMessage = conversation[conversation.length - 1];
      if (lastMessage) {
        $('announce').textContent = lastMessage.role === 'error' ? lastMessage.content
          : 'Answer ' + (finish === 'stopped' ? 'stopped' : finish === 'length' ? 'cut off at the token limit' : 'finished') + ', ' + tokens + ' tokens.';
      }
    }
  }

  // Generation speed as this browser saw it: the tokens after the first over the time they took to arrive; when they
  // came within 50 ms (a short answer arrives in a few network reads) that window says nothing, so the whole request's
  // time is used instead.
  function rate(tokens, started, first, last) {
    if (!first || tokens < 1) return null;
    const span = (last - first) / 1000;
    if (tokens > 1 && span >= 0.05) return (tokens - 1) / span;
    const whole = (last - started) / 1000;
    return whole > 0 ? tokens / whole : null;
  }

  function ask(text) {
    while (conversation.length && conversation[conversation.length - 1].role === 'error') conversation.pop();
    conversation.push({ role: 'user', content: text });
    save();
    return answer();
  }

  function regenerate() {
    if (controller) return;
    while (conversation.length && conversation[conversation.length - 1].role !== 'user') conversation.pop();
    if (conversation.length) answer();
  }

  // ---- wiring -----------------------------------------------------------------------------------------------------
  $('chat').addEventListener('submit', (e) => {
    e.preventDefault();
    const text = prompt.value.trim();
    if (!text || controller) return;
    if (!picker.value) {
      stats.textContent = $('announce').textContent = 'No model to send to yet: ' + picker.textContent;
      return;
    }
    prompt.value = '';
    ask(text);
  });
  prompt.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      $('chat').requestSubmit();
    }
  });
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && controller) controller.abort();
  });
  stop.addEventListener('click', () => controller && controller.abort());
  $('new-chat').addEventListener('click', () => {
    if (controller) controller.abort();
    controller = null;
    send.disabled = false;
    stop.disabled = true;
    conversation = [];
    stats.textContent = '';
    save();
    renderAll();
    prompt.focus();
  });
  for (const f of FIELDS) $(f).addEventListener('change', saveSettings);
  picker.addEventListener('change', saveSettings);
  $('api-key').addEventListener('change', () => {
    const k = $('api-key').value.trim();
    if (k) localStorage.setItem(KEY, k); else localStorage.removeItem(KEY);
    if (!picker.value) loadModels();
  });
  $('reset-settings').addEventListener('click', () => {
    for (const f of FIELDS) {
      if ($(f).type === 'checkbox') $(f).checked = DEFAULTS[f]; else $(f).value = DEFAULTS[f];
    }
    saveSettings();
  });
  const toggle = $('settings-toggle');
  toggle.addEventListener('click', () => {
    const open = document.body.classList.toggle('settings-open');
    toggle.setAttribute('aria-expanded', String(open));
  });

  restoreSettings();
  conversation = load(CONVERSATION, []).filter((m) => m && typeof m.content === 'string');
  for (const m of conversation) {
    if (m.streaming) { m.streaming = false; m.meta = Object.assign({}, m.meta, { finish: 'stopped' }); }
  }
  renderAll();
  loadModels();
})();
