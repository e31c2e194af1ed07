// The SDK's wire payloads against the service's schemas, without the SDK depending on the server:
// at compile time (tsc -p . compiles this file) its payload types must fit the types derived from
// the route schemas, and at run time every body the real client sends must pass those schemas,
// compiled by the server's own body validator.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ValidateFunction } from 'ajv';
import { FlightrecClient, type FlightrecError } from '../src/index.ts';
import type { CrashReport, Device, NetworkRequest, SdkEvent } from '../src/types.ts';
import type { ReportContext } from '../src/scope.ts';
import type { sessionStartBatch } from '../src/batcher.ts';
import type {
  CrashBody,
  IngestEventBody,
  NetworkRequestBody,
  SessionEndBody,
  SessionStartBody,
} from '../../src/http/schemas/types.ts';
import * as schemas from '../../src/http/schemas/ingest.ts';
import { bodyAjv } from '../../src/http/validation.ts';
import { startFaultServer, type FaultServer } from './helpers/faultServer.ts';

/** A schema-derived type without its `[x: string]: unknown`: the service ignores unknown fields. */
type Known<T> = T extends readonly (infer U)[]
  ? Known<U>[]
  : T extends object
    ? { [K in keyof T as string extends K ? never : K]: Known<T[K]> }
    : T;
/** Fields the SDK sends that the schema does not name (a misspelt one would be silently ignored). */
type Unnamed<Sdk, Schema> = Sdk extends unknown ? Exclude<keyof Sdk, keyof Known<Schema>> : never;
/** true only when every payload of type Sdk passes the schema's types and names only its fields. */
type Sends<Sdk extends Known<Schema>, Schema> = [Unnamed<Sdk, Schema>] extends [never]
  ? true
  : { unnamed: Unnamed<Sdk, Schema> };
type Assert<T extends true> = T;
type PendingCrashFields = Exclude<keyof ReportContext, keyof Known<CrashBody>>;

export type SdkPayloadsMatchTheSchemas = [
  Assert<Sends<Device, SessionStartBody['device']>>,
  Assert<Sends<Parameters<typeof sessionStartBatch>[0], SessionStartBody>>,
  Assert<Sends<{ sessionId: string; endedAt: number }, SessionEndBody>>,
  Assert<Sends<SdkEvent, IngestEventBody>>,
  Assert<Sends<NetworkRequest, NetworkRequestBody>>,
  // The report-context fields (issue 33) are named by the service's crash-context issue, built
  // alongside: until its schema has them the service ignores them, and once it does they are
  // checked here like every other field.
  Assert<Sends<Omit<CrashReport, PendingCrashFields>, CrashBody>>,
  // …and the SDK can send every event type the schema accepts (one added there needs one here).
  Assert<[Exclude<IngestEventBody['type'], SdkEvent['type']>] extends [never] ? true : false>,
];

let srv: FaultServer;
beforeAll(async () => {
  srv = await startFaultServer();
});
afterAll(async () => {
  await srv?.close();
});

const ajv = bodyAjv();
const validators: Record<string, ValidateFunction> = {
  '/ingest/session': ajv.compile(schemas.sessionStartBody),
  '/ingest/session/end': ajv.compile(schemas.sessionEndBody),
  '/ingest/events': ajv.compile(schemas.eventsBody),
  '/ingest/network': ajv.compile(schemas.networkBody),
  '/ingest/crash': ajv.compile(schemas.crashBody),
};

it("every body the SDK sends passes the server's schema of its route", async () => {
  const errors: FlightrecError[] = [];
  // The device as Node reports it (detectDevice), as an app would send it.
  const c = new FlightrecClient({
    apiKey: 'frk_test',
    endpoint: srv.url,
    captureCrashes: false,
    device: { appVersion: '1.4.0' },
    onError: (e) => errors.push(e),
  });
  c.startSession({ userId: 'u-1' });
  c.trackNavigate('/home');
  c.trackNavigate('/cart', '/home');
  c.trackTap({ x: 10.5, y: 20, target: 'buy' });
  c.trackTap({ x: 0, y: 0 });
  c.trackCustom('purchase', { sku: 'A1', qty: 2, nested: { tags: ['x', null] } });
  c.trackCustom('ping');
  c.trackNetwork({ method: 'GET', url: 'https://api.example.com/items?page=2', statusCode: 200, duration: 84 });
  c.trackNetwork({ method: 'POST', url: 'https://api.example.com/pay', duration: 30_000, error: 'timeout' });
  c.recordRequest({
    method: 'GET',
    url: 'https://cdn.example.com/a.png',
    statusCode: 404,
    duration: 5,
    requestSize: 0,
    responseSize: 120,
    error: null,
    timestamp: Date.now(),
  });
  // A request of the app through the instrumented fetch, recorded by the SDK's own code path.
  await (await c.wrapFetch(fetch)(`${srv.url}/app/cart`, { method: 'POST', body: '{}' })).text();
  try {
    JSON.parse('{');
  } catch (e) {
    await c.reportCrash(e, { isFatal: false, handled: true });
  }
  await c.reportCrash(new RangeError('fatal'), { isFatal: true, handled: false });
  await c.shutdown();

  expect(errors).toEqual([]);
  const sent = srv.received.filter((r) => r.path.startsWith('/ingest/'));
  expect(new Set(sent.map((r) => r.path))).toEqual(new Set(Object.keys(validators)));
  for (const r of sent) {
    const validate = validators[r.path]!;
    const valid = validate(JSON.parse(r.body));
    expect(validate.errors ?? [], `${r.path}: ${r.body}`).toEqual([]);
    expect(valid).toBe(true);
  }
  // Everything tracked was sent: 8 events (2 of them network events), 2 network requests (one
  // recorded by hand, one through fetch) and 2 crashes.
  const count = (path: string, key: 'events' | 'requests') =>
    srv.on(path).reduce((n, r) => n + (JSON.parse(r.body) as Record<string, unknown[]>)[key]!.length, 0);
  expect(count('/ingest/events', 'events')).toBe(8);
  expect(count('/ingest/network', 'requests')).toBe(2);
  expect(srv.on('/ingest/crash')).toHaveLength(2);
});
