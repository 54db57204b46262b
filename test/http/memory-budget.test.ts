import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BudgetTimeout, MemoryBudget, type Reservation } from '../../src/http/memory/budget.js';

const now = (reserved: Promise<Reservation> | Reservation): Reservation => {
  assert.ok(!(reserved instanceof Promise), 'admitted at once');
  return reserved;
};

describe('MemoryBudget', () => {
  test('reserves at once while the bytes fit, and gives them back on release (once)', () => {
    const budget = new MemoryBudget(100, 10);
    const a = now(budget.reserve(60, true, 1000));
    const b = now(budget.reserve(30, true, 1000));
    assert.equal(budget.reserved, 90);
    a.release();
    a.release();
    assert.equal(budget.reserved, 30);
    b.release();
    assert.equal(budget.reserved, 0);
  });

  test('large reservations leave the small share free; small ones may use it', () => {
    const budget = new MemoryBudget(100, 10);
    assert.equal(budget.ceiling(true), 90);
    assert.equal(budget.ceiling(false), 100);
    now(budget.reserve(90, true, 1000));
    now(budget.reserve(10, false, 1000));
    assert.equal(budget.reserved, 100);
  });

  test('a request that does not fit waits for room, then is admitted in arrival order', async () => {
    const budget = new MemoryBudget(100, 0);
    const first = now(budget.reserve(80, true, 1000));
    const order: string[] = [];
    const second = budget.reserve(60, true, 1000);
    const third = budget.reserve(60, true, 1000);
    assert.ok(second instanceof Promise && third instanceof Promise);
    void second.then(() => order.push('second'));
    void third.then(() => order.push('third'));
    assert.equal(budget.waiting, 2);
    first.release();
    await second;
    assert.deepEqual(order, ['second']);
    (await second).release();
    await third;
    assert.deepEqual(order, ['second', 'third']);
    assert.equal(budget.waits, 2);
  });

  test('a small request passes a large one that does not fit yet; a later large one does not', async () => {
    const budget = new MemoryBudget(100, 10);
    const held = now(budget.reserve(60, true, 1000));
    const large = budget.reserve(50, true, 1000);
    const smallerLarge = budget.reserve(20, true, 1000);
    assert.ok(large instanceof Promise && smallerLarge instanceof Promise, 'the later large one waits behind the first, although it would fit');
    const small = budget.reserve(5, false, 1000);
    assert.ok(!(small instanceof Promise), 'a small one that fits is admitted at once');
    small.release();
    const blocked = budget.reserve(45, false, 1000);
    assert.ok(blocked instanceof Promise, 'a small one that does not fit waits');
    held.shrink(55); // room for the small one, still none for the first large one
    (await blocked).release();
    assert.equal(budget.waiting, 2);
    held.release();
    assert.equal((await large).bytes, 50);
    assert.equal((await smallerLarge).bytes, 20);
  });

  test('a request that waited ADMISSION_WAIT_MS without room is refused, and counted', async () => {
    const budget = new MemoryBudget(100, 0);
    now(budget.reserve(100, true, 1000));
    const started = Date.now();
    await assert.rejects(budget.reserve(1, true, 50) as Promise<Reservation>, BudgetTimeout);
    assert.ok(Date.now() - started >= 45);
    assert.equal(budget.timeouts, 1);
    assert.equal(budget.waiting, 0);
  });

  test('shrink lowers a reservation and never raises it', () => {
    const budget = new MemoryBudget(100, 0);
    const reservation = now(budget.reserve(80, true, 1000));
    reservation.shrink(90);
    assert.equal(budget.reserved, 80);
    reservation.shrink(20);
    assert.equal(budget.reserved, 20);
    assert.equal(reservation.bytes, 20);
    reservation.release();
    assert.equal(budget.reserved, 0);
  });
});
