import { expect } from 'vitest';
import type { TestResponse } from './test-api.js';

// Assertions on the error contract of docs/API.md: `{"error","message"}` plus `details` on a 400, as JSON,
// and never anything else (no stack, no internal names).

export const ISO_UTC_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;

export function expectErrorResponse(res: TestResponse, status: number, code?: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json\b/);
  expect(typeof res.body).toBe('object');
  const expectedKeys = status === 400 ? ['details', 'error', 'message'] : ['error', 'message'];
  expect(Object.keys(res.body).sort()).toEqual(expectedKeys);
  expect(typeof res.body.error).toBe('string');
  expect(typeof res.body.message).toBe('string');
  expect(res.body.message.length).toBeGreaterThan(0);
  if (code) expect(res.body.error).toBe(code);
  if (status === 400) {
    expect(Array.isArray(res.body.details)).toBe(true);
    for (const detail of res.body.details) {
      expect(Object.keys(detail).sort()).toEqual(['message', 'path']);
    }
  }
  expectNoInternals(JSON.stringify(res.body));
}

/** Text that would betray a stack trace, a source file or an AWS/SDK internal. */
export function expectNoInternals(text: string): void {
  expect(text).not.toMatch(/\n\s+at |\bat .*\(.*:\d+:\d+\)|\.ts:\d+|\.js:\d+|node_modules|Exception\b|stack/i);
}
