import type { FastifyInstance, FastifyReply } from 'fastify';
import { HttpError } from './errors.ts';

// The pages behind the links of emails (verify an address, confirm an alert address,
// unsubscribe). Opening a link changes nothing: mail scanners and link previews fetch links
// (GET, HEAD), so the page only shows a button, and its form's POST does the change.

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

// No script at all; the form may post only to this origin.
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  // same-origin, not no-referrer: with no-referrer the browser posts the form with `Origin: null`, which the CSRF check refuses.
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
};

// The dashboard's look (web/style.css) in a few rules: these pages load no stylesheet, so that
// they work with the CSP above whatever the dashboard's files are.
const STYLE = [
  'body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;background:#f6f7f9;color:#1f2328;margin:0;line-height:1.5}',
  'header{background:#fff;border-bottom:1px solid #d8dee4;padding:.6rem 1rem;font-weight:700}',
  'header a{color:inherit;text-decoration:none}',
  'main{max-width:34rem;margin:2.5rem auto;padding:1.25rem 1.5rem;background:#fff;border:1px solid #d8dee4;border-radius:8px}',
  'h1{font-size:1.4rem;margin:0 0 .75rem}h1.ok{color:#1a7f37}h1.bad{color:#cf222e}',
  'button{font:inherit;padding:.5rem 1rem;background:#2563eb;color:#fff;border:0;border-radius:6px;cursor:pointer}',
  'a{color:#2563eb}.back{margin-top:1.25rem}',
  '@media (max-width:640px){main{margin:1rem;padding:1rem}}',
].join('');

function html(title: string, body: string, kind: 'ok' | 'bad' | '' = ''): string {
  return [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${esc(title)} · flightrec</title>`,
    `<style>${STYLE}</style>`,
    '</head><body><header><a href="/">flightrec</a></header>',
    `<main><h1${kind ? ` class="${kind}"` : ''}>${esc(title)}</h1>${body}</main></body></html>`,
  ].join('\n');
}

/** A page that explains what the button does; the button posts `fields` to `action`. */
export function actionPage(
  reply: FastifyReply,
  p: { title: string; text: string; action: string; fields: Record<string, string>; button: string },
) {
  const inputs = Object.entries(p.fields)
    .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`)
    .join('');
  return reply
    .code(200)
    .headers(PAGE_HEADERS)
    .send(
      html(
        p.title,
        `<p>${esc(p.text)}</p><form method="post" action="${esc(p.action)}">${inputs}<button type="submit">${esc(p.button)}</button></form>`,
      ),
    );
}

/** The answer to the button: what happened, as a page (a browser form) or JSON (a script). */
export function resultPage(
  reply: FastifyReply,
  accept: string | undefined,
  status: number,
  title: string,
  text: string,
) {
  if (!accept?.includes('text/html')) {
    if (status >= 400) throw new HttpError(status, text);
    return reply.code(status).send({ ok: true, message: text });
  }
  // Always a way on: back to the dashboard (it asks to sign in when needed).
  return reply
    .code(status)
    .headers(PAGE_HEADERS)
    .send(
      html(
        title,
        `<p>${esc(text)}</p><p class="back"><a href="/">Back to flightrec</a></p>`,
        status >= 400 ? 'bad' : 'ok',
      ),
    );
}

/** The body limit of routes anyone may call with a few fields (sign-up, log-in, email links). */
export const SMALL_BODY_BYTES = 64 * 1024;

/**
 * Lets the routes of one plugin take the body an HTML form posts
 * (`application/x-www-form-urlencoded`), as a flat object of strings; other plugins keep JSON only.
 */
export function acceptFormBodies(app: FastifyInstance): void {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 4096 },
    (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(String(body))));
    },
  );
}
