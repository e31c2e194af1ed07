import type { FastifyInstance, FastifyReply } from 'fastify';
import { HttpError } from './errors.ts';

// The pages behind the links of emails (verify an address, confirm an alert address,
// unsubscribe). Opening a link changes nothing: mail scanners and link previews fetch links
// (GET, HEAD), so the page only shows a button, and its form's POST does the change.

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

// No script at all; the form may post only to this origin.
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  // same-origin, not no-referrer: with no-referrer the browser posts the form with `Origin: null`, which the CSRF check refuses.
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
};

function html(title: string, body: string): string {
  return [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${esc(title)} · flightrec</title>`,
    '<style>body{font-family:system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;line-height:1.5}button{font:inherit;padding:.5rem 1rem}</style>',
    `</head><body><h1>${esc(title)}</h1>${body}</body></html>`,
  ].join('\n');
}

/** A page that explains what the button does; the button posts `fields` to `action`. */
export function actionPage(reply: FastifyReply, p: { title: string; text: string; action: string; fields: Record<string, string>; button: string }) {
  const inputs = Object.entries(p.fields).map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`).join('');
  return reply.code(200).headers(PAGE_HEADERS).send(html(p.title,
    `<p>${esc(p.text)}</p><form method="post" action="${esc(p.action)}">${inputs}<button type="submit">${esc(p.button)}</button></form>`));
}

/** The answer to the button: what happened, as a page (a browser form) or JSON (a script). */
export function resultPage(reply: FastifyReply, accept: string | undefined, status: number, title: string, text: string) {
  if (!accept?.includes('text/html')) {
    if (status >= 400) throw new HttpError(status, text);
    return reply.code(status).send({ ok: true, message: text });
  }
  return reply.code(status).headers(PAGE_HEADERS).send(html(title, `<p>${esc(text)}</p>`));
}

/** The body limit of routes anyone may call with a few fields (sign-up, log-in, email links). */
export const SMALL_BODY_BYTES = 64 * 1024;

/**
 * Lets the routes of one plugin take the body an HTML form posts
 * (`application/x-www-form-urlencoded`), as a flat object of strings; other plugins keep JSON only.
 */
export function acceptFormBodies(app: FastifyInstance): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 4096 }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(String(body))));
  });
}
