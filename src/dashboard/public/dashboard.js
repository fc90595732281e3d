// The user dashboard: plain browser JavaScript, no build step. It talks to the same JSON API as
// every client, with the token pasted at sign-in and kept in sessionStorage (this tab only).
// Every value reaches the page through textContent or a DOM property, never as HTML.

const TOKEN_KEY = 'gleaner.token';
const PRODUCTS = ['scraping', 'extraction', 'blockchain'];
const COLORS = { scraping: '#2f6fde', extraction: '#d9822b', blockchain: '#1e7a3c' };
const HISTORY_ENDPOINTS = ['/v1/engine-search', '/v1/pdf', '/v1/image'];

const $ = (selector) => document.querySelector(selector);

/** An element with properties and children (strings become text nodes, never markup). */
function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'class') node.className = value;
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else node[key] = value;
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child ?? '')));
  return node;
}

function show(node, visible) {
  node.hidden = !visible;
}

class ApiError extends Error {
  constructor(status, body) {
    super(body?.message ?? `HTTP ${status}`);
    this.status = status;
    this.errors = body?.errors;
  }
}

/** A JSON call with the session's token; rejects with ApiError carrying the API's message. */
async function api(method, path, body) {
  const headers = { accept: 'application/json', authorization: `Bearer ${sessionStorage.getItem(TOKEN_KEY) ?? ''}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!response.ok) throw new ApiError(response.status, parsed);
  return parsed;
}

/** The API's message, with its field errors when it has some. */
function describe(error) {
  if (!(error instanceof ApiError)) return `The server could not be reached (${error.message}).`;
  const fields = error.errors ? Object.values(error.errors).flat() : [];
  return fields.length ? fields.join(' ') : error.message;
}

const state = { user: null, owner: false, history: { page: 1, endpoint: '', status: '', per_page: 15 } };

// ---------- sign-in ----------

async function signIn(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
  try {
    state.user = (await api('GET', '/me')).user;
  } catch (error) {
    sessionStorage.removeItem(TOKEN_KEY);
    const message =
      error instanceof ApiError && error.status === 401
        ? 'This token was not accepted: it is unknown, mistyped or revoked. Check it and try again.'
        : describe(error);
    const box = $('#sign-in-error');
    box.textContent = message;
    show(box, true);
    return;
  }
  // Owner tokens can list users; any other token is refused (403) there.
  state.owner = await api('GET', '/admin/users').then(
    () => true,
    () => false,
  );
  show($('#sign-in'), false);
  show($('#sign-in-error'), false);
  show($('#app'), true);
  show($('#sign-out'), true);
  show($('#admin-tab'), state.owner);
  $('#who').textContent = `${state.user.name} · ${state.user.email}${state.owner ? ' · owner' : ''}`;
  selectTab('overview');
}

function signOut() {
  sessionStorage.removeItem(TOKEN_KEY);
  location.reload();
}

// ---------- tabs ----------

function selectTab(name) {
  for (const button of document.querySelectorAll('.tabs button')) button.setAttribute('aria-selected', String(button.dataset.tab === name));
  for (const tab of document.querySelectorAll('.tab')) show(tab, tab.id === `tab-${name}`);
  if (name === 'overview') loadOverview();
  if (name === 'history') loadHistory();
  if (name === 'admin') loadAdmin();
}

// ---------- overview: balances and the usage chart ----------

async function loadOverview() {
  const [me, usage] = await Promise.all([api('GET', '/me'), api('GET', '/usage?days=30')]);
  const plans = new Map(usage.products.map((p) => [p.product, p]));
  $('#balances tbody').replaceChildren(
    ...PRODUCTS.map((product) => {
      const plan = plans.get(product);
      return el(
        'tr',
        { dataset: { product } },
        el('td', {}, product),
        el('td', { class: 'num balance' }, (me.user.balances[product] ?? 0).toLocaleString('en')),
        el('td', {}, plan?.plan ?? 'none'),
        el('td', { class: 'num' }, plan?.monthly_credits == null ? '—' : plan.monthly_credits.toLocaleString('en')),
      );
    }),
  );
  $('#usage-table tbody').replaceChildren(
    ...usage.data.map((row) =>
      el('tr', { dataset: { date: row.date, product: row.product } }, el('td', {}, row.date), el('td', {}, row.product), el('td', { class: 'num' }, row.requests), el('td', { class: 'num credits' }, row.credits)),
    ),
  );
  drawChart(usage);
}

/** One x per UTC day of the window (days without requests are 0), one series per product. */
function chartData(usage) {
  const days = [];
  for (let t = Date.parse(`${usage.from}T00:00:00Z`); t <= Date.parse(`${usage.to}T00:00:00Z`); t += 86_400_000) days.push(t / 1000);
  const index = new Map(days.map((t, i) => [new Date(t * 1000).toISOString().slice(0, 10), i]));
  const series = PRODUCTS.map(() => days.map(() => 0));
  for (const row of usage.data) {
    const p = PRODUCTS.indexOf(row.product);
    const i = index.get(row.date);
    if (p >= 0 && i !== undefined) series[p][i] += row.credits;
  }
  return [days, ...series];
}

let chart;
function drawChart(usage) {
  const data = chartData(usage);
  // Exposed for tests and for anyone curious in the console: exactly what is plotted.
  window.gleanerChartData = { products: PRODUCTS, data };
  const container = $('#chart');
  const width = Math.max(320, container.clientWidth || 800);
  chart?.destroy();
  chart = new window.uPlot(
    {
      width,
      height: 260,
      scales: { x: { time: true } },
      series: [{}, ...PRODUCTS.map((product) => ({ label: product, stroke: COLORS[product], width: 2, points: { show: true } }))],
      axes: [{}, { label: 'credits' }],
    },
    data,
    container,
  );
}

// ---------- history ----------

async function loadHistory() {
  const { page, endpoint, status, per_page } = state.history;
  const query = new URLSearchParams({ page: String(page), per_page: String(per_page) });
  if (endpoint) query.set('endpoint', endpoint);
  if (status) query.set('status', status);
  const box = $('#history-error');
  let result;
  try {
    result = await api('GET', `/requests?${query}`);
  } catch (error) {
    box.textContent = describe(error);
    show(box, true);
    return;
  }
  show(box, false);
  $('#history tbody').replaceChildren(
    ...result.data.map((row) =>
      el(
        'tr',
        { dataset: { id: String(row.id) } },
        el('td', {}, row.created_at.replace('T', ' ').slice(0, 19)),
        el('td', {}, row.method),
        el('td', { class: 'endpoint' }, row.endpoint),
        el('td', { class: `num status ${row.status < 400 ? 'status-ok' : 'status-bad'}` }, row.status),
        el('td', { class: 'num credits' }, row.credits),
        el('td', { class: 'num' }, row.duration_ms),
        el('td', { class: 'params' }, JSON.stringify(row.params)),
      ),
    ),
  );
  if (!result.data.length) $('#history tbody').append(el('tr', {}, el('td', { colSpan: 7, class: 'hint' }, 'No requests match.')));
  $('#page-label').textContent = `Page ${result.current_page}`;
  $('#prev-page').disabled = !result.prev_page_url;
  $('#next-page').disabled = !result.next_page_url;
}

// ---------- admin (owner tokens) ----------

async function loadAdmin() {
  const box = $('#admin-error');
  try {
    const users = (await api('GET', '/admin/users')).data;
    const rows = await Promise.all(
      users.map(async (user) => {
        const [credits, tokens] = await Promise.all([api('GET', `/admin/users/${user.id}/credits`), api('GET', `/admin/users/${user.id}/tokens`)]);
        return el(
          'tr',
          { dataset: { user: String(user.id) } },
          el('td', { class: 'num' }, user.id),
          el('td', { class: 'name' }, user.name),
          el('td', {}, user.email),
          el('td', { class: 'balances' }, credits.balances.map((b) => `${b.product}: ${b.balance}${b.plan ? ` (${b.plan})` : ''}`).join(', ')),
          el('td', {}, tokens.data.map((t) => `#${t.id} ${t.name}${t.revoked_at ? ' (revoked)' : ''}`).join(', ')),
        );
      }),
    );
    $('#users tbody').replaceChildren(...rows);
    show(box, false);
  } catch (error) {
    box.textContent = describe(error);
    show(box, true);
  }
}

async function adminAction(run, success) {
  const box = $('#admin-error');
  const message = $('#admin-message');
  show(message, false);
  try {
    const result = await run();
    message.textContent = success(result);
    show(message, true);
    show(box, false);
    await loadAdmin();
  } catch (error) {
    box.textContent = describe(error);
    show(box, true);
  }
}

// ---------- wiring (no inline handlers: the Content-Security-Policy forbids them) ----------

function wire() {
  $('#sign-in-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const token = new FormData(event.target).get('token').trim();
    if (token) signIn(token);
  });
  $('#sign-out').addEventListener('click', signOut);
  for (const button of document.querySelectorAll('.tabs button')) button.addEventListener('click', () => selectTab(button.dataset.tab));

  $('#endpoints').replaceChildren(...HISTORY_ENDPOINTS.map((value) => el('option', { value })));
  $('#history-filters').addEventListener('submit', (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    state.history = { page: 1, endpoint: form.get('endpoint').trim(), status: form.get('status').trim(), per_page: Number(form.get('per_page')) };
    loadHistory();
  });
  $('#prev-page').addEventListener('click', () => {
    state.history.page = Math.max(1, state.history.page - 1);
    loadHistory();
  });
  $('#next-page').addEventListener('click', () => {
    state.history.page += 1;
    loadHistory();
  });

  $('#grant-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    const user = form.get('user').trim();
    const product = form.get('product');
    const amount = Number(form.get('amount'));
    const set = event.submitter?.value === 'set';
    adminAction(
      () => (set ? api('PUT', `/admin/users/${encodeURIComponent(user)}/credits/${product}`, { amount }) : api('POST', `/admin/users/${encodeURIComponent(user)}/credits`, { product, amount })),
      (result) => `User ${result.user}: ${result.product} balance is now ${result.balance}.`,
    );
  });
  $('#create-user-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    const box = $('#created-user');
    adminAction(
      () => api('POST', '/admin/users', { name: form.get('name'), email: form.get('email') }),
      (created) => {
        box.textContent = `User ${created.id} created. Shown once, copy them now:\nAPI token:  ${created.token}\nsecret key: ${created.secret_key}`;
        show(box, true);
        event.target.reset();
        return `Created user ${created.id}.`;
      },
    );
  });
  $('#revoke-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const token = new FormData(event.target).get('token').trim();
    adminAction(
      () => api('DELETE', `/admin/tokens/${encodeURIComponent(token)}`),
      (result) => `Token ${result.revoked} revoked.`,
    );
  });

  const saved = sessionStorage.getItem(TOKEN_KEY);
  if (saved) signIn(saved);
}

wire();
