/**
 * `studio.js`, the studio page's module script, as text: every runtime serves it without a file
 * system or a build step, like the embed scripts. It only reads and writes the page through the
 * DOM's text APIs (`textContent`, `value`), so a label holding markup stays text.
 */
export const STUDIO_SCRIPT = String.raw`const byId = (id) => document.getElementById(id);
const status = byId('status');
const chartSelect = byId('chart');
const paramsBox = byId('params');
const rangeSelect = byId('range');
const preview = document.createElement('analytics-chart');
preview.setAttribute('lazy', 'false');
byId('preview').append(preview);
let charts = [];
let previewTimer = 0;
let previewRun = 0;

function say(text) {
  status.textContent = text;
}

async function api(path, body) {
  const init = { credentials: 'same-origin', headers: { accept: 'application/json' } };
  if (body !== undefined) {
    init.method = 'POST';
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch('api/studio/' + path, init);
  let answer = null;
  try {
    answer = await response.json();
  } catch {
    answer = null;
  }
  if (!response.ok) {
    throw new Error((answer && answer.error) || 'The edge answered ' + response.status + '.');
  }
  return answer;
}

function element(tag, text, attributes) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
  return node;
}

function currentChart() {
  return charts.find((chart) => chart.name === chartSelect.value);
}

function renderParams(chart) {
  for (const old of paramsBox.querySelectorAll('.field')) old.remove();
  byId('no-params').hidden = chart.params.length > 0;
  chart.params.forEach((param, index) => {
    const id = 'param-' + index;
    const field = element('div', undefined, { class: 'field' });
    field.append(element('label', param.name, { for: id }));
    let control;
    if (param.locked) {
      control = element('input', undefined, { id, type: 'text', readonly: '' });
      control.value = String(param.value);
      field.append(element('p', 'Set by your account.', { class: 'hint', id: id + '-hint' }));
      control.setAttribute('aria-describedby', id + '-hint');
    } else if (param.enum) {
      control = element('select', undefined, { id });
      for (const value of param.enum) control.append(element('option', String(value), { value: String(value) }));
      if (param.default !== undefined) control.value = String(param.default);
    } else if (param.type === 'boolean') {
      control = element('input', undefined, { id, type: 'checkbox' });
      control.checked = param.default === true;
    } else {
      control = element('input', undefined, { id, type: param.type === 'number' ? 'number' : 'text' });
      if (param.default !== undefined) control.value = String(param.default);
      if (param.pattern !== undefined) {
        field.append(element('p', 'Pattern: ' + param.pattern, { class: 'hint', id: id + '-hint' }));
        control.setAttribute('aria-describedby', id + '-hint');
      }
    }
    control.dataset.param = param.name;
    control.dataset.type = param.type;
    if (param.locked) control.dataset.locked = 'true';
    control.addEventListener('change', schedulePreview);
    field.append(control);
    paramsBox.append(field);
  });
}

function paramValues() {
  const params = {};
  for (const control of paramsBox.querySelectorAll('[data-param]')) {
    if (control.dataset.locked) continue;
    const type = control.dataset.type;
    if (type === 'boolean') params[control.dataset.param] = control.checked;
    else if (type === 'number') params[control.dataset.param] = Number(control.value);
    else params[control.dataset.param] = control.value;
  }
  return params;
}

function renderRanges(chart) {
  rangeSelect.replaceChildren();
  if (chart.ranges.length === 0) {
    rangeSelect.append(element('option', 'Fixed by the chart', { value: '' }));
    rangeSelect.disabled = true;
    return;
  }
  rangeSelect.disabled = false;
  for (const range of chart.ranges) rangeSelect.append(element('option', range.label, { value: range.key }));
  rangeSelect.value = chart.defaultRange || chart.ranges[0].key;
}

function viewerOptions() {
  const options = { theme: byId('theme').value };
  const height = Number(byId('height').value);
  if (Number.isInteger(height) && height >= 80 && height <= 2000) options.height = height;
  if (!rangeSelect.disabled && rangeSelect.value) options.range = rangeSelect.value;
  const locale = byId('locale').value.trim();
  if (locale) options.locale = locale;
  return options;
}

function applyOptions() {
  const options = viewerOptions();
  for (const name of ['theme', 'height', 'range', 'locale']) {
    if (options[name] === undefined) preview.removeAttribute(name);
    else preview.setAttribute(name, String(options[name]));
  }
}

function schedulePreview() {
  clearTimeout(previewTimer);
  previewTimer = setTimeout(updatePreview, 250);
}

async function updatePreview() {
  const chart = currentChart();
  if (!chart) return;
  const run = ++previewRun;
  applyOptions();
  try {
    const { id } = await api('preview', { query: chart.name, params: paramValues() });
    if (run === previewRun) preview.setAttribute('query-id', id);
  } catch (error) {
    if (run === previewRun) say('Preview: ' + error.message);
  }
}

function chooseChart() {
  const chart = currentChart();
  if (!chart) return;
  renderParams(chart);
  renderRanges(chart);
  updatePreview();
}

function showSnippets(minted, label) {
  const list = byId('snippet-list');
  list.replaceChildren();
  minted.snippets.forEach((snippet, index) => {
    const box = element('section', undefined, { class: 'snippet', 'aria-labelledby': 'snippet-' + index });
    box.append(element('h3', snippet.place, { id: 'snippet-' + index }));
    box.append(element('p', snippet.who, { id: 'snippet-' + index + '-who' }));
    box.append(element('label', 'Snippet: ' + snippet.place, { for: 'snippet-text-' + index }));
    const text = element('textarea', undefined, {
      id: 'snippet-text-' + index,
      rows: String(Math.min(8, Math.ceil(snippet.text.length / 100) + snippet.text.split('\n').length)),
      readonly: '',
      spellcheck: 'false',
      'aria-describedby': 'snippet-' + index + '-who',
    });
    text.value = snippet.text;
    const copy = element('button', 'Copy', { type: 'button', class: 'secondary', 'aria-describedby': 'snippet-' + index });
    copy.addEventListener('click', () => copySnippet(text, snippet.place));
    box.append(text, copy);
    list.append(box);
  });
  byId('snippets').hidden = false;
  byId('snippets-heading').focus();
  say('Published “' + label + '”. Copy the snippet for the place it goes.');
}

async function copySnippet(text, place) {
  try {
    await navigator.clipboard.writeText(text.value);
  } catch {
    text.select();
    document.execCommand('copy');
  }
  say('Copied the snippet for ' + place + '.');
}

async function publish(event) {
  event.preventDefault();
  const chart = currentChart();
  const label = byId('label').value.trim();
  if (!chart) return;
  if (!label) {
    say('Give the embed a label first.');
    byId('label').focus();
    return;
  }
  const aud = byId('aud').value.split(/\s+/).filter(Boolean);
  const options = viewerOptions();
  const refresh = Number(byId('refresh').value);
  if (Number.isInteger(refresh) && refresh > 0) options.refresh = refresh;
  const button = byId('mint');
  button.disabled = true;
  say('Publishing…');
  try {
    const minted = await api('embeds', {
      query: chart.name,
      params: paramValues(),
      label,
      ttl: byId('ttl').value,
      aud,
      options,
    });
    showSnippets(minted, label);
    await loadEmbeds();
  } catch (error) {
    say('Not published: ' + error.message);
  } finally {
    button.disabled = false;
  }
}

function when(iso) {
  return iso ? new Date(iso).toLocaleString() : 'never';
}

async function loadEmbeds() {
  const { items } = await api('embeds');
  const table = byId('embeds');
  const body = table.tBodies[0];
  body.replaceChildren();
  for (const item of items) {
    const row = document.createElement('tr');
    const title = (charts.find((chart) => chart.name === item.query) || {}).title || item.query || item.title || 'Chart';
    const sites = item.aud === undefined ? 'any site' : [].concat(item.aud).join(', ');
    for (const text of [item.label || '(no label)', title, sites, when(item.expiresAt), String(item.views), when(item.lastSeenAt)]) {
      row.append(element('td', text));
    }
    const cell = document.createElement('td');
    if (item.revokedAt) cell.textContent = 'Revoked ' + when(item.revokedAt);
    else {
      const button = element('button', 'Revoke', { type: 'button', class: 'secondary' });
      button.setAttribute('aria-label', 'Revoke ' + (item.label || 'this embed'));
      button.addEventListener('click', () => revoke(item));
      cell.append(button);
    }
    row.append(cell);
    body.append(row);
  }
  table.hidden = items.length === 0;
  byId('no-embeds').hidden = items.length > 0;
}

async function revoke(item) {
  try {
    await api('embeds/' + encodeURIComponent(item.jti) + '/revoke', {});
    await loadEmbeds();
    byId('embeds-heading').focus();
    say('Revoked “' + (item.label || 'the embed') + '”: it stops showing everywhere within seconds.');
  } catch (error) {
    say('Not revoked: ' + error.message);
  }
}

async function start() {
  try {
    const answer = await api('charts');
    byId('subject').textContent = answer.subject;
    charts = answer.charts;
    for (const chart of charts) chartSelect.append(element('option', chart.title, { value: chart.name }));
    if (charts.length === 0) {
      say('There is no chart your account may publish.');
      return;
    }
    chooseChart();
    await loadEmbeds();
  } catch (error) {
    say(error.message);
  }
}

chartSelect.addEventListener('change', chooseChart);
for (const id of ['theme', 'height', 'range', 'locale']) byId(id).addEventListener('change', applyOptions);
byId('publish').addEventListener('submit', publish);
start();
`;
