// The dashboard's client of /api/auth and /api/dashboard. The session lives in an HttpOnly
// cookie the page cannot read; state-changing calls carry the CSRF token that /api/auth
// hands out, in the X-CSRF-Token header.

import { humanError } from './messages.js';

let csrfToken = null;

export class ApiError extends Error {
  /** network: the server could not be reached at all (the page offers a retry). */
  constructor(status, message, details, network = false) {
    super(message);
    this.status = status;
    this.details = details;
    this.network = network;
  }
}

export function setCsrf(token) {
  csrfToken = token;
}

/** `body`: JSON, or a Blob/File sent as its raw bytes (artifact uploads). */
export async function api(method, path, body) {
  const headers = { accept: 'application/json' };
  const raw = typeof Blob !== 'undefined' && body instanceof Blob;
  if (body !== undefined) headers['content-type'] = raw ? 'application/octet-stream' : 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let res;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : raw ? body : JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch {
    // fetch rejects only when no answer came at all (server down, network gone).
    throw new ApiError(
      0,
      "Can't reach the server. Check your connection, or whether flightrec is running.",
      undefined,
      true,
    );
  }
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    // a proxy's HTML error page, for instance
  }
  if (!res.ok) {
    const err = new ApiError(
      res.status,
      humanError(res.status, data),
      data?.details,
      res.status === 502 || res.status === 503 || res.status === 504,
    );
    if (res.status === 401 && !path.startsWith('/api/auth/'))
      window.dispatchEvent(new CustomEvent('flightrec:signed-out'));
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
