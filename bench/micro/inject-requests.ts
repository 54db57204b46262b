/** The requests the in-process A/Bs (inject-ab.ts, inject-instructions.ts) send through `inject`, by scenario. */

let seed = 1;
const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const MIXED = [
  (i: number) => ({ operation: 'isEven', input: i }),
  () => ({ operation: 'sort', input: [3, 1, 2] }),
  (i: number) => ({ operation: 'toString', input: { b: 1, a: [i] } }),
  () => ({ operation: 'stringSplit', input: { string: 'a,b,c', seperator: ',' } }),
];

/** S1 (POST isEven), S2 (GET isOdd), S3 (sort of 1,000 integers), B3 (batch of 200 mixed). */
export const INJECT_REQUESTS: Record<string, object> = {
  S1: { method: 'POST', url: '/api/isEven', payload: '{"input":12345}' },
  S2: { method: 'GET', url: '/api/isOdd/12345' },
  S3: { method: 'POST', url: '/api/sort', payload: JSON.stringify({ input: Array.from({ length: 1000 }, () => Math.floor(random() * 2e6) - 1e6) }) },
  B3: { method: 'POST', url: '/api/batch', payload: JSON.stringify({ operations: Array.from({ length: 200 }, (_, i) => MIXED[i % 4]!(i)) }) },
};
