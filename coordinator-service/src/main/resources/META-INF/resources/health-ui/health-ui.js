// Juno's health dashboard: polls GET /v1/cluster/health every second and draws the deployment's state, with rates
// computed from the difference between two polls. Loads nothing from outside the server. With API keys on the server
// it asks for a key once (as the console does) and keeps it in this browser's localStorage.
(() => {
  'use strict';
  const KEY = 'juno.apiKey';
  const $ = (id) => document.getElementById(id);
  let previous = null;

  async function fetchHealth() {
    for (let attempt = 0; attempt < 2; attempt++) {
      const headers = {};
      const key = localStorage.getItem(KEY);
      if (key) headers['Authorization'] = 'Bearer ' + key;
      const r = await fetch('/v1/cluster/health', { headers });
      if (r.status !== 401) return r.json();
      const entered = window.prompt(key ? 'That API key was refused. API key:' : 'This server needs an API key:');
      if (!entered) throw new Error('an API key is needed');
      localStorage.setItem(KEY, entered.trim());
    }
    throw new Error('the API key was refused');
  }

  function bytes(n) {
    const units = ['B', 'KB', 'MB', 'GB', 'TB'];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i === 0 ? n : n.toFixed(1)) + ' ' + units[i];
  }

  function card(label, value, fraction) {
    const c = document.createElement('div');
    c.className = 'card';
    c.dataset.label = label;
    c.append(label);
    const b = document.createElement('b');
    b.textContent = value;
    c.append(b);
    if (fraction !== undefined) {
      const bar = document.createElement('div');
      bar.className = 'bar';
      const fill = document.createElement('div');
      fill.style.width = Math.round(100 * Math.min(1, Math.max(0, fraction))) + '%';
      bar.append(fill);
      c.append(bar);
    }
    return c;
  }

  function draw(h, now) {
    $('status').textContent = (h.status === 'UP' ? '● ' : '○ ') + h.status + ' · ' + (h.model || '') + ' · ' + h.state;
    $('status').className = h.status;
    const cards = $('cards');
    cards.replaceChildren();
    if (h.mode !== undefined) {
      const dt = previous ? (now - previous.at) / 1000 : 0;
      const rate = (field) => (previous && dt > 0 ? ((h[field] - previous.h[field]) / dt).toFixed(1) : '–');
      cards.append(card('mode', h.mode + (h.dtype ? ' · ' + h.dtype + ' · ' + h.byteOrder : '')));
      cards.append(card('queue', String(h.queueDepth)));
      cards.append(card('running sequences', String(h.runningSequences)));
      cards.append(card('KV blocks', h.kvBlocksUsed + ' / ' + h.kvBlocksTotal, h.kvBlocksTotal ? h.kvBlocksUsed / h.kvBlocksTotal : 0));
      cards.append(card('tokens/s generated', rate('generatedTokens')));
      cards.append(card('steps/s', rate('steps')));
      cards.append(card('tokens generated', String(h.generatedTokens)));
      const looked = h.prefixHitTokens + h.prefixMissTokens;
      cards.append(card('prefix cache hits', looked ? Math.round(100 * h.prefixHitTokens / looked) + ' %' : '–'));
    }
    const body = $('nodes').tBodies[0];
    body.replaceChildren();
    const nodes = h.nodes || [];
    for (const n of nodes) {
      const tr = document.createElement('tr');
      const shard = 'layers ' + n.layers[0] + '–' + (n.layers[1] - 1) + (n.worldSize > 1 ? ' · slice ' + n.tensorRank + '/' + n.worldSize : '');
      const cells = [n.address, n.state + (n.reason ? ' (' + n.reason + ')' : ''), shard, bytes(n.bytesSent), bytes(n.bytesReceived),
        String(n.calls), n.meanCallMs.toFixed(2) + ' ms', n.meanComputeMs.toFixed(2) + ' ms'];
      cells.forEach((text, i) => {
        const td = document.createElement('td');
        td.textContent = text;
        if (i === 1) td.className = n.state;
        tr.append(td);
      });
      body.append(tr);
    }
    $('nodes').hidden = nodes.length === 0;
    $('local').hidden = nodes.length !== 0 || h.mode === undefined;
    $('updated').textContent = 'updated ' + new Date(now).toLocaleTimeString();
    previous = { h, at: now };
  }

  async function tick() {
    try {
      draw(await fetchHealth(), Date.now());
    } catch (e) {
      $('status').textContent = 'cannot read /v1/cluster/health: ' + e.message;
      $('status').className = 'DOWN';
    }
    setTimeout(tick, 1000);
  }
  tick();
})();
