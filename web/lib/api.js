// The dashboard's client of /api/auth and /api/dashboard. The session lives in an HttpOnly
// cookie the page cannot read; state-changing calls carry the CSRF token that /api/auth
// hands out, in the X-CSRF-Token header.

let csrfToken = null;

export class ApiError extends Error {
  constructor(status, message, details) {
    super(message);
    this.status = status;
    this.details = details;
  }
}

export function setCsrf(token) {
  csrfToken = token;
}

export async function api(method, path, body) {
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  });
  const text = await res.text();
  const data = text ? JSON.parse(text) : null;
  if (!res.ok) {
    const detail = data?.details?.map((d) => `${d.path.replace(/^\//, '')} ${d.message}`).join('; ');
    const err = new ApiError(res.status, detail ? `${data.error}: ${detail}` : (data?.error ?? `HTTP ${res.status}`), data?.details);
    if (res.status === 401 && !path.startsWith('/api/auth/')) window.dispatchEvent(new CustomEvent('flightrec:signed-out'));
    throw err;
  }
  return data;
}

export const get = (path) => api('GET', path);
export const dash = (path) => `/api/dashboard${path}`;

export function qs(params) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') u.set(k, String(v));
  const s = u.toString();
  return s ? `?${s}` : '';
}
