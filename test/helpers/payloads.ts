import type { IngestEvent } from '../../src/domain/eventRows.ts';
import { randomUUID } from 'node:crypto';

/** SDK-shaped payloads for tests. */
export const T0 = 1_767_225_600_000; // 2026-01-01T00:00:00.000Z

export function sessionStart(overrides: Record<string, unknown> = {}) {
  return {
    sessionId: randomUUID(),
    startedAt: T0,
    userId: 'user-1',
    device: {
      platform: 'ios',
      osVersion: '17.2',
      model: 'iPhone15,2',
      brand: 'Apple',
      appVersion: '1.4.0',
      appBuildNumber: '140',
      sdkVersion: '0.1.0',
      locale: 'en-GB',
      timezone: 'Europe/London',
      screenWidth: 393,
      screenHeight: 852,
      networkType: 'wifi',
    },
    ...overrides,
  };
}

export function navigate(sessionId: string, seq: number, to = `/screen/${seq}`) {
  return {
    type: 'navigate',
    sessionId,
    timestamp: T0 + 1000 + seq,
    sequenceNumber: seq,
    from: seq === 0 ? null : `/screen/${seq - 1}`,
    to,
  };
}

export function networkEvent(sessionId: string, seq: number, statusCode = 200, error: string | null = null) {
  return {
    type: 'network',
    sessionId,
    timestamp: T0 + 1000 + seq,
    sequenceNumber: seq,
    method: 'GET',
    url: `https://api.example.com/items/${seq}`,
    statusCode,
    duration: 120,
    error,
  };
}

export function customEvent(sessionId: string, seq: number) {
  return {
    type: 'custom',
    sessionId,
    timestamp: T0 + 1000 + seq,
    sequenceNumber: seq,
    name: 'purchase',
    properties: { sku: 'A1', amount: 3 },
  };
}

export function tapEvent(sessionId: string, seq: number) {
  return {
    type: 'tap',
    sessionId,
    timestamp: T0 + 1000 + seq,
    sequenceNumber: seq,
    x: 10.5,
    y: 200,
    target: 'buy-button',
  };
}

export function networkRequest(overrides: Record<string, unknown> = {}) {
  return {
    id: randomUUID(),
    method: 'POST',
    url: 'https://api.example.com/checkout',
    statusCode: 201,
    duration: 80,
    requestSize: 120,
    responseSize: 512,
    error: null,
    timestamp: T0 + 5000,
    ...overrides,
  };
}

export function crash(sessionId: string, overrides: Record<string, unknown> = {}) {
  return {
    sessionId,
    message: 'TypeError: undefined is not a function',
    stackTrace:
      'at checkout (cart.js:10:5)\nat onPress (button.js:3:1)\nat dispatch (react.js:100:2)\nat run (loop.js:1:1)\nat main (index.js:1:1)\nat extra (more.js:9:9)',
    isFatal: true,
    handled: false,
    timestamp: T0 + 9000,
    ...overrides,
  };
}

/**
 * The export `data` object of an event (docs/decisions.md), absent values null: what the events
 * table's `data` ALIAS computes (clickhouse/002_ingest_pipeline.sql), written once more here for
 * the tests to check the SQL against.
 */
export function eventData(e: IngestEvent): Record<string, unknown> {
  switch (e.type) {
    case 'navigate':
      return { from: e.from ?? null, to: e.to ?? null };
    case 'custom':
      return { name: e.name ?? null, properties: e.properties ?? null };
    case 'network':
      return {
        method: e.method ?? null,
        url: e.url ?? null,
        statusCode: e.statusCode ?? null,
        duration: e.duration ?? null,
        error: e.error ?? null,
      };
    case 'tap':
      return { x: e.x ?? null, y: e.y ?? null, target: e.target ?? null };
  }
}
