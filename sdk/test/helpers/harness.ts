// The per-test set-up both fault-server suites share: a fresh scripted fault server, fake
// timers at T0, and clients whose errors and retries are recorded. Exported as live bindings,
// so a test reads the current test's server and records.
import { afterEach, beforeEach, vi } from 'vitest';
import * as sdk from '../../src/index.ts';
import {
  FlightrecClient,
  type FlightrecError,
  type FlightrecOptions,
  type NetworkRequest,
  type SdkEvent,
} from '../../src/index.ts';
import { fakeClock, retryLog } from './drive.ts';
import { startFaultServer, type FaultServer } from './faultServer.ts';

export const T0 = 1_767_225_600_000;

export let srv: FaultServer;
export let errors: FlightrecError[];
export let retries: ReturnType<typeof retryLog>;
let clients: FlightrecClient[] = [];
let device: FlightrecOptions['device'];

/** Registers the hooks; call once at the top of a test file. */
export function useFaultServer(deviceOfSuite: FlightrecOptions['device']): void {
  device = deviceOfSuite;
  beforeEach(async () => {
    srv = await startFaultServer();
    clients = [];
    errors = [];
    retries = retryLog();
    fakeClock(T0);
  });
  afterEach(async () => {
    vi.useRealTimers();
    vi.restoreAllMocks();
    await Promise.all(clients.map((c) => c.shutdown({ timeoutMs: 0 })));
    await sdk.shutdown({ timeoutMs: 0 });
    await srv.close();
  });
}

/** A client of the current fault server that records its errors and retries. */
export function client(over: Partial<FlightrecOptions> = {}): FlightrecClient {
  const c = new FlightrecClient({
    apiKey: 'frk_test',
    endpoint: srv.url,
    device,
    timeoutMs: 0,
    detectDevice: false,
    captureCrashes: false,
    onError: (e) => errors.push(e),
    onRetry: retries.onRetry,
    ...over,
  });
  clients.push(c);
  return c;
}

export const bodyOf = <T>(r: { body: string }) => JSON.parse(r.body) as T;
export const eventsSent = () => srv.on('/ingest/events').flatMap((r) => bodyOf<{ events: SdkEvent[] }>(r).events);
export const requestsSent = () =>
  srv.on('/ingest/network').flatMap((r) => bodyOf<{ requests: NetworkRequest[] }>(r).requests);
export const seqs = (evs: SdkEvent[]) => evs.map((e) => e.sequenceNumber);
export const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
