import assert from 'node:assert/strict';
import { test } from 'node:test';
import helmet, { type HelmetOptions } from 'helmet';
import { DOCS_HEADERS } from '../../src/http/protocol/protection.js';

// What the docs page needs (src/http/protection.ts): its own files, Swagger UI's inline styles, data: images; callable from other origins.
const DOCS_HELMET_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      'default-src': ["'self'"],
      'script-src': ["'self'"],
      'style-src': ["'self'", "'unsafe-inline'"],
      'img-src': ["'self'", 'data:'],
      'connect-src': ["'self'"],
      'font-src': ["'self'"],
      'object-src': ["'none'"],
      'base-uri': ["'none'"],
      'form-action': ["'self'"],
      'frame-ancestors': ["'none'"],
    },
  },
  crossOriginResourcePolicy: { policy: 'cross-origin' },
};

test('the docs page headers are exactly the ones helmet sets with the docs options', () => {
  const set: Record<string, string> = {};
  const response = {
    setHeader: (name: string, value: string) => void (set[name.toLowerCase()] = value),
    removeHeader: (name: string) => void delete set[name.toLowerCase()],
  };
  helmet(DOCS_HELMET_OPTIONS)({} as never, response as never, () => undefined);
  assert.deepEqual({ ...DOCS_HEADERS }, set);
});
