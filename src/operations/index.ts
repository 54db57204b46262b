import type { Operation } from './define.js';
import { isNumber } from './is-number.js';
import { isEven, isOdd, legacyIsEven, legacyIsOdd } from './parity.js';
import { legacySort, sort } from './sort.js';
import { stringSplit } from './string-split.js';
import { legacyToString, toString } from './to-string.js';
import { TAG_DESCRIPTIONS } from './define.js';

export { DEFAULT_PREFIX, JsonText, servedAt, type LegacyForm, type Operation } from './define.js';

/**
 * Every operation, each declared in its own file, in the order of the OpenAPI document. The
 * routes, the OpenAPI document, the client's types, the CLI, the batch and the stream, the worker
 * threads and the memory estimates all follow from this table; test/adding-an-operation.test.ts
 * adds one to a copy of the project and finds it in each of them. docs/development.md, "Adding an
 * operation", lists the steps.
 */
export const OPERATIONS = {
  sort,
  isEven,
  isOdd,
  isNumber,
  toString,
  stringSplit,
  // The client's methods take these tags: an editor strikes the earlier revision's calls through.
  /** @deprecated The earlier revision: use `sort` (`POST /api/sort`, `{"input": [...]}`). */
  legacySort,
  /** @deprecated The earlier revision: use `isOdd` (`POST /api/isOdd`, `{"input": n}`). */
  legacyIsOdd,
  /** @deprecated The earlier revision: use `isEven` (`POST /api/isEven`, `{"input": n}`). */
  legacyIsEven,
  /** @deprecated The earlier revision: use `toString` (`POST /api/toString`, `{"input": value}`). */
  legacyToString,
} as const;

export type OperationId = keyof typeof OPERATIONS;
/** The operations of the current contract; the earlier revision's are named `legacy…` (and have a `legacy` form). */
export type CurrentOperationId = Exclude<OperationId, `legacy${string}`>;

const ids = Object.keys(OPERATIONS) as OperationId[];
const table = OPERATIONS as Readonly<Record<OperationId, Operation>>;
/** The current operations, in the table's order. */
export const CURRENT_OPERATION_IDS = ids.filter((id): id is CurrentOperationId => table[id].legacy === undefined);
/** The OpenAPI tags with their descriptions, in the order of TAG_DESCRIPTIONS. */
export const TAGS = Object.entries(TAG_DESCRIPTIONS).map(([name, description]) => ({ name, description }));
/** The earlier revision's operations, in the table's order. */
export const LEGACY_OPERATION_IDS = ids.filter((id) => table[id].legacy !== undefined);
