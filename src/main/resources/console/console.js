/*
 * The Syncular operator console (issue 20): plain JavaScript over the JSON API under admin/ — overview, clients
 * with lag, the live event tail (SSE), checkpoints, rate charts, a row inspector, the audit list and the actions.
 * Everything it loads comes from this origin (the page's Content-Security-Policy says so). Untrusted text (event
 * fields, row values, ids) only ever reaches the page as text nodes, never as markup.
 */
'use strict';

(() => {
  // ------------------------------------------------------------------ configuration

  /** Every event type the server emits (syncular.jakarta.events.ServerEvent; ConsoleAssetsTest keeps this whole). */
  const EVENT_TYPES = [
    'request.handled', 'push.applied', 'push.rejected', 'push.conflicted', 'pull.served', 'segment.built', 'segment.reused', 'segment.served',
    'socket.opened', 'socket.closed', 'socket.slow_consumer', 'fanout.completed', 'backfill.batch',
    'prune.completed', 'readiness.changed', 'auth.failed', 'admin.action',
  ];
  const TAIL_MAX = 200;
  const TAIL_HISTORY = 100;
  const RATE_WINDOW_S = 120;
  const EVERY = { overview: 5000, clients: 5000, checkpoints: 5000, audit: 10000, rates: 2000 };

  // The API's base, built from the origin and path only: a page opened with credentials in its URL would otherwise
  // make every fetch() a TypeError (a request URL may not carry credentials).
  const adminBase = new URL('./', location.origin + location.pathname);

  const state = {
    csrf: null,
    partitions: [],
    clientsPartition: '',
    detail: null,            // {partition, clientId} of the open client detail
    tail: { source: null, lastSeq: null, paused: false, buffered: [], type: '', partition: '', retry: null },
    nextEventSeq: 0,
    errors: new Map(),
  };

  // ------------------------------------------------------------------ DOM and formatting helpers

  const $ = (id) => document.getElementById(id);

  /** An element with attributes ({class, data: {...}, any attribute}) and children (nodes or text). */
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'data') for (const [dk, dv] of Object.entries(v)) e.dataset[dk] = String(dv);
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  function setText(node, text) {
    const t = text === null || text === undefined ? '—' : String(text);
    if (node.textContent !== t) node.textContent = t;
  }

  function clock(ms) {
    if (!ms && ms !== 0) return '—';
    const d = new Date(ms);
    const p = (n, w = 2) => String(n).padStart(w, '0');
    return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
  }

  function when(ms) {
    if (!ms) return '—';
    const d = new Date(ms);
    const p = (n) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${clock(ms)}`;
  }

  function ago(ms) {
    if (!ms) return 'never';
    const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
    if (s < 60) return `${s} s ago`;
    if (s < 3600) return `${Math.floor(s / 60)} min ago`;
    if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
    return when(ms);
  }

  function duration(seconds) {
    if (seconds === null || seconds === undefined) return '—';
    const s = Math.round(seconds);
    if (s < 60) return `${s} s`;
    if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
    return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  }

  /** Keeps a table body's rows in step with `items`, one row per key, reusing rows so focus and clicks survive. */
  function syncRows(tbody, items, keyOf, create, update) {
    const existing = new Map();
    for (const tr of Array.from(tbody.rows)) existing.set(tr.dataset.key, tr);
    let previous = null;
    for (const item of items) {
      const key = keyOf(item);
      let tr = existing.get(key);
      if (tr) existing.delete(key);
      else {
        tr = create(item);
        tr.dataset.key = key;
      }
      update(tr, item);
      const want = previous ? previous.nextSibling : tbody.firstChild;
      if (want !== tr) tbody.insertBefore(tr, want);
      previous = tr;
    }
    for (const tr of existing.values()) tr.remove();
  }

  function cell(tr, field) { return tr.querySelector(`[data-field="${field}"]`); }

  // ------------------------------------------------------------------ the API

  class ApiError extends Error {
    constructor(status, code, message, reason) {
      super(message);
      this.status = status;
      this.code = code;
      this.reason = reason;
    }
  }

  function apiUrl(path, params) {
    const u = new URL(path, adminBase);
    for (const [k, v] of Object.entries(params || {})) if (v !== '' && v !== null && v !== undefined) u.searchParams.set(k, v);
    return u;
  }

  const seg = encodeURIComponent;

  async function request(method, path, params, withCsrf) {
    const headers = { Accept: 'application/json' };
    if (withCsrf) headers['X-Syncular-CSRF'] = state.csrf || '';
    const r = await fetch(apiUrl(path, params), { method, headers, credentials: 'same-origin', cache: 'no-store' });
    const text = await r.text();
    let body = null;
    try { body = text ? JSON.parse(text) : null; } catch (e) { body = null; }
    if (!r.ok) {
      const code = body && body.code;
      const reason = body && body.details && body.details.reason;
      let message = (body && body.message) || r.statusText || 'request failed';
      if (r.status === 401) message = 'your login is no longer valid: reload the page to sign in again';
      throw new ApiError(r.status, code, message, reason);
    }
    return body;
  }

  const get = (path, params) => request('GET', path, params, false);

  async function session() {
    const s = await get('console/session');
    state.csrf = s.csrfToken;
    setText($('operator'), s.operator);
    return s;
  }

  /** An action: POST with the CSRF token; a token the cookie no longer matches is renewed once and retried. */
  async function post(path) {
    if (!state.csrf) await session();
    try {
      return await request('POST', path, null, true);
    } catch (e) {
      if (e instanceof ApiError && e.status === 403 && e.reason === 'csrf') {
        await session();
        return request('POST', path, null, true);
      }
      throw e;
    }
  }

  function describe(e) {
    if (e instanceof ApiError) return `${e.status}${e.code ? ' ' + e.code : ''}: ${e.message}`;
    return e && e.message ? e.message : String(e);
  }

  function failed(source, e) {
    state.errors.set(source, `${source}: ${describe(e)}`);
    showErrors();
  }

  function recovered(source) {
    if (state.errors.delete(source)) showErrors();
  }

  function showErrors() {
    const banner = $('error-banner');
    banner.textContent = Array.from(state.errors.values()).join(' · ');
    banner.hidden = state.errors.size === 0;
  }

  /**
   * Runs `fn` after `first` ms and then every `ms` after the previous run ended (never two at once); skipped while
   * the page is hidden.
   */
  function every(ms, source, fn, first = 0) {
    const tick = async () => {
      if (!document.hidden) {
        try {
          await fn();
          recovered(source);
        } catch (e) {
          failed(source, e);
        }
      }
      setTimeout(tick, ms);
    };
    setTimeout(tick, first);
  }

  // ------------------------------------------------------------------ overview

  async function refreshOverview() {
    const o = await get('console/overview');
    const node = o.node;
    const ready = $('node-ready');
    ready.dataset.ready = String(node.ready);
    setText(ready, node.ready ? 'ready' : 'not ready');
    setText($('node-schema'), `v${node.schemaVersion}`);
    setText($('node-sockets'), node.openSockets);
    setText($('updated-at'), clock(Date.now()));
    state.nextEventSeq = node.nextEventSeq;

    const checks = $('node-checks');
    checks.replaceChildren(...node.checks.map((c) => el('li', { data: { up: c.up, check: c.name },
      title: c.detail || null }, `${c.name}: ${c.reason}`)));

    renderPartitions(o.partitions);
  }

  function renderPartitions(partitions) {
    state.partitions = partitions;
    syncRows($('partitions-table').tBodies[0], partitions, (p) => p.partition, (p) => {
      const actions = el('td', { class: 'actions', 'data-field': 'actions' },
        el('button', { type: 'button', data: { action: 'show-clients' }, 'aria-label': `Clients of ${p.partition}` }, 'Clients'), ' ',
        el('button', { type: 'button', class: 'danger', data: { action: 'prune' }, 'aria-label': `Prune ${p.partition}` }, 'Prune'), ' ',
        el('button', { type: 'button', class: 'danger', data: { action: 'rotate-epoch' }, 'aria-label': `Rotate the log epoch of ${p.partition}` }, 'Rotate epoch'));
      return el('tr', { data: { partition: p.partition } },
        el('th', { scope: 'row', 'data-field': 'partition' }, p.partition),
        el('td', { class: 'num', 'data-field': 'maxCommitSeq' }),
        el('td', { class: 'num', 'data-field': 'horizonSeq' }),
        el('td', { class: 'num', 'data-field': 'retainedCommits' }),
        el('td', { class: 'num', 'data-field': 'clients' }),
        el('td', { class: 'num', 'data-field': 'lowestActiveCursor' }),
        el('td', { 'data-field': 'pruneRecommendation' }),
        el('td', { 'data-field': 'logEpoch' }),
        actions);
    }, (tr, p) => {
      setText(cell(tr, 'maxCommitSeq'), p.maxCommitSeq);
      setText(cell(tr, 'horizonSeq'), p.horizonSeq);
      setText(cell(tr, 'retainedCommits'), p.retainedCommits);
      setText(cell(tr, 'clients'), `${p.activeClients} / ${p.knownClients}`);
      setText(cell(tr, 'lowestActiveCursor'), p.lowestActiveCursor);
      const rec = p.pruneRecommendation;
      setText(cell(tr, 'pruneRecommendation'), rec.removableCommits > 0
        ? `to ${rec.targetHorizonSeq} (${rec.removableCommits} removable)` : 'nothing to prune');
      const epoch = cell(tr, 'logEpoch');   // a UUID: its head is enough to tell two epochs apart on sight
      setText(epoch, p.logEpoch && p.logEpoch.length > 13 ? `${p.logEpoch.slice(0, 8)}…` : p.logEpoch);
      epoch.title = p.logEpoch || '';
      epoch.dataset.value = p.logEpoch || '';
      tr.dataset.horizonSeq = p.horizonSeq;
      tr.dataset.targetHorizonSeq = rec.targetHorizonSeq;
    });
    $('partitions-empty').hidden = partitions.length > 0;

    const names = partitions.map((p) => p.partition);
    const select = $('clients-partition');
    const options = Array.from(select.options).map((o) => o.value);
    if (options.join('\u0000') !== names.join('\u0000')) {
      select.replaceChildren(...names.map((n) => el('option', { value: n }, n)));
      $('partition-list').replaceChildren(...names.map((n) => el('option', { value: n })));
      if (names.includes(state.clientsPartition)) select.value = state.clientsPartition;
    }
    if (!state.clientsPartition && names.length > 0) chooseClientsPartition(names[0]);
  }

  $('partitions-table').addEventListener('click', (ev) => {
    const button = ev.target.closest('button[data-action]');
    if (!button) return;
    const partition = button.closest('tr').dataset.partition;
    const p = state.partitions.find((x) => x.partition === partition);
    if (button.dataset.action === 'show-clients') {
      chooseClientsPartition(partition);
      $('clients-partition').focus();
    } else if (button.dataset.action === 'prune') {
      const rec = p ? p.pruneRecommendation : null;
      const detail = rec && rec.removableCommits > 0
        ? `The retention policy would move the horizon from ${p.horizonSeq} to ${rec.targetHorizonSeq}, deleting ${rec.removableCommits} commits.`
        : 'The retention policy currently finds nothing to remove.';
      runAction('prune', `Prune the log of partition “${partition}” now? ${detail} A client behind the new horizon must bootstrap again.`,
        'Prune', `console/partitions/${seg(partition)}/prune`,
        (r) => `Pruned ${partition}: horizon ${r.previousHorizonSeq} → ${r.horizonSeq} (${r.removedCommits} commits removed)`);
    } else if (button.dataset.action === 'rotate-epoch') {
      runAction('rotate-epoch', `Rotate the log epoch of partition “${partition}”? Every client of it resets and bootstraps again on its next round. Do this after restoring the database from a backup.`,
        'Rotate epoch', `console/partitions/${seg(partition)}/rotate-epoch`,
        (r) => `Rotated the log epoch of ${partition}: now ${r.logEpoch}`);
    }
  });

  // ------------------------------------------------------------------ clients

  function chooseClientsPartition(partition) {
    state.clientsPartition = partition;
    const select = $('clients-partition');
    if (select.value !== partition) select.value = partition;
    if (state.detail && state.detail.partition !== partition) closeDetail();
    refreshClients().then(() => recovered('clients'), (e) => failed('clients', e));
  }

  $('clients-partition').addEventListener('change', (ev) => chooseClientsPartition(ev.target.value));

  async function refreshClients() {
    const partition = state.clientsPartition;
    if (!partition) return;
    const body = await get(`console/partitions/${seg(partition)}/clients`);
    if (partition !== state.clientsPartition) return;   // the operator chose another meanwhile
    setText($('clients-head'), `head seq ${body.maxCommitSeq}; active window ${duration(body.activeWindowMs / 1000)}`);
    const tbody = $('clients-table').tBodies[0];
    if (tbody.dataset.partition !== partition) {
      tbody.replaceChildren();
      tbody.dataset.partition = partition;
    }
    syncRows(tbody, body.clients, (c) => c.clientId, (c) => el('tr', { data: { clientId: c.clientId } },
      el('th', { scope: 'row', 'data-field': 'clientId' },
        el('button', { type: 'button', class: 'link', data: { action: 'detail' }, 'aria-label': `Details of client ${c.clientId}` }, c.clientId)),
      el('td', { 'data-field': 'actorId' }),
      el('td', { class: 'num', 'data-field': 'cursor' }),
      el('td', { class: 'num', 'data-field': 'lag' }),
      el('td', { class: 'num', 'data-field': 'sockets' }),
      el('td', { 'data-field': 'updatedAt' })), (tr, c) => {
      setText(cell(tr, 'actorId'), c.actorId);
      setText(cell(tr, 'cursor'), c.cursor < 0 ? 'none yet' : c.cursor);
      const lag = cell(tr, 'lag');
      lag.dataset.value = c.lag;
      lag.replaceChildren(String(c.lag), el('meter', { min: 0, max: Math.max(1, body.maxCommitSeq), value: c.lag,
        low: Math.max(1, body.maxCommitSeq) * 0.1, high: Math.max(1, body.maxCommitSeq) * 0.5, optimum: 0,
        'aria-label': `lag of ${c.clientId}` }));
      setText(cell(tr, 'sockets'), c.socketsOnThisNode);
      setText(cell(tr, 'updatedAt'), ago(c.updatedAtMs));
      tr.dataset.selected = String(!!state.detail && state.detail.clientId === c.clientId);
    });
    $('clients-empty').hidden = body.clients.length > 0;
    if (state.detail && state.detail.partition === partition) await refreshDetail();
  }

  $('clients-table').addEventListener('click', (ev) => {
    const tr = ev.target.closest('tr[data-client-id]');
    if (!tr) return;
    openDetail(state.clientsPartition, tr.dataset.clientId);
  });

  function openDetail(partition, clientId) {
    state.detail = { partition, clientId };
    for (const tr of $('clients-table').tBodies[0].rows) {
      tr.dataset.selected = String(tr.dataset.clientId === clientId);
    }
    refreshDetail().then(() => recovered('client'), (e) => failed('client', e));
  }

  function closeDetail() {
    state.detail = null;
    $('client-detail').hidden = true;
    for (const tr of $('clients-table').tBodies[0].rows) tr.dataset.selected = 'false';
  }

  $('client-detail-close').addEventListener('click', closeDetail);

  async function refreshDetail() {
    const d = state.detail;
    if (!d) return;
    const c = await get(`console/partitions/${seg(d.partition)}/clients/${seg(d.clientId)}`);
    if (state.detail !== d) return;
    const box = $('client-detail');
    box.dataset.clientId = c.clientId;
    setText($('client-detail-id'), c.clientId);
    const fields = [['Partition', d.partition], ['Actor', c.actorId], ['Cursor', c.cursor < 0 ? 'none yet' : c.cursor],
      ['Lag', `${c.lag} commits`], ['Wire version', c.wireVersion], ['Sockets on this node', c.socketsOnThisNode],
      ['Last seen', when(c.updatedAtMs)]];
    $('client-detail-fields').replaceChildren(...fields.flatMap(([k, v]) => [el('dt', null, k),
      el('dd', { data: { field: k } }, v === null || v === undefined ? '—' : v)]));
    $('client-subscriptions').replaceChildren(...(c.subscriptions || []).map((s) => el('li', null, compact(s))));
    const events = c.recentEvents.slice().reverse().map((e) => eventItem(e));
    $('client-events').replaceChildren(...(events.length ? events : [el('li', { class: 'muted' }, 'none retained on this node')]));
    box.hidden = false;
  }

  $('client-disconnect').addEventListener('click', () => {
    const d = state.detail;
    if (!d) return;
    runAction('disconnect', `Disconnect client “${d.clientId}” of partition “${d.partition}”? This node closes its realtime sockets (code 1012); the client reconnects and authenticates again.`,
      'Disconnect', `console/partitions/${seg(d.partition)}/clients/${seg(d.clientId)}/disconnect`,
      (r) => `Disconnected ${d.clientId}: ${r.closedSockets} socket(s) closed on this node`);
  });

  function compact(value) {
    if (value === null || value === undefined) return '';
    if (typeof value !== 'object') return String(value);
    return Object.entries(value).map(([k, v]) => `${k}=${typeof v === 'object' && v !== null ? JSON.stringify(v) : v}`).join(' ');
  }

  // ------------------------------------------------------------------ live event tail

  /** One event as a list item: time, type, partition, client, then its own fields. */
  function eventItem(e) {
    const rest = {};
    for (const [k, v] of Object.entries(e)) {
      if (!['seq', 'type', 'atMs', 'partition', 'clientId'].includes(k)) rest[k] = v;
    }
    return el('li', { data: { seq: e.seq, type: e.type, partition: e.partition || '', clientId: e.clientId || '' } },
      el('time', { datetime: new Date(e.atMs).toISOString() }, clock(e.atMs)), ' ',
      el('span', { class: 'type' }, e.type), ' ',
      e.partition ? `${e.partition}` : '', e.clientId ? ` · ${e.clientId}` : '', ' ',
      el('span', { class: 'muted' }, compact(rest)));
  }

  function setTailState(name, label) {
    const s = $('tail-status');
    s.dataset.state = name;
    setText(s, label || name);
  }

  /**
   * Inserts the event in sequence order (newest first), once; keeps the newest TAIL_MAX. `via`: how it came,
   * `live` (the SSE stream) or `ring` (fetched from the retained ring).
   */
  function showTailEvent(e, via) {
    const list = $('tail');
    if (state.tail.lastSeq === null || e.seq > state.tail.lastSeq) state.tail.lastSeq = e.seq;
    if (list.querySelector(`li[data-seq="${e.seq}"]`)) return;
    let before = null;
    for (const li of list.children) {
      if (Number(li.dataset.seq) < e.seq) { before = li; break; }
    }
    const item = eventItem(e);
    item.dataset.via = via;
    list.insertBefore(item, before);
    while (list.children.length > TAIL_MAX) list.lastElementChild.remove();
  }

  function onTailEvent(msg) {
    let e;
    try { e = JSON.parse(msg.data); } catch (err) { return; }
    if (state.tail.paused) {
      state.tail.buffered.push(e);
      if (state.tail.buffered.length > TAIL_MAX) state.tail.buffered.shift();
      setTailState('paused', `paused (${state.tail.buffered.length} waiting)`);
      return;
    }
    showTailEvent(e, 'live');
  }

  /** The retained events the tail missed (or, the first time, the last TAIL_HISTORY), from the JSON ring. */
  async function backfillTail() {
    const t = state.tail;
    const after = t.lastSeq !== null ? t.lastSeq : Math.max(0, state.nextEventSeq - TAIL_HISTORY - 1);
    const body = await get('events', { after, limit: TAIL_MAX, type: t.type, partition: t.partition });
    for (const e of body.events) showTailEvent(e, 'ring');
    $('tail').dataset.caughtUp = 'true';
  }

  function connectTail() {
    const t = state.tail;
    if (t.source) t.source.close();
    if (t.retry) clearTimeout(t.retry);
    setTailState('connecting');
    $('tail').dataset.caughtUp = 'false';
    const source = new EventSource(apiUrl('events/stream', { type: t.type, partition: t.partition }));
    t.source = source;
    source.onopen = () => {
      setTailState(t.paused ? 'paused' : 'live');
      backfillTail().then(() => recovered('events'), (e) => failed('events', e));
    };
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) {
        // refused outright (not a dropped connection, which the browser resumes with Last-Event-ID itself)
        setTailState('closed', 'disconnected, retrying');
        t.retry = setTimeout(connectTail, 5000);
      } else {
        setTailState('connecting', 'reconnecting');
      }
    };
    for (const type of EVENT_TYPES) source.addEventListener(type, onTailEvent);
    source.addEventListener('dropped', (msg) => {
      let n = '?';
      try { n = JSON.parse(msg.data).events; } catch (err) { /* keep '?' */ }
      $('tail').prepend(el('li', { class: 'muted', data: { seq: state.tail.lastSeq === null ? 0 : state.tail.lastSeq + 0.5 } },
        `${n} events were dropped: this tail could not keep up`));
    });
    source.addEventListener('error', (msg) => {
      if (msg.data) failed('events', new Error(JSON.parse(msg.data).message));
    });
  }

  $('tail-apply').addEventListener('click', () => {
    state.tail.type = $('tail-type').value.trim();
    state.tail.partition = $('tail-partition').value.trim();
    state.tail.lastSeq = null;
    $('tail').replaceChildren();
    connectTail();
  });

  $('tail-pause').addEventListener('click', (ev) => {
    const t = state.tail;
    t.paused = !t.paused;
    ev.target.setAttribute('aria-pressed', String(t.paused));
    setText(ev.target, t.paused ? 'Resume' : 'Pause');
    if (!t.paused) {
      for (const e of t.buffered.splice(0)) showTailEvent(e, 'live');
      setTailState(t.source && t.source.readyState === EventSource.OPEN ? 'live' : 'connecting');
    } else {
      setTailState('paused');
    }
  });

  $('tail-clear').addEventListener('click', () => $('tail').replaceChildren());

  // ------------------------------------------------------------------ checkpoints

  async function refreshCheckpoints() {
    const body = await get('checkpoints');
    const refusal = $('checkpoints-refusal');
    refusal.hidden = !body.refusal;
    setText(refusal, body.refusal ? `This node refuses to serve: ${body.refusal}` : '');
    syncRows($('checkpoints-table').tBodies[0], body.checkpoints, (c) => `${c.partition}\u0000${c.name}\u0000${c.schemaVersion}`,
      (c) => el('tr', { data: { partition: c.partition, checkpoint: c.name } },
        el('td', { 'data-field': 'partition' }, c.partition),
        el('th', { scope: 'row', 'data-field': 'name' }, c.name),
        el('td', { 'data-field': 'state' }),
        el('td', { 'data-field': 'progress' }),
        el('td', { class: 'num', 'data-field': 'rate' }),
        el('td', { 'data-field': 'eta' }),
        el('td', { 'data-field': 'actions' },
          el('button', { type: 'button', data: { action: 'pause-backfill' }, 'aria-label': `Pause ${c.name} in ${c.partition}` }, 'Pause'), ' ',
          el('button', { type: 'button', data: { action: 'resume-backfill' }, 'aria-label': `Resume ${c.name} in ${c.partition}` }, 'Resume'), ' ',
          el('button', { type: 'button', data: { action: 'retry-backfill' }, 'aria-label': `Retry ${c.name} in ${c.partition} now` }, 'Retry now'))),
      (tr, c) => {
        setText(cell(tr, 'state'), `${c.state}${c.pausedAtMs != null ? ', paused' : ''} (v${c.schemaVersion})`);
        const pending = c.state !== 'activated';
        const buttons = cell(tr, 'actions').querySelectorAll('button');
        buttons[0].hidden = !pending || c.pausedAtMs != null;
        buttons[1].hidden = !pending || c.pausedAtMs == null;
        buttons[2].hidden = !pending || !c.declaredHere;
        const p = c.pass;
        const progress = cell(tr, 'progress');
        if (c.state === 'activated') {
          progress.replaceChildren(el('progress', { max: 1, value: 1, 'aria-label': `${c.name} activated` }), ' done');
        } else if (p && p.rowsTotal !== undefined) {
          const pct = p.rowsTotal > 0 ? Math.min(100, Math.floor((p.rows * 100) / p.rowsTotal)) : 100;
          progress.replaceChildren(el('progress', { max: Math.max(1, p.rowsTotal), value: Math.min(p.rows, p.rowsTotal),
            'aria-label': `${c.name} pass ${p.number}: ${pct} %` }), ` ${p.rows} / ${p.rowsTotal} rows (${pct} %), pass ${p.number} ${p.mode}`);
        } else if (p) {
          progress.replaceChildren(el('progress', { 'aria-label': `${c.name} pass ${p.number}` }),
            ` ${p.rows} rows, pass ${p.number} ${p.mode}${p.exhausted ? ', exhausted' : ''}`);
        } else {
          progress.replaceChildren('not started');
        }
        progress.dataset.rows = p ? p.rows : 0;
        setText(cell(tr, 'rate'), p ? p.rowsPerSecond : null);
        setText(cell(tr, 'eta'), p && p.etaSeconds !== undefined ? duration(p.etaSeconds) : (c.state === 'activated' ? 'done' : '—'));
      });
    $('checkpoints-empty').hidden = body.checkpoints.length > 0;
  }

  $('checkpoints-table').addEventListener('click', (ev) => {
    const button = ev.target.closest('button[data-action]');
    if (!button) return;
    const tr = button.closest('tr');
    const partition = tr.dataset.partition;
    const name = tr.dataset.checkpoint;
    const path = `console/partitions/${seg(partition)}/checkpoints/${seg(name)}/`;
    if (button.dataset.action === 'pause-backfill') {
      runAction('pause-backfill', `Pause backfill “${name}” in partition “${partition}” on every node? Nodes waiting for it keep refusing requests until it is resumed and activates.`,
        'Pause', path + 'pause', () => `Paused ${name} in ${partition}`);
    } else if (button.dataset.action === 'resume-backfill') {
      runAction('resume-backfill', `Resume backfill “${name}” in partition “${partition}”?`, 'Resume', path + 'resume',
        () => `Resumed ${name} in ${partition}`);
    } else if (button.dataset.action === 'retry-backfill') {
      runAction('retry-backfill', `Run one batch of backfill “${name}” in partition “${partition}” now on this node?`,
        'Run batch', path + 'retry',
        (r) => `${name} in ${partition}: ${r.batches} batch(es), ${r.activated} activated, ${r.skipped} skipped`);
    }
  });

  // ------------------------------------------------------------------ rate charts

  const SERIES = {
    requests: [['requests', '#1f77b4'], ['pushesApplied', '#2ca02c'], ['pulls', '#9467bd']],
    errors: [['errors', '#d62728'], ['pushesRejected', '#ff7f0e'], ['pushesConflicted', '#8c564b']],
  };

  function niceCeiling(n) {
    if (n <= 5) return 5;
    const p = 10 ** Math.floor(Math.log10(n));
    for (const m of [1, 2, 5, 10]) if (m * p >= n) return m * p;
    return 10 * p;
  }

  /** Draws per-second series as lines over the window, the oldest second on the left. */
  function drawChart(canvas, points, series, label) {
    const ratio = window.devicePixelRatio || 1;
    const w = Math.max(200, Math.round(canvas.clientWidth * ratio));
    const h = Math.max(100, Math.round(canvas.clientHeight * ratio));
    if (canvas.width !== w) canvas.width = w;
    if (canvas.height !== h) canvas.height = h;
    const g = canvas.getContext('2d');
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    const cw = w / ratio;
    const ch = h / ratio;
    const left = 34;
    const bottom = 16;
    const top = 8;
    g.clearRect(0, 0, cw, ch);
    let peak = 0;
    for (const p of points) for (const [name] of series) peak = Math.max(peak, p[name]);
    const max = niceCeiling(peak);
    g.font = '10px system-ui, sans-serif';
    g.fillStyle = '#5a6470';
    g.strokeStyle = '#e3e6ea';
    g.lineWidth = 1;
    for (let i = 0; i <= 4; i++) {
      const y = top + ((ch - top - bottom) * i) / 4;
      g.beginPath();
      g.moveTo(left, y);
      g.lineTo(cw - 4, y);
      g.stroke();
      g.fillText(String(Math.round(max - (max * i) / 4)), 2, y + 3);
    }
    g.fillText(`-${points.length} s`, left, ch - 3);
    g.fillText('now', cw - 24, ch - 3);
    const x = (i) => left + ((cw - 4 - left) * i) / Math.max(1, points.length - 1);
    const y = (v) => top + (ch - top - bottom) * (1 - v / max);
    for (const [name, colour] of series) {
      g.strokeStyle = colour;
      g.lineWidth = 1.5;
      g.beginPath();
      points.forEach((p, i) => (i === 0 ? g.moveTo(x(i), y(p[name])) : g.lineTo(x(i), y(p[name]))));
      g.stroke();
    }
    const last = points.length ? points[points.length - 1] : {};
    canvas.dataset.points = String(points.length);
    canvas.dataset.peak = String(peak);
    canvas.setAttribute('aria-label', `${label} over the last ${points.length} s: peak ${peak}; last second `
      + series.map(([name]) => `${name} ${last[name] || 0}`).join(', '));
  }

  async function refreshRates() {
    const m = await get('console/metrics', { window: RATE_WINDOW_S });
    setText($('rates-window'), m.windowSeconds);
    drawChart($('chart-requests'), m.perSecond, SERIES.requests, 'Requests per second');
    drawChart($('chart-errors'), m.perSecond, SERIES.errors, 'Errors per second');
    setText($('rates-requests-total'), m.totals.requests);
    setText($('rates-pushes-total'), m.totals.pushesApplied);
    setText($('rates-errors-total'), m.totals.errors);
  }

  // ------------------------------------------------------------------ row inspector

  $('row-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const partition = $('row-partition').value.trim();
    const table = $('row-table').value.trim();
    const rowId = $('row-id').value;
    const error = $('row-error');
    const result = $('row-result');
    error.hidden = true;
    try {
      const r = await get(`console/partitions/${seg(partition)}/rows/${seg(table)}/${seg(rowId)}`);
      const fields = [['Row', `${r.table} / ${r.rowId}`], ['Exists', r.exists ? 'yes' : 'no (deleted)'],
        ['Version', r.version], ['Scopes', compact(r.scopes)],
        ['Blobs', (r.blobs || []).length ? r.blobs.map(compact).join('; ') : 'none']];
      $('row-fields').replaceChildren(...fields.flatMap(([k, v]) => [el('dt', null, k),
        el('dd', { data: { field: k.toLowerCase() } }, v === null || v === undefined ? '—' : v)]));
      setText($('row-values'), r.values ? JSON.stringify(r.values, null, 2) : '(deleted)');
      $('row-history').replaceChildren(...r.history.map((c) => el('li', { data: { commitSeq: c.commitSeq } },
        `commit ${c.commitSeq}: ${c.op}, version ${c.rowVersion}, scopes ${compact(c.scopes)}`)));
      result.dataset.version = r.version === undefined ? '' : r.version;
      result.hidden = false;
    } catch (e) {
      result.hidden = true;
      setText(error, e instanceof ApiError && e.status === 404 ? `Not found: ${e.message}` : describe(e));
      error.hidden = false;
    }
  });

  // ------------------------------------------------------------------ audit

  async function refreshAudit() {
    const body = await get('console/audit', { limit: 50 });
    $('audit-table').tBodies[0].replaceChildren(...body.actions.map((a) => el('tr',
      { data: { action: a.action, outcome: a.outcome, operator: a.operator, partition: a.partition || '' } },
      el('td', null, when(a.atMs)), el('td', null, a.operator), el('th', { scope: 'row' }, a.action),
      el('td', null, a.partition || '—'), el('td', null, a.target || '—'), el('td', null, a.outcome),
      el('td', { class: 'muted' }, a.detail || ''))));
    $('audit-empty').hidden = body.actions.length > 0;
  }

  // ------------------------------------------------------------------ actions

  /** Asks in the modal dialog; resolves true only for the confirm button. */
  function confirmAction(message, confirmLabel) {
    const dialog = $('confirm-dialog');
    setText($('confirm-message'), message);
    setText($('confirm-ok'), confirmLabel);
    dialog.returnValue = '';
    return new Promise((resolve) => {
      dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
      dialog.showModal();
    });
  }

  async function runAction(action, message, confirmLabel, path, summary) {
    if (!(await confirmAction(message, confirmLabel))) return;
    const banner = $('action-result');
    try {
      const r = await post(path);
      recovered('action');
      banner.className = 'banner ok';
      banner.dataset.action = action;
      banner.dataset.outcome = 'ok';
      for (const [k, v] of Object.entries(r)) if (typeof v !== 'object') banner.dataset[k] = String(v);
      setText(banner, summary(r));
    } catch (e) {
      banner.className = 'banner';
      banner.dataset.action = action;
      banner.dataset.outcome = 'failed';
      setText(banner, `${action} failed: ${describe(e)}`);
    }
    banner.hidden = false;
    await Promise.allSettled([refreshOverview(), refreshAudit(), refreshClients()]);
  }

  // ------------------------------------------------------------------ start

  async function start() {
    try {
      await session();
      recovered('session');
    } catch (e) {
      failed('session', e);
    }
    try {
      await refreshOverview();   // first: the tail's history starts from the ring's head it reports
    } catch (e) {
      failed('overview', e);
    }
    connectTail();
    every(EVERY.overview, 'overview', refreshOverview, EVERY.overview);
    every(EVERY.clients, 'clients', refreshClients);
    every(EVERY.checkpoints, 'checkpoints', refreshCheckpoints);
    every(EVERY.audit, 'audit', refreshAudit);
    every(EVERY.rates, 'rates', refreshRates);
  }

  start();
})();
