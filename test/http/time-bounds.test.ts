// Time bounds through the HTTP layer, in CPU time (test/cpu-time.ts): in test:quick and npm test,
// not in the unit tier (npm run test:unit), as test/core/time-bounds.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cpuMillis } from '../cpu-time.js';
import { post, sharedApp } from './helper.js';

describe('POST /api/stringSplit', () => {
  const shared = sharedApp();
  test('a 1 MiB string split by "" answers in well under a second', async () => {
    const app = await shared();
    const string = '👍🏽 héllo wörld 中文 '.repeat((1024 * 1024) / 22);
    const body = JSON.stringify({ input: { string, seperator: '' } });
    // Warm-up on a 64 KiB string, so that the measure is of the running service, not of the JIT.
    let response = await post(app, '/api/stringSplit', { input: { string: string.slice(0, 65536), seperator: '' } });
    const elapsed = await cpuMillis(async () => (response = await post(app, '/api/stringSplit', body)));
    assert.equal(response.statusCode, 200);
    assert.equal(response.json<{ ret: string[] }>().ret.join(''), string);
    assert.ok(elapsed < 1000, `${elapsed.toFixed(0)} ms`);
  });
});
