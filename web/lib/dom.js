// DOM helpers. Every piece of data reaches the page through textContent or attributes set
// one by one, never as HTML, so ingested strings (urls, messages) cannot inject markup.

/** h('a.cls', {href: '#'}, 'text', child, [children]) */
export function h(tag, attrs = {}, ...children) {
  if (isChild(attrs)) {
    children.unshift(attrs);
    attrs = {};
  }
  const [name, ...classes] = tag.split('.');
  const el = document.createElement(name || 'div');
  if (classes.length) el.className = classes.join(' ');
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

const isChild = (a) => a === null || typeof a !== 'object' || a instanceof Node || Array.isArray(a);

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
export function s(tag, attrs = {}, ...children) {
  if (isChild(attrs)) {
    children.unshift(attrs);
    attrs = {};
  }
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return append(el, children);
}

export function loading(text = 'Loading…') {
  return h('p.loading', { role: 'status', 'aria-live': 'polite' }, h('span.spinner', { 'aria-hidden': 'true' }), text);
}

/**
 * An error in words; when the server could not be reached (or was briefly unavailable) and a
 * retry is given, a Retry button next to it.
 */
export function errorBox(err, retry) {
  const box = h('div.error', { role: 'alert' }, h('span', err?.message ?? String(err)));
  if (retry && err?.network) {
    box.append(' ', h('button', { type: 'button', class: 'retry', onclick: retry }, 'Retry'));
  }
  return box;
}

// Every time on the dashboard is UTC, like the date filters and the chart's days, and says
// so: a browser elsewhere would otherwise show a session of Nov 21 (UTC) as "Nov 20, 11:44 PM".
const DATE_UTC = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'UTC',
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});
const TIME_UTC = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'UTC',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});
const LOCAL = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** "21 Nov 2026, 07:44:10 UTC", with the browser's local time as its tooltip. */
export function fmtDate(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '—';
  return h('time', { datetime: d.toISOString(), title: `Your time: ${LOCAL.format(d)}` }, `${DATE_UTC.format(d)} UTC`);
}

/** "07:44:10.123 UTC", for rows within one session. */
export function fmtTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '—';
  return h(
    'time',
    { datetime: d.toISOString(), title: `Your time: ${LOCAL.format(d)}` },
    `${TIME_UTC.format(d)}.${String(d.getUTCMilliseconds()).padStart(3, '0')} UTC`,
  );
}

/** A count with thousands separators; a dash when absent. */
export const fmtCount = (n) =>
  n === null || n === undefined || Number.isNaN(Number(n)) ? '—' : Number(n).toLocaleString('en');

export function fmtDuration(ms) {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${ms} ms`;
  const sec = Math.round(ms / 1000);
  if (sec < 60) return `${sec} s`;
  const m = Math.floor(sec / 60);
  if (m < 60) return `${m} min ${sec % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function badge(text, kind, title) {
  return h(`span.badge.badge-${kind}`, { title }, text);
}

/** Replaces the content of `el` with a loading state, then with what `render` resolves to. */
export async function withLoading(el, render, text) {
  el.replaceChildren(loading(text));
  el.setAttribute('aria-busy', 'true');
  try {
    el.replaceChildren(await render());
  } catch (err) {
    el.replaceChildren(errorBox(err, () => withLoading(el, render, text)));
  } finally {
    el.removeAttribute('aria-busy');
  }
}
