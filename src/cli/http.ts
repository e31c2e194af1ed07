import fs from 'node:fs';
import path from 'node:path';
import { fail } from './errors.ts';

export interface Answer {
  res: Response;
  json: unknown;
  text: string;
}

/** One call of the management API: a route under the service's address, a body sent as JSON. */
export type Call = (method: string, route: string, body: unknown) => Promise<Answer>;

export function serviceUrl(explicit: string | undefined): string {
  return (explicit ?? process.env.FLIGHTREC_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`).replace(/\/$/, '');
}

/**
 * One request to the service, its answer read as JSON (text that is not JSON becomes
 * `{error: text}`); a service that cannot be reached ends the CLI with a message that says so.
 */
export async function request(base: string, url: string, init: RequestInit): Promise<Answer> {
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch (err) {
    return fail(`Cannot reach the service at ${base}: ${(err as Error).message}. Is it running (npm start)?`);
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = { error: text };
  }
  return { res, json, text };
}

export function adminToken(explicit: string | undefined): string {
  if (explicit) return explicit;
  if (process.env.ADMIN_TOKEN) return process.env.ADMIN_TOKEN;
  const file = path.resolve(process.env.DATA_DIR ?? './.data', 'admin-token');
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return fail(`No admin token: pass --token, set ADMIN_TOKEN, or start the server once so it writes ${file}`);
  }
}

/** Calls with the admin token (uploads send a project key instead: commands/uploads.ts). */
export function adminCalls(base: string, token: string): Call {
  return (method, route, body) =>
    request(base, base + route, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
}
