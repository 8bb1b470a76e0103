// Runner operator console: one ES module, no framework, no build step.
//
// Everything it shows comes from the management API (docs/management-api.md) with the key the
// operator signed in with, and everything it shows is written as text through DOM APIs
// (textContent, append, setAttribute): external ids, error texts and payloads are untrusted, so
// nothing from the API ever becomes markup. The key lives in sessionStorage only.

/** A whole number from the page's address (`/console?refresh=2`), or the fallback when absent or out of range. */
function addressNumber(name, min, max, fallback) {
  const raw = new URLSearchParams(location.search).get(name);
  const n = Number(raw);
  return raw !== null && raw !== '' && Number.isInteger(n) && n >= min && n <= max ? n : fallback;
}

// Live refresh every 5 s (`?refresh=` 1..60 s); 25 rows per page (`?pageSize=` 1..500).
const REFRESH_MS = addressNumber('refresh', 1, 60, 5) * 1000;
const PAGE_SIZE = addressNumber('pageSize', 1, 500, 25);
const KEY_STORAGE = 'runner.console.key';
const SVG_NS = 'http://www.w3.org/2000/svg';
// The API answers under the same prefix the page is served from (a stage path, or none).
const API_BASE = location.pathname.replace(/\/console\/?$/, '');

const TRIGGERS = ['webhook', 'manual', 'queue', 'schedule'];
const RUN_STATUSES = ['queued', 'fetching', 'running', 'completed', 'completed_with_errors', 'failed', 'cancelled'];
// A run that may still be cancelled.
const OPEN_RUN_STATUSES = ['queued', 'fetching', 'running'];
const ITEM_STATUSES = ['queued', 'processing', 'succeeded', 'retrying', 'dead', 'parked', 'cancelled', 'pending', 'superseded'];
const OUTCOMES = [
  { key: 'succeeded', label: 'Succeeded' },
  { key: 'retried', label: 'Retried' },
  { key: 'dead', label: 'Dead' },
  { key: 'deferred', label: 'Deferred' },
];
const REASONS = [
  { key: 'breaker_open', label: 'Breaker open' },
  { key: 'breaker_probing', label: 'Breaker probing' },
  { key: 'handler_rate', label: 'Handler rate' },
  { key: 'handler_concurrency', label: 'Handler concurrency' },
  { key: 'tenant_limit', label: 'Tenant window' },
  { key: 'adaptive_stop', label: 'Partner asked to wait' },
  { key: 'adaptive_limit', label: 'Learnt limit' },
];
// The reasons an item waits (GET /tenants/{tenantId}), as the tenant page names them.
const WAIT_REASONS = {
  paused: 'Handler paused or integration disabled',
  backlog_horizon: 'Held past the backlog horizon',
  tenant_limit: 'Tenant window',
  handler_concurrency: 'Handler concurrency (its fair share)',
  handler_rate: 'Handler rate',
  adaptive_stop: 'Partner asked to wait (Retry-After)',
  adaptive_limit: 'Limit learnt from the partner',
  breaker_open: 'Breaker open',
  breaker_probing: 'Breaker probing',
  callback: 'The partner\'s callback',
  record_order: 'An earlier item of the same record',
};
// Each patterned series: its colour and a mark that tells it apart without colour.
const PATTERNS = {
  dead: { color: '#b3261e', mark: 'diagonal' },
  retried: { color: '#8a4b00', mark: 'horizontal' },
  deferred: { color: '#1f5fa8', mark: 'dots' },
  breaker_open: { color: '#b3261e', mark: 'cross' },
  breaker_probing: { color: '#7a3ea1', mark: 'diagonal' },
  handler_rate: { color: '#8a4b00', mark: 'horizontal' },
  handler_concurrency: { color: '#00756f', mark: 'vertical' },
  tenant_limit: { color: '#1f5fa8', mark: 'dots' },
  adaptive_stop: { color: '#5b6b00', mark: 'cross' },
  adaptive_limit: { color: '#6b4f00', mark: 'vertical' },
};

const state = {
  key: null,
  session: null,
  current: null,   // {token, name, refresh}
  timer: null,
  refreshing: null,
  again: false,
  failing: false,
};

// ------------------------------------------------------------------ DOM

/** An element; props are attributes (never event handler attributes), `on` listeners, children text or nodes. */
function h(tag, props, ...children) {
  return build(document.createElement(tag), props, children);
}

function svg(tag, props, ...children) {
  return build(document.createElementNS(SVG_NS, tag), props, children);
}

function build(el, props, children) {
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value == null || value === false) continue;
    if (name === 'on') {
      for (const [event, listener] of Object.entries(value)) el.addEventListener(event, listener);
    } else {
      el.setAttribute(name, value === true ? '' : String(value));
    }
  }
  for (const child of children.flat(Infinity)) {
    if (child == null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));   // a string becomes a Text node
  }
  return el;
}

const $ = (id) => document.getElementById(id);

/** Replaces a region's content, keeping focus on the element with the same data-key, if any. */
function fill(region, ...children) {
  const active = document.activeElement;
  const focusKey = active && region.contains(active) ? active.getAttribute('data-key') : null;
  region.replaceChildren(...children.flat(Infinity).filter((c) => c != null && c !== false));
  if (focusKey) {
    for (const el of region.querySelectorAll('[data-key]')) {
      if (el.getAttribute('data-key') === focusKey) {
        el.focus();
        break;
      }
    }
  }
}

function announce(text) {
  // Cleared first so that the same message twice is announced twice.
  $('status').textContent = '';
  requestAnimationFrame(() => { $('status').textContent = text; });
}

// ------------------------------------------------------------------ formatting

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'short', timeStyle: 'medium' });
const clock = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
const number = new Intl.NumberFormat();

function when(iso) {
  if (!iso) return h('span', { class: 'muted' }, '—');
  const date = new Date(iso);
  return h('time', { datetime: iso, title: iso }, Number.isNaN(date.getTime()) ? iso : dateTime.format(date));
}

/** How long a pending item has waited for its handler's callback (docs/handler-contract.md, callbacks). */
function waited(item) {
  if (!item.pendingSince) return null;
  return `waiting for its callback ${duration((Date.now() - new Date(item.pendingSince).getTime()) / 1000)}`;
}

function duration(seconds) {
  if (seconds == null) return '—';
  const s = Math.max(0, Math.round(seconds));
  if (s < 90) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 90) return `${m} min`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

const words = (wire) => String(wire ?? '').replaceAll('_', ' ');
const badge = (wire, text) => h('span', { class: `badge s-${String(wire).replace(/[^a-z_-]/g, '')}` }, text ?? words(wire));
// Ids are UUIDv7: the first characters are a timestamp shared by neighbours, the last ones are random.
const shortId = (id) => `…${String(id ?? '').slice(-8)}`;
const num = (n) => (n == null ? '—' : number.format(n));

// ------------------------------------------------------------------ API

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function call(method, path, { query, body } = {}) {
  const url = new URL(API_BASE + path, location.origin);
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value != null && value !== '') url.searchParams.set(name, value);
  }
  const headers = { Authorization: `Bearer ${state.key}`, Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(url, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store', credentials: 'omit', redirect: 'error',
    });
  } catch (e) {
    throw new ApiError(0, 'network', 'the server did not answer');
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const error = new ApiError(response.status, data?.error ?? `http_${response.status}`,
      data?.message ?? `${response.status} ${response.statusText}`);
    if (response.status === 401 && state.session) signOut('The server refused the key (401). Sign in again.');
    throw error;
  }
  return data;
}

const enc = encodeURIComponent;
const can = (capability) => state.session?.can.has(capability) ?? false;
const tenantScope = () => (state.session?.scope === 'tenant' ? state.session.tenantId : null);

/** Who the key is and what it may do (GET /session): the views and buttons follow `can`. */
async function loadSession() {
  const session = await call('GET', '/session');
  return { scope: session.scope, tenantId: session.tenantId ?? null, can: new Set(session.can ?? []) };
}

// ------------------------------------------------------------------ sign-in

async function signIn(event) {
  event.preventDefault();
  const input = $('signin-key');
  const key = input.value.trim();
  $('signin-error').textContent = '';
  if (!key) {
    $('signin-error').textContent = 'Enter an API key.';
    input.focus();
    return;
  }
  $('signin-submit').disabled = true;
  try {
    await start(key);
    input.value = '';
  } catch (e) {
    state.key = null;
    $('signin-error').textContent = e instanceof ApiError && e.status === 401
      ? 'The server refused this key.'
      : `Could not sign in: ${e.message}`;
    input.focus();
  } finally {
    $('signin-submit').disabled = false;
  }
}

async function start(key) {
  state.key = key;
  state.session = await loadSession();
  sessionStorage.setItem(KEY_STORAGE, key);
  $('signin').hidden = true;
  $('app').hidden = false;
  $('who').textContent = state.session.scope === 'tenant' ? `Signed in: tenant ${state.session.tenantId}` : 'Signed in: admin';
  for (const link of document.querySelectorAll('nav a[data-can]')) {
    link.parentElement.hidden = !can(link.getAttribute('data-can'));
  }
  route(true);
}

function signOut(message) {
  stopTimer();
  state.key = null;
  state.session = null;
  state.current = null;
  sessionStorage.removeItem(KEY_STORAGE);
  $('main').replaceChildren();
  $('status').textContent = '';
  $('app').hidden = true;
  $('signin').hidden = false;
  $('signin-error').textContent = message ?? '';
  $('signin-key').focus();
}

// ------------------------------------------------------------------ views and refresh

const VIEWS = {
  runs: { title: 'Runs', can: 'runs:read', mount: mountRuns },
  run: { title: 'Run', can: 'runs:read', mount: mountRun, nav: 'runs' },
  dead: { title: 'Dead items', can: 'items:read', mount: mountDead },
  item: { title: 'Item', can: 'items:read', mount: mountItem, nav: 'dead' },
  handlers: { title: 'Handlers', can: 'handlers:read', mount: mountHandlers },
  tenants: { title: 'Tenants', can: 'tenants:read', mount: mountTenants },
  tenant: { title: 'Why is it waiting', can: 'tenants:read', mount: mountTenant, nav: 'tenants' },
  queues: { title: 'Queues', can: 'queues:read', mount: mountQueues },
  charts: { title: 'Charts', can: 'metrics:read', mount: mountCharts },
};

/** `#/runs?x=1`, `#/runs/<id>`, `#/items/<id>`: the view, its id and its parameters. */
function parseHash() {
  const match = /^#\/([a-z]+)(?:\/([^?]*))?(?:\?(.*))?$/.exec(location.hash);
  if (!match) return null;
  const [, name, id, query] = match;
  const one = { runs: 'run', items: 'item', tenants: 'tenant' };
  const view = id ? (Object.hasOwn(one, name) ? one[name] : null) : name;
  if (!view || !Object.hasOwn(VIEWS, view)) return null;
  try {
    return { view, id: id ? decodeURIComponent(id) : null, params: new URLSearchParams(query ?? '') };
  } catch {
    return null;   // a malformed %-escape in a hand-typed address
  }
}

function route(moveFocus) {
  if (!state.session) return;
  let target = parseHash();
  if (!target || !can(VIEWS[target.view].can)) {
    const first = Object.keys(VIEWS).find((name) => !VIEWS[name].nav && can(VIEWS[name].can));
    if (!first) {
      fill($('main'), h('p', { class: 'notice' }, 'This key may not read anything the console shows.'));
      return;
    }
    history.replaceState(null, '', `#/${first}`);
    target = parseHash();
  }
  show(target, moveFocus);
}

function show(target, moveFocus) {
  stopTimer();
  const view = VIEWS[target.view];
  const token = {};
  const heading = h('h2', { tabindex: '-1', id: 'view-title' }, view.title);
  const problem = h('p', { class: 'error', id: 'view-error' });
  const main = $('main');
  main.replaceChildren(heading, problem);
  const ctx = { token, heading, problem, alive: () => state.current?.token === token };
  state.current = { token, name: target.view, refresh: view.mount(main, target, ctx) };
  state.failing = false;
  for (const link of document.querySelectorAll('nav a[data-view]')) {
    if (link.getAttribute('data-view') === (view.nav ?? target.view)) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  document.title = `${view.title} · Runner console`;
  if (moveFocus) heading.focus();
  refreshNow();
}

/** Refreshes the view on screen now; a call while one runs makes it run once more after. */
async function refreshNow() {
  if (state.refreshing) {
    state.again = true;
    return state.refreshing;
  }
  stopTimer();
  const current = state.current;
  if (!current) return undefined;
  state.refreshing = (async () => {
    try {
      await current.refresh();
      if (state.current === current) {
        $('view-error').textContent = '';
        $('updated').textContent = `Updated ${new Date().toLocaleTimeString()}`;
        state.failing = false;
      }
    } catch (e) {
      if (state.current === current && state.session) {
        $('view-error').textContent = `Could not refresh: ${e.message}`;
        if (!state.failing) announce(`Could not refresh: ${e.message}`);
        state.failing = true;
      }
    }
  })();
  await state.refreshing;
  state.refreshing = null;
  if (state.again) {
    state.again = false;
    return refreshNow();
  }
  schedule();
  return undefined;
}

function schedule() {
  stopTimer();
  if (state.current && $('live').checked && !document.hidden) {
    state.timer = setTimeout(refreshNow, REFRESH_MS);
  }
}

function stopTimer() {
  clearTimeout(state.timer);
  state.timer = null;
}

/**
 * Runs an action from a button: disabled while it runs, outcome announced, then a refresh; focus
 * comes back to the button's successor (same data-key) when the refresh redrew it.
 */
async function act(button, action) {
  const key = button.getAttribute('data-key');
  button.disabled = true;
  try {
    announce(await action());
  } catch (e) {
    announce(`Failed: ${e.message}`);
  } finally {
    button.disabled = false;
  }
  await refreshNow();
  if (key && (document.activeElement === document.body || !document.activeElement?.isConnected || document.activeElement === button)) {
    const successor = [...$('main').querySelectorAll('[data-key]')].find((el) => el.getAttribute('data-key') === key);
    (successor ?? $('view-title'))?.focus();
  }
}

/**
 * What a bulk action (a large redrive, a cancel, a resume) still does in the background, for the answer to the
 * click; its progress is then announced until it is done (`GET /actions/{actionId}`).
 */
function actionNote(action) {
  if (!action || action.status !== 'running') return '';
  followAction(action.actionId);
  return ` ${num(action.total - action.done)} more follow in the background (${action.kind} ${shortId(action.actionId)}).`;
}

async function followAction(actionId) {
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, REFRESH_MS));
    let action;
    try {
      action = await call('GET', `/actions/${enc(actionId)}`);
    } catch (e) {
      return;
    }
    const finished = action.status !== 'running';
    announce(`${action.kind} ${shortId(action.actionId)}: ${num(action.done)} of ${num(action.total)} done${finished ? '.' : '…'}`);
    if (finished) {
      await refreshNow();
      return;
    }
  }
}

// ------------------------------------------------------------------ shared pieces

function field(label, control) {
  const id = `f-${label.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  control.setAttribute('id', id);
  return h('div', { class: 'field' }, h('label', { for: id }, label), control);
}

function textInput(name, value, props = {}) {
  return h('input', { type: 'text', name, value: value ?? '', autocomplete: 'off', spellcheck: 'false', ...props });
}

function choice(name, options, value, anyLabel) {
  return h('select', { name },
    h('option', { value: '' }, anyLabel),
    options.map((option) => h('option', { value: option, selected: option === value }, words(option))));
}

/** A filter form over the given fields; submitting keeps the values in the address (replaceState) and refreshes. */
function filterForm(label, controls, onApply) {
  const form = h('form', { class: 'filters', 'aria-label': label, novalidate: true },
    controls,
    h('div', { class: 'field' }, h('button', { type: 'submit' }, 'Apply')),
    h('div', { class: 'field' }, h('button', {
      type: 'button',
      on: {
        click: () => {
          for (const control of form.querySelectorAll('input:not([readonly]), select')) control.value = '';
          onApply(values());
        },
      },
    }, 'Clear')));
  const values = () => Object.fromEntries([...new FormData(form)].map(([k, v]) => [k, String(v).trim()]));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    onApply(values());
  });
  return form;
}

function keepInAddress(view, params) {
  const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v)).toString();
  history.replaceState(null, '', `#/${view}${query ? `?${query}` : ''}`);
}

/** Keyset paging: a stack of cursors so "Newer" can go back. */
function cursorPager(onChange) {
  const stack = [];
  let cursor = null;
  return {
    get cursor() { return cursor; },
    reset() { stack.length = 0; cursor = null; },
    render(next, olderLabel = 'Older', newerLabel = 'Newer') {
      return h('div', { class: 'pager' },
        h('button', {
          type: 'button', 'data-key': 'pager-first', disabled: stack.length === 0,
          on: { click: () => { stack.length = 0; cursor = null; onChange(); } },
        }, 'First page'),
        h('button', {
          type: 'button', 'data-key': 'pager-back', disabled: stack.length === 0,
          on: { click: () => { cursor = stack.pop() ?? null; onChange(); } },
        }, newerLabel),
        h('button', {
          type: 'button', 'data-key': 'pager-next', disabled: !next,
          on: { click: () => { stack.push(cursor); cursor = next; onChange(); } },
        }, olderLabel),
        h('span', { class: 'muted' }, `Page ${stack.length + 1}`));
    },
  };
}

function table(caption, headers, rows, empty) {
  if (rows.length === 0) return h('p', { class: 'notice' }, empty);
  return h('div', { class: 'table-wrap' },
    h('table', {},
      h('caption', {}, caption),
      h('thead', {}, h('tr', {}, headers.map((header) => (typeof header === 'string'
        ? h('th', { scope: 'col' }, header)
        : h('th', { scope: 'col', class: header.class }, header.text))))),
      h('tbody', {}, rows)));
}

/** A term and its description, for a facts list. */
function fact(term, ...description) {
  return [h('dt', {}, term), h('dd', {}, description)];
}

/** The API said "redis": "unavailable": its Redis figures are unknown (shown as —), not zero. */
function redisNotice(answer, what) {
  return answer?.redis === 'unavailable'
    ? h('p', { class: 'notice', role: 'note' }, `Redis did not answer: ${what} are unknown (—) until it does.`)
    : null;
}

// ------------------------------------------------------------------ drawing: progress, limits, charts

/** Succeeded / dead / cancelled / open of a run, as a bar with patterns and the same numbers as text (superseded items, ended by coalescing, count with the succeeded in the bar). */
function progress(counts) {
  const total = counts?.total ?? 0;
  const superseded = counts?.superseded ?? 0;
  const succeeded = (counts?.succeeded ?? 0) + superseded;
  const dead = counts?.dead ?? 0;
  const cancelled = counts?.cancelled ?? 0;
  const open = Math.max(0, total - succeeded - dead - cancelled);
  const parts = [['succeeded', succeeded], ['dead', dead], ['cancelled', cancelled], ['open', open]];
  let x = 0;
  const bar = svg('svg', { viewBox: '0 0 100 10', preserveAspectRatio: 'none', 'aria-hidden': 'true', focusable: 'false' },
    parts.map(([key, n]) => {
      const width = total === 0 ? (key === 'open' ? 100 : 0) : (100 * n) / total;
      const rect = svg('rect', { x, y: 0, width, height: 10, class: `f-${key}` });
      x += width;
      return rect;
    }),
    svg('rect', { x: 0, y: 0, width: 100, height: 10, class: 'frame', 'vector-effect': 'non-scaling-stroke' }));
  return h('div', { class: 'progress' }, bar,
    h('span', { class: 'progress-label' },
      `${num(succeeded - superseded)} succeeded · ${superseded ? `${num(superseded)} superseded · ` : ''}${num(dead)} dead · ${cancelled ? `${num(cancelled)} cancelled · ` : ''}${num(open)} open of ${num(total)}`));
}

/** Use against a limit: a meter and the numbers, with "near limit" / "at limit" in words; use null = unknown. */
function limit(used, max, what) {
  if (used == null) {
    return h('div', { class: 'limit' }, h('span', {}, `— ${what} (unknown)${max == null ? ', no limit' : ` of ${num(max)}`}`));
  }
  if (max == null) {
    return h('div', { class: 'limit' }, h('span', {}, `${num(used)} ${what}, no limit`));
  }
  const ratio = max > 0 ? used / max : 1;
  const note = ratio >= 1 ? 'at limit' : ratio >= 0.8 ? 'near limit' : null;
  return h('div', { class: 'limit' },
    h('meter', {
      min: 0, max, value: Math.min(used ?? 0, max), low: max * 0.5, high: max * 0.8, optimum: 0,
      'aria-label': `${num(used)} of ${num(max)} ${what}`,
    }),
    h('span', {}, `${num(used)} of ${num(max)} ${what} (${Math.round(ratio * 100)} %)`,
      note ? h('span', { class: 'note' }, ` — ${note}`) : null));
}

/** The fill patterns, drawn once into a hidden SVG: each series keeps a distinct mark without colour. */
function patternDefs() {
  const marks = {
    diagonal: () => [svg('line', { x1: 0, y1: 6, x2: 6, y2: 0 }), svg('line', { x1: -1, y1: 1, x2: 1, y2: -1 }), svg('line', { x1: 5, y1: 7, x2: 7, y2: 5 })],
    horizontal: () => [svg('line', { x1: 0, y1: 3, x2: 6, y2: 3 })],
    vertical: () => [svg('line', { x1: 3, y1: 0, x2: 3, y2: 6 })],
    cross: () => [svg('line', { x1: 0, y1: 0, x2: 6, y2: 6 }), svg('line', { x1: 0, y1: 6, x2: 6, y2: 0 })],
    dots: () => [svg('circle', { cx: 3, cy: 3, r: 1.4, stroke: 'none', class: 'dot' })],
  };
  return svg('svg', { class: 'defs', 'aria-hidden': 'true', focusable: 'false' },
    svg('defs', {}, Object.entries(PATTERNS).map(([key, { color, mark }]) =>
      svg('pattern', { id: `p-${key}`, width: 6, height: 6, patternUnits: 'userSpaceOnUse' },
        svg('rect', { width: 6, height: 6, fill: color, 'fill-opacity': 0.25 }),
        svg('g', { stroke: color, 'stroke-width': 1.6, fill: color }, marks[mark]())))));
}

function swatch(key) {
  return svg('svg', { viewBox: '0 0 14 9', 'aria-hidden': 'true', focusable: 'false' },
    svg('rect', { width: 14, height: 9, class: `f-${key}` }));
}

/**
 * Stacked bars, one per minute: series (key, label) valued by `value(minute, key)`. Returns a
 * figure with the SVG (summarised for screen readers), a legend with totals, and the numbers as a table.
 */
function stackedChart(title, minutes, series, value) {
  const W = 720; const H = 220; const L = 44; const R = 8; const T = 10; const B = 26;
  const totals = Object.fromEntries(series.map(({ key }) => [key, 0]));
  let peak = 0;
  for (const minute of minutes) {
    let sum = 0;
    for (const { key } of series) {
      const n = value(minute, key);
      totals[key] += n;
      sum += n;
    }
    peak = Math.max(peak, sum);
  }
  const top = niceCeiling(peak);
  const plotW = W - L - R; const plotH = H - T - B;
  const barW = plotW / Math.max(1, minutes.length);
  const y = (n) => T + plotH - (plotH * n) / top;
  const plot = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'plot', role: 'img',
    'aria-label': `${title}: ${series.map(({ key, label }) => `${num(totals[key])} ${label.toLowerCase()}`).join(', ')} over ${minutes.length} minutes` });
  for (const tick of [0, top / 2, top]) {
    plot.append(svg('line', { x1: L, x2: W - R, y1: y(tick), y2: y(tick), class: 'grid' }),
      svg('text', { x: L - 4, y: y(tick) + 4, 'text-anchor': 'end' }, num(tick)));
  }
  minutes.forEach((minute, i) => {
    let base = 0;
    const at = new Date(minute.at);
    for (const { key, label } of series) {
      const n = value(minute, key);
      if (n > 0) {
        plot.append(svg('rect', { x: L + i * barW + 0.5, width: Math.max(1, barW - 1), y: y(base + n), height: y(base) - y(base + n), class: `f-${key}` },
          svg('title', {}, `${clock.format(at)} ${label}: ${num(n)}`)));
      }
      base += n;
    }
    if (at.getUTCMinutes() % 10 === 0) {
      plot.append(svg('text', { x: L + i * barW + barW / 2, y: H - 8, 'text-anchor': 'middle' }, clock.format(at)));
    }
  });
  plot.append(svg('rect', { x: L, y: T, width: plotW, height: plotH, class: 'frame' }));
  const rows = minutes.filter((minute) => series.some(({ key }) => value(minute, key) > 0)).map((minute) =>
    h('tr', {}, h('th', { scope: 'row' }, when(minute.at)), series.map(({ key }) => h('td', { class: 'num' }, num(value(minute, key))))));
  return h('figure', { class: 'chart' },
    h('figcaption', {}, title),
    plot,
    h('ul', { class: 'legend', 'aria-label': `${title}: legend with totals` },
      series.map(({ key, label }) => h('li', {}, swatch(key), `${label}: ${num(totals[key])}`))),
    h('details', {}, h('summary', {}, `${title}: the numbers`),
      table(`${title}, minutes with any activity`, ['Minute', ...series.map(({ label }) => ({ text: label, class: 'num' }))],
        rows, 'Nothing happened in this period.')));
}

function niceCeiling(n) {
  if (n <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(n));
  return [1, 2, 5, 10].map((f) => f * power).find((candidate) => candidate >= n);
}

// ------------------------------------------------------------------ runs

function runRow(run) {
  return h('tr', {},
    h('td', {}, when(run.createdAt)),
    h('td', {}, h('a', { href: `#/runs/${enc(run.runId)}`, title: run.runId, 'data-key': `run-${run.runId}` },
      h('code', {}, shortId(run.runId)))),
    h('td', {}, run.tenantId),
    h('td', {}, `${run.integrationKey} / ${run.handlerKey}`),
    h('td', {}, words(run.trigger)),
    h('td', {}, badge(run.status)),
    h('td', {}, progress(run.counts)));
}

const RUN_HEADERS = ['Created', 'Run', 'Tenant', 'Integration / handler', 'Trigger', 'Status', 'Progress'];

function mountRuns(main, target, ctx) {
  const tenant = tenantScope();
  let filters = {
    tenantId: tenant ?? target.params.get('tenantId') ?? '',
    integrationKey: target.params.get('integrationKey') ?? '',
    handlerKey: target.params.get('handlerKey') ?? '',
    trigger: target.params.get('trigger') ?? '',
    status: target.params.get('status') ?? '',
  };
  const pager = cursorPager(() => refreshNow());
  const region = h('div', { 'aria-labelledby': 'view-title' });
  // A run id from a log line or a webhook's answer: straight to the run.
  const open = h('form', { class: 'inline', 'aria-label': 'Open a run by id', novalidate: true },
    field('Run id', textInput('runId', '', { placeholder: 'e.g. 3f2c…', size: 38 })),
    h('div', { class: 'field' }, h('button', { type: 'submit' }, 'Open run')));
  open.addEventListener('submit', (event) => {
    event.preventDefault();
    const runId = new FormData(open).get('runId').toString().trim();
    if (runId) location.hash = `#/runs/${enc(runId)}`;
  });
  main.append(
    filterForm('Filter runs', [
      field('Tenant', textInput('tenantId', filters.tenantId, { readonly: tenant != null })),
      field('Integration', textInput('integrationKey', filters.integrationKey)),
      field('Handler', textInput('handlerKey', filters.handlerKey)),
      field('Trigger', choice('trigger', TRIGGERS, filters.trigger, 'any trigger')),
      field('Status', choice('status', RUN_STATUSES, filters.status, 'any status')),
    ], (values) => {
      filters = { ...values, tenantId: tenant ?? values.tenantId };
      keepInAddress('runs', filters);
      pager.reset();
      refreshNow();
    }),
    open,
    region);

  return async () => {
    const page = await call('GET', '/runs', { query: { ...filters, limit: PAGE_SIZE, before: pager.cursor } });
    if (!ctx.alive()) return;
    fill(region,
      table('Runs, newest first', RUN_HEADERS, (page.runs ?? []).map(runRow), 'No run matches these filters.'),
      pager.render(page.next));
  };
}

// ------------------------------------------------------------------ one run

/** GET …/{id} answered 404 (unknown, or another tenant's) or 400 (not an id): said in the view, not as a failure. */
const absent = (e) => e instanceof ApiError && (e.status === 404 || e.status === 400);

function itemLink(item) {
  return h('a', { href: `#/items/${enc(item.itemId)}`, title: item.itemId, 'data-key': `item-${item.itemId}` }, item.externalId);
}

function mountRun(main, target, ctx) {
  const runId = target.id;
  ctx.heading.textContent = 'Run ';
  ctx.heading.append(h('code', {}, runId));
  let status = target.params.get('status') ?? '';
  const pager = cursorPager(() => refreshNow());
  const summary = h('div', {});
  const items = h('div', {});
  const asking = { open: false };
  const statusSelect = choice('status', ITEM_STATUSES, status, 'any status');
  statusSelect.addEventListener('change', () => {
    status = statusSelect.value;
    keepInAddress(`runs/${enc(runId)}`, { status });
    pager.reset();
    refreshNow();
  });
  main.append(
    h('p', {}, h('a', { href: '#/runs' }, 'All runs')),
    summary,
    h('h3', { id: 'items-title' }, 'Items'),
    h('form', { class: 'inline', 'aria-label': 'Filter items', novalidate: true, on: { submit: (e) => e.preventDefault() } },
      field('Item status', statusSelect)),
    items);

  return async () => {
    let run;
    let page;
    try {
      [run, page] = await Promise.all([
        call('GET', `/runs/${enc(runId)}`),
        call('GET', `/runs/${enc(runId)}/items`, { query: { status, limit: PAGE_SIZE, after: pager.cursor } }),
      ]);
    } catch (e) {
      if (!absent(e)) throw e;
      if (ctx.alive()) {
        fill(summary, h('p', { class: 'notice' }, `No run ${runId}: ${e.message}`));
        fill(items);
      }
      return;
    }
    if (!ctx.alive()) return;
    fill(summary,
      h('dl', { class: 'facts' },
        fact('Run id', h('code', {}, run.runId)),
        fact('Status', badge(run.status)),
        fact('Tenant', run.tenantId),
        fact('Integration / handler', `${run.integrationKey} / ${run.handlerKey}`),
        fact('Trigger', `${words(run.trigger)} (priority ${run.priority})`),
        fact('Created', when(run.createdAt)),
        fact('Finished', when(run.finishedAt)),
        run.error ? fact('Error', run.error) : null,
        fact('Items', progress(run.counts))),
      h('div', { class: 'actions' },
        can('runs:redrive') && run.counts?.dead > 0
          ? h('button', {
            type: 'button', 'data-key': 'redrive-run',
            on: { click: (e) => act(e.currentTarget, () => redriveRun(run.runId)) },
          }, `Redrive the ${num(run.counts.dead)} dead items of this run`)
          : null,
        can('runs:cancel') && OPEN_RUN_STATUSES.includes(run.status) ? cancelRunControl(run, asking) : null));
    fill(items,
      table(`Items of run ${shortId(run.runId)}${status ? `, status ${words(status)}` : ''}`,
        ['Item', 'Status', { text: 'Attempts', class: 'num' }, 'Last error', 'Dead at', 'Updated', 'Actions'],
        (page.items ?? []).map((item) => h('tr', {},
          h('td', {}, itemLink(item)),
          h('td', {}, badge(item.status), item.pendingSince ? h('span', { class: 'muted' }, ` ${waited(item)}`) : null),
          h('td', { class: 'num' }, num(item.attempts)),
          h('td', { class: 'error-text' }, item.lastError ?? ''),
          h('td', {}, when(item.dlqAt)),
          h('td', {}, when(item.updatedAt)),
          h('td', {}, item.status === 'dead' && can('items:redrive') ? redriveItemButton(item) : null))),
        'No item here.'),
      pager.render(page.next, 'Next items', 'Previous items'));
  };
}

/**
 * Cancel asks once more before it calls: what it stops cannot be resumed. Whether it is asking lives
 * in the view (`asking`), so a refresh while the question is open keeps it open.
 */
function cancelRunControl(run, asking) {
  if (!asking.open) {
    return h('button', {
      type: 'button', class: 'danger', 'data-key': 'cancel-run',
      on: { click: async () => { asking.open = true; await refreshNow(); $('main').querySelector('[data-key="cancel-confirm"]')?.focus(); } },
    }, 'Cancel this run');
  }
  return h('span', { class: 'confirm', role: 'group', 'aria-label': 'Confirm cancelling the run' },
    h('span', {}, 'Items not yet called will never be. '),
    h('button', {
      type: 'button', class: 'danger', 'data-key': 'cancel-confirm',
      on: {
        click: (e) => act(e.currentTarget, async () => {
          asking.open = false;
          const answer = await call('POST', `/runs/${enc(run.runId)}/cancel`);
          return `Run ${shortId(run.runId)} cancelled: ${num(answer.counts?.cancelled)} items will not be called.${actionNote(answer.action)}`;
        }),
      },
    }, 'Yes, cancel it'),
    h('button', {
      type: 'button', 'data-key': 'cancel-keep',
      on: { click: async () => { asking.open = false; await refreshNow(); $('main').querySelector('[data-key="cancel-run"]')?.focus(); } },
    }, 'Keep it running'));
}

async function redriveRun(runId) {
  const answer = await call('POST', `/runs/${enc(runId)}/redrive`);
  return `Run ${shortId(runId)}: ${num(answer.redriven)} dead items sent back to work.${actionNote(answer.action)}`;
}

function redriveItemButton(item) {
  return h('button', {
    type: 'button', 'data-key': `redrive-${item.itemId}`, 'aria-label': `Redrive item ${item.externalId}`,
    on: {
      click: (e) => act(e.currentTarget, async () => {
        const answer = await call('POST', `/items/${enc(item.itemId)}/redrive`);
        return answer.redriven ? `Item ${item.externalId} sent back to work.` : `Item ${item.externalId} was not dead any more.`;
      }),
    },
  }, 'Redrive');
}

// ------------------------------------------------------------------ one item

function mountItem(main, target, ctx) {
  const itemId = target.id;
  ctx.heading.textContent = 'Item ';
  ctx.heading.append(h('code', {}, itemId));
  const region = h('div', {});
  main.append(region);
  return async () => {
    let item;
    try {
      item = await call('GET', `/items/${enc(itemId)}`);
    } catch (e) {
      if (!absent(e)) throw e;
      if (ctx.alive()) fill(region, h('p', { class: 'notice' }, `No item ${itemId}: ${e.message}`));
      return;
    }
    if (!ctx.alive()) return;
    const history = item.history ?? [];
    fill(region,
      h('p', {}, h('a', { href: `#/runs/${enc(item.runId)}` }, 'Its run'), ' · ',
        h('a', { href: '#/dead' }, 'All dead items')),
      h('dl', { class: 'facts', id: 'item-facts' },
        fact('External id', item.externalId),
        fact('Status', badge(item.status)),
        item.pendingSince ? fact('Pending since', h('span', {}, when(item.pendingSince), ` (${waited(item)})`)) : null,
        fact('Attempts', num(item.attempts)),
        fact('Last error', item.lastError == null ? h('span', { class: 'muted' }, 'none') : h('span', { class: 'error-text' }, item.lastError)),
        fact('Dead at (dlq_at)', when(item.dlqAt)),
        item.supersededBy ? fact('Superseded by', h('a', { href: `#/items/${enc(item.supersededBy)}`, title: 'the item whose call carried this update, or a later one' }, h('code', {}, item.supersededBy))) : null,
        item.waitingForRecordSince ? fact('Waiting for its record since', when(item.waitingForRecordSince)) : null,
        fact('Updated', when(item.updatedAt)),
        fact('Run', h('a', { href: `#/runs/${enc(item.runId)}`, title: item.runId }, h('code', {}, item.runId))),
        fact('Tenant', item.tenantId),
        fact('Integration / handler', `${item.integrationKey} / ${item.handlerKey}`)),
      item.status === 'dead' && can('items:redrive') ? h('div', { class: 'actions' }, redriveItemButton(item)) : null,
      h('h3', {}, 'Failed attempts'),
      history.length === 0 ? h('p', { class: 'muted' }, 'No failed attempt.')
        : h('ol', { class: 'history' }, history.map((entry) =>
          h('li', {}, `Attempt ${entry.attempt ?? '?'}, `, when(entry.at), ': ', h('span', { class: 'error-text' }, String(entry.error ?? ''))))),
      h('h3', {}, 'Payload'),
      h('pre', { id: 'item-payload' }, item.payload == null ? 'none' : JSON.stringify(item.payload, null, 2)));
  };
}

// ------------------------------------------------------------------ dead items

function mountDead(main, target, ctx) {
  const tenant = tenantScope();
  let filters = {
    tenantId: tenant ?? target.params.get('tenantId') ?? '',
    integrationKey: target.params.get('integrationKey') ?? '',
    handlerKey: target.params.get('handlerKey') ?? '',
  };
  const pager = cursorPager(() => refreshNow());
  const region = h('div', {});
  const bulk = h('div', {});
  let confirming = false;

  const renderBulk = () => {
    if (!can('items:redrive')) return fill(bulk);
    const names = { tenantId: 'tenant', integrationKey: 'integration', handlerKey: 'handler' };
    const described = Object.entries(filters).filter(([, v]) => v).map(([k, v]) => `${names[k]} ${v}`).join(', ');
    if (!described) {
      return fill(bulk, h('p', { class: 'muted' }, 'Set at least one filter to redrive dead items in bulk.'));
    }
    if (!confirming) {
      return fill(bulk, h('div', { class: 'actions' }, h('button', {
        type: 'button', class: 'danger', 'data-key': 'bulk-ask',
        on: { click: () => { confirming = true; renderBulk(); bulk.querySelector('[data-key="bulk-confirm"]')?.focus(); } },
      }, 'Redrive every dead item matching these filters…')));
    }
    return fill(bulk, h('div', { class: 'confirm', role: 'group', 'aria-label': 'Confirm bulk redrive' },
      h('p', {}, `Send every dead item matching ${described} back to work (up to 1,000 per click, a page at a time)?`),
      h('div', { class: 'actions' },
        h('button', {
          type: 'button', class: 'danger', 'data-key': 'bulk-confirm',
          on: {
            click: (e) => act(e.currentTarget, async () => {
              const body = Object.fromEntries(Object.entries(filters).filter(([, v]) => v));
              const answer = await call('POST', '/redrive', { body });
              confirming = false;
              renderBulk();
              return `${num(answer.redriven)} dead items of ${num(answer.runs)} runs sent back to work`
                + (answer.remaining ? `; ${num(answer.remaining)} remain, redrive again for more.` : '.') + actionNote(answer.action);
            }),
          },
        }, 'Yes, redrive them'),
        h('button', {
          type: 'button', 'data-key': 'bulk-cancel',
          on: { click: () => { confirming = false; renderBulk(); bulk.querySelector('[data-key="bulk-ask"]')?.focus(); } },
        }, 'Cancel'))));
  };

  main.append(
    filterForm('Filter dead items', [
      field('Tenant', textInput('tenantId', filters.tenantId, { readonly: tenant != null })),
      field('Integration', textInput('integrationKey', filters.integrationKey)),
      field('Handler', textInput('handlerKey', filters.handlerKey)),
    ], (values) => {
      filters = { ...values, tenantId: tenant ?? values.tenantId };
      keepInAddress('dead', filters);
      confirming = false;
      pager.reset();
      renderBulk();
      refreshNow();
    }),
    bulk,
    region);
  renderBulk();

  return async () => {
    const page = await call('GET', '/items', { query: { status: 'dead', ...filters, limit: PAGE_SIZE, after: pager.cursor } });
    if (!ctx.alive()) return;
    fill(region,
      table('Dead items, most recently dead first',
        ['Dead at', 'Item', 'Run', 'Tenant', 'Integration / handler', { text: 'Attempts', class: 'num' }, 'Last error', 'Actions'],
        (page.items ?? []).map((item) => h('tr', {},
          h('td', {}, when(item.dlqAt)),
          h('td', {}, itemLink(item)),
          h('td', {}, h('a', { href: `#/runs/${enc(item.runId)}?status=dead`, title: item.runId }, h('code', {}, shortId(item.runId)))),
          h('td', {}, item.tenantId),
          h('td', {}, `${item.integrationKey} / ${item.handlerKey}`),
          h('td', { class: 'num' }, num(item.attempts)),
          h('td', { class: 'error-text' }, item.lastError ?? ''),
          h('td', {}, can('items:redrive') ? h('div', { class: 'cell-actions' },
            redriveItemButton(item),
            can('runs:redrive') ? h('button', {
              type: 'button', 'data-key': `redrive-run-${item.itemId}`, 'aria-label': `Redrive every dead item of run ${shortId(item.runId)}`,
              on: { click: (e) => act(e.currentTarget, () => redriveRun(item.runId)) },
            }, 'Redrive run') : null) : null))),
        'No dead item matches these filters.'),
      pager.render(page.next));
  };
}

// ------------------------------------------------------------------ handlers

function breakerStateText(breaker) {
  const failures = breaker.failures ? ` (${num(breaker.failures)} failures)` : '';
  switch (breaker.state) {
    case 'open': {
      const until = breaker.halfOpenAt ? new Date(breaker.halfOpenAt) : null;
      return [badge('open', 'Open'), until
        ? ` until ${until.toLocaleTimeString()} (in ${duration((until.getTime() - Date.now()) / 1000)})${failures}` : failures];
    }
    case 'half-open': return [badge('half-open', 'Half-open'), ' (probing)'];
    default: return [badge('closed', 'Closed'), failures];
  }
}

// The integration's state, then each tenant scope with anything to tell (one tenant's own failures).
function breakerText(breaker) {
  if (!breaker) return h('span', { class: 'muted' }, '— (unknown)');
  const tenants = breaker.tenants ?? [];
  if (tenants.length === 0) return breakerStateText(breaker);
  return [breakerStateText(breaker), h('ul', { class: 'tenant-scopes', 'aria-label': 'Tenant scopes' },
    tenants.map((scope) => h('li', {}, `${scope.tenantId}: `, breakerStateText(scope))))];
}

/** A handler's adaptive scopes (AIMD): its own limits learnt from the partner, each tenant's, who waits for a lease. */
function adaptiveText(adaptive, concurrencyLimit) {
  if (adaptive === undefined || adaptive === null) return h('span', { class: 'muted' }, '— (unknown)');
  const scopeText = (scope) => {
    const parts = [];
    if (scope.stoppedUntil) parts.push(`stopped until ${new Date(scope.stoppedUntil).toLocaleTimeString()} (Retry-After ${num(scope.lastRetryAfterMs)} ms)`);
    if (scope.concurrency != null) parts.push(`concurrency ${num(scope.concurrency)}${concurrencyLimit == null ? '' : ` of ${num(concurrencyLimit)}`}`);
    if (scope.ratePerMinute != null) parts.push(`${num(scope.ratePerMinute)}/min`);
    if (scope.why) parts.push(`cut after ${scope.why === '429' ? 'a 429' : 'timeouts'}`);
    return parts.length ? parts.join(', ') : 'as configured';
  };
  const lines = [];
  if (adaptive.handler) lines.push(h('li', {}, 'handler: ', scopeText(adaptive.handler)));
  for (const scope of adaptive.tenants ?? []) lines.push(h('li', {}, `${scope.tenantId}: `, scopeText(scope)));
  if ((adaptive.tenantsWaitingForALease ?? []).length) {
    lines.push(h('li', {}, `waiting for a lease: ${adaptive.tenantsWaitingForALease.join(', ')}`));
  }
  return lines.length ? h('ul', { class: 'tenant-scopes', 'aria-label': 'Adaptive limits' }, lines) : 'As configured';
}

function pauseButton(integrationKey, handlerKey, paused) {
  const name = `${integrationKey}/${handlerKey}`;
  return h('button', {
    type: 'button', 'data-key': `pause-resume-${name}`, 'aria-label': `${paused ? 'Resume' : 'Pause'} ${name}`,
    on: {
      click: (e) => act(e.currentTarget, async () => {
        const answer = await call('POST', `/handlers/${enc(integrationKey)}/${enc(handlerKey)}/${paused ? 'resume' : 'pause'}`);
        return answer.paused ? `${name} paused: its items wait parked until it is resumed.`
          : `${name} resumed; ${num(answer.resumed ?? 0)} parked items sent back to work.${actionNote(answer.action)}`;
      }),
    },
  }, paused ? 'Resume' : 'Pause');
}

function mountHandlers(main, target, ctx) {
  const region = h('div', {});
  main.append(h('p', { class: 'muted' }, 'Shared by every tenant: pausing a handler parks the items of all of them until it is resumed.'),
    region);
  return async () => {
    const answer = await call('GET', '/handlers');
    if (!ctx.alive()) return;
    fill(region,
      redisNotice(answer, 'breakers and limit use'),
      table('Handlers',
        ['Handler', 'State', 'Breaker', 'Concurrency', 'Rate', 'Learnt limits', { text: 'Parked', class: 'num' }, 'Action'],
        (answer.handlers ?? []).map((handler) => h('tr', {},
          h('th', { scope: 'row' }, h('a', {
            href: `#/runs?${new URLSearchParams({ integrationKey: handler.integrationKey, handlerKey: handler.handlerKey })}`,
            title: 'Runs of this handler',
          }, `${handler.integrationKey} / ${handler.handlerKey}`)),
          h('td', {}, handler.paused ? [badge('paused', 'Paused'), ' since ', when(handler.pausedAt)] : badge('running-handler', 'Running')),
          h('td', {}, breakerText(handler.breaker)),
          h('td', {}, limit(handler.concurrency?.inUse, handler.concurrency?.limit ?? null, 'calls in flight')),
          h('td', {}, limit(handler.rate?.usedLastMinute, handler.rate?.limitPerMinute ?? null, 'calls in the last minute')),
          h('td', {}, adaptiveText(handler.adaptive, handler.concurrency?.limit ?? null)),
          h('td', { class: 'num' }, num(handler.parked ?? 0)),
          h('td', {}, can('handlers:pause') ? pauseButton(handler.integrationKey, handler.handlerKey, handler.paused) : null))),
        'No integration type has a handler yet.'));
  };
}

// ------------------------------------------------------------------ tenants, queues

function mountTenants(main, target, ctx) {
  const pager = cursorPager(() => refreshNow());
  const region = h('div', {});
  main.append(region);
  return async () => {
    const page = await call('GET', '/tenants', { query: { limit: PAGE_SIZE, after: pager.cursor } });
    if (!ctx.alive()) return;
    fill(region,
      redisNotice(page, 'window use and deferred items'),
      table('Tenants', ['Tenant', 'Integrations', 'Window (last minute)', { text: 'Deferred', class: 'num' }, 'See'],
        (page.tenants ?? []).map((tenant) => h('tr', {},
          h('th', { scope: 'row' }, h('a', { href: `#/tenants/${enc(tenant.tenantId)}`, title: 'Why its items wait' }, tenant.tenantId)),
          h('td', {}, (tenant.integrations ?? []).join(', ')),
          h('td', {}, limit(tenant.window?.usedLastMinute, tenant.window?.limitPerMinute ?? null, 'items')),
          h('td', { class: 'num' }, tenant.deferred == null ? '—' : `${num(tenant.deferred)} waiting for a slot`),
          h('td', {}, h('div', { class: 'cell-actions' },
            h('a', { href: `#/runs?tenantId=${enc(tenant.tenantId)}`, 'aria-label': `Runs of ${tenant.tenantId}` }, 'Runs'),
            can('items:read') ? h('a', { href: `#/dead?tenantId=${enc(tenant.tenantId)}`, 'aria-label': `Dead items of ${tenant.tenantId}` }, 'Dead items') : null)))),
        'No tenant yet.'),
      pager.render(page.next, 'Next', 'Previous'));
  };
}

/** One tenant: its window, and per handler how many of its items wait in which state and why. */
function mountTenant(main, target, ctx) {
  const tenantId = target.id;
  ctx.heading.textContent = `Why is it waiting: ${tenantId}`;
  const region = h('div', {});
  main.append(h('p', {}, h('a', { href: '#/tenants' }, 'All tenants'), ' · ',
    h('a', { href: `#/runs?tenantId=${enc(tenantId)}` }, 'Its runs')), region);
  return async () => {
    const answer = await call('GET', `/tenants/${enc(tenantId)}`);
    if (!ctx.alive()) return;
    const window = answer.window ?? {};
    fill(region,
      redisNotice(answer, 'what holds the items now'),
      h('dl', { class: 'facts' },
        fact('Window (last minute)', limit(window.usedLastMinute, window.limitPerMinute ?? null, 'items')),
        fact('Slots reserved ahead', window.reservedAhead == null ? '—' : num(window.reservedAhead)),
        fact('Held past the horizon', num(window.heldPastHorizon ?? 0))),
      table('Handlers',
        ['Handler', { text: 'Waiting', class: 'num' }, { text: 'Held', class: 'num' }, { text: 'Parked', class: 'num' },
          { text: 'Retrying', class: 'num' }, { text: 'In flight', class: 'num' }, { text: 'Pending', class: 'num' }, 'Waiting for'],
        (answer.handlers ?? []).map((handler) => h('tr', {},
          h('th', { scope: 'row' }, `${handler.integrationKey} / ${handler.handlerKey}`),
          h('td', { class: 'num' }, num(handler.items?.waiting ?? 0)),
          h('td', { class: 'num' }, num(handler.items?.held ?? 0)),
          h('td', { class: 'num' }, num(handler.items?.parked ?? 0)),
          h('td', { class: 'num' }, num(handler.items?.retrying ?? 0)),
          h('td', { class: 'num' }, num(handler.items?.processing ?? 0)),
          h('td', { class: 'num' }, num(handler.items?.pending ?? 0)),
          h('td', {}, (handler.waitingFor ?? []).length === 0 ? h('span', { class: 'muted' }, 'nothing')
            : h('ul', { class: 'tenant-scopes', 'aria-label': 'Reasons' }, handler.waitingFor.map((reason) => h('li', {},
              h('strong', {}, WAIT_REASONS[reason.reason] ?? reason.reason),
              reason.now ? ' — now' : ' — lately', `: ${num(reason.items)} items`,
              reason.detail ? ` (${reason.detail})` : '')))))),
        'None of its items wait.'));
  };
}

function mountQueues(main, target, ctx) {
  const region = h('div', {});
  main.append(h('p', { class: 'muted' }, 'Visible, in flight and delayed are SQS\'s approximate counts. Waiting items and the oldest '
    + 'one\'s age come from Postgres: the queued or retrying items of the tier, and how long the longest-waiting of them has waited '
    + 'since it was last sent, deferred or failed.'), region);
  return async () => {
    const answer = await call('GET', '/queues');
    if (!ctx.alive()) return;
    fill(region, table('Queues by tier',
      ['Queue', 'Kind', 'Tier', { text: 'Visible', class: 'num' }, { text: 'In flight', class: 'num' },
        { text: 'Delayed', class: 'num' }, { text: 'Waiting items', class: 'num' }, { text: 'Oldest waiting', class: 'num' }],
      (answer.queues ?? []).map((queue) => h('tr', { 'data-queue': queue.name },
        h('th', { scope: 'row' }, queue.name),
        h('td', {}, queue.kind ?? ''),
        h('td', {}, queue.tier ? `${queue.tier} (priority ${queue.priority})` : '—'),
        h('td', { class: 'num' }, num(queue.visible)),
        h('td', { class: 'num' }, num(queue.inFlight)),
        h('td', { class: 'num' }, num(queue.delayed)),
        h('td', { class: 'num' }, num(queue.waitingItems)),
        h('td', { class: 'num' }, duration(queue.oldestAgeSeconds)))),
      'No queue.'));
  };
}

// ------------------------------------------------------------------ charts

function mountCharts(main, target, ctx) {
  const region = h('div', {});
  main.append(h('p', { class: 'muted' }, 'The last hour, one bar per minute; the current minute is still counting.'), region);
  return async () => {
    const answer = await call('GET', '/metrics/items', { query: { minutes: 60 } });
    if (!ctx.alive()) return;
    const minutes = answer.minutes ?? [];
    const deferralsKnown = minutes.every((minute) => minute.deferredBy != null);
    fill(region,
      stackedChart('Items per minute by outcome', minutes, OUTCOMES.filter(({ key }) => key !== 'deferred' || deferralsKnown),
        (minute, key) => minute[key] ?? 0),
      deferralsKnown
        ? stackedChart('Deferrals per minute by reason', minutes, REASONS, (minute, key) => minute.deferredBy?.[key] ?? 0)
        : h('p', { class: 'notice', role: 'note' }, 'Deferrals per minute by reason: Redis did not answer, so they are unknown until it does.'));
  };
}

// ------------------------------------------------------------------ start

function boot() {
  document.body.prepend(patternDefs());
  $('signin-form').addEventListener('submit', signIn);
  $('signout').addEventListener('click', () => signOut('Signed out.'));
  $('skip-link').addEventListener('click', (event) => {
    event.preventDefault();
    ($('app').hidden ? $('signin-key') : $('main')).focus();
  });
  $('live').addEventListener('change', () => {
    if ($('live').checked) refreshNow();
    else stopTimer();
    announce($('live').checked ? 'Live refresh on.' : 'Live refresh paused.');
  });
  document.addEventListener('visibilitychange', () => {
    if (document.hidden) stopTimer();
    else if (state.current) refreshNow();
  });
  window.addEventListener('hashchange', () => {
    if (location.hash.startsWith('#/')) route(true);
  });
  const saved = sessionStorage.getItem(KEY_STORAGE);
  if (saved) {
    start(saved).catch(() => signOut('Sign in again.'));
  } else {
    $('signin').hidden = false;
    $('signin-key').focus();
  }
}

boot();
