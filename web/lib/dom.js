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

export function errorBox(err) {
  return h('p.error', { role: 'alert' }, err?.message ?? String(err));
}

export function fmtDate(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

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
    el.replaceChildren(errorBox(err));
  } finally {
    el.removeAttribute('aria-busy');
  }
}
