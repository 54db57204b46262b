import assert from 'node:assert/strict';
import { test } from 'node:test';
import { holdTickObjectShape } from '../src/server/tick-shape.js';

// What the process holds is one of process.nextTick's own tick objects (its callback, its async ids), not an
// object made to look like one; called again, it holds no second one.
test("holdTickObjectShape holds one of process.nextTick's tick objects from the next tick on", async () => {
  const held = holdTickObjectShape();
  assert.equal(held.length, 0, 'filled on the next tick, not before');
  await new Promise<void>((resolve) => process.nextTick(resolve));
  assert.equal(held.length, 1);
  const tick = held[0] as Record<string | symbol, unknown>;
  assert.equal(typeof tick.callback, 'function');
  assert.ok('args' in tick);
  const symbols = Object.getOwnPropertySymbols(tick).map(String);
  assert.ok(symbols.includes('Symbol(async_id_symbol)') && symbols.includes('Symbol(trigger_async_id_symbol)'), symbols.join(', '));
  assert.equal(holdTickObjectShape(), held);
  await new Promise<void>((resolve) => process.nextTick(resolve));
  assert.equal(held.length, 1);
});
