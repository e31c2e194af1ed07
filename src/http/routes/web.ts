import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync } from 'fastify';

const WEB_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../web');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.png': 'image/png',
  '.json': 'application/json; charset=utf-8',
};

// The page builds its DOM from data with textContent only; the policy is the second line:
// no inline script, nothing from other origins, no framing.
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
};

function listFiles(dir: string, base = dir): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? listFiles(full, base) : [path.relative(base, full).split(path.sep).join('/')];
  });
}

/**
 * The dashboard: the files of web/ as they are (no build step), each read once at start-up and
 * served from memory at its own path, index.html at `/`. Only files that exist get a route,
 * so no request path ever reaches the file system.
 */
export const webRoutes = (): FastifyPluginAsync => async (app) => {
  for (const rel of listFiles(WEB_DIR)) {
    const type = TYPES[path.extname(rel)];
    if (!type) continue;
    const body = fs.readFileSync(path.join(WEB_DIR, rel));
    const etag = `"${createHash('sha1').update(body).digest('base64url')}"`;
    const headers = { 'content-type': type, 'cache-control': 'no-cache', etag, ...SECURITY_HEADERS };
    const urls = rel === 'index.html' ? ['/'] : [`/${rel}`];
    for (const url of urls) {
      app.get(url, { schema: { hide: true } }, async (req, reply) => {
        reply.headers(headers);
        if (req.headers['if-none-match'] === etag) return reply.code(304).send();
        return reply.send(body);
      });
    }
  }
};
