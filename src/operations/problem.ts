import { STATUS_CODES } from 'node:http';
import { InputError, toJsonPointer } from '../core/index.js';

/**
 * The problem model (RFC 9457 Problem Details) every operation answers its errors with, free of
 * any transport: the server sends it (http/problem-responses.ts), a batch or a stream writes it
 * in an answer, the CLI prints it.
 */

/** One offending field of the request body, as a JSON Pointer (RFC 6901). */
export interface FieldError {
  pointer: string;
  detail: string;
}

/** RFC 9457 Problem Details. `type` is always `about:blank`, so `title` is the status phrase (§4.2.1). */
export interface Problem {
  type: 'about:blank';
  title: string;
  status: number;
  detail: string;
  errors?: FieldError[];
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** An error that becomes exactly this problem response. */
export class ProblemError extends Error {
  constructor(
    readonly status: number,
    detail: string,
    readonly errors?: FieldError[],
    /** Headers the answer carries, such as `retry-after` on a 503. */
    readonly headers?: Readonly<Record<string, string>>,
  ) {
    super(detail);
  }

  /** The problem this error answers. */
  get problem(): Problem {
    return problemOf(this.status, this.message, this.errors);
  }
}

// RFC 9110 §15 names some statuses differently from Node's table.
const TITLES: Readonly<Record<number, string>> = { 413: 'Content Too Large', 422: 'Unprocessable Content' };

export function problemOf(status: number, detail: string, errors?: FieldError[]): Problem {
  const problem: Problem = { type: 'about:blank', title: TITLES[status] ?? STATUS_CODES[status] ?? 'Error', status, detail };
  if (errors !== undefined && errors.length > 0) problem.errors = errors;
  return problem;
}

/** The 400 (or given status) for one bad field; `detail` names the field. */
export function fieldProblem(pointer: string, message: string, status = 400): ProblemError {
  const detail = `${pointer === '' ? 'The request body' : pointer} ${message}`;
  return new ProblemError(status, detail, [{ pointer, detail }]);
}

/** Runs a core operation, turning its `InputError` into a problem about the field at `pointer`. */
export function fromCore<T>(pointer: string, operation: () => T): T {
  try {
    return operation();
  } catch (error) {
    if (error instanceof InputError) throw fieldProblem(toJsonPointer(error.path, pointer), error.message);
    throw error;
  }
}

/** One error of ajv's, as a validator (engine/validation.ts) reports it. */
export interface ValidationError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
  parentSchema?: Record<string, unknown>;
  /** The value validated at `instancePath` (ajv's `verbose`). */
  data?: unknown;
}

/** For a missing field: the fields sent beside it that the object does not have, most likely a misspelling of it. */
function unknownFieldsBeside(error: ValidationError, body: string): string {
  const { data } = error;
  const properties = error.parentSchema?.properties;
  if (typeof data !== 'object' || data === null || Array.isArray(data) || typeof properties !== 'object' || properties === null) return '';
  const unknown = Object.keys(data).filter((key) => !Object.hasOwn(properties, key));
  if (unknown.length === 0) return '';
  const where = error.instancePath === '' ? body : error.instancePath;
  const names =
    unknown
      .slice(0, 5)
      .map((key) => JSON.stringify(key))
      .join(', ') + (unknown.length > 5 ? ', …' : '');
  return `; ${where} has ${names}, which ${unknown.length === 1 ? 'is not one of its fields' : 'are not among its fields'}`;
}

/** The words a schema gives for what a field accepts (`x-expected`), used in error details. */
export const EXPECTED = 'x-expected';

/** The 400 for a body that its schema refuses; `body` is what the body is called (an item of a batch is `the item`). */
export function validationProblem(errors: readonly ValidationError[], body = 'the body'): Problem {
  const byPointer = new Map<string, FieldError & { fromSchema: boolean }>();
  for (const error of errors) {
    const missing = error.keyword === 'required' ? String(error.params.missingProperty) : undefined;
    const pointer = missing === undefined ? error.instancePath : toJsonPointer([missing], error.instancePath);
    const expected = error.parentSchema?.[EXPECTED];
    const message =
      missing !== undefined
        ? `is required${unknownFieldsBeside(error, body)}`
        : typeof expected === 'string'
          ? `must be ${expected}`
          : (error.message ?? 'is invalid');
    const fromSchema = missing !== undefined || typeof expected === 'string';
    const known = byPointer.get(pointer);
    if (known === undefined || (!known.fromSchema && fromSchema)) {
      byPointer.set(pointer, { pointer, detail: `${pointer === '' ? 'The request body' : pointer} ${message}`, fromSchema });
    }
  }
  const fieldErrors = [...byPointer.values()].map(({ pointer, detail }) => ({ pointer, detail }));
  return problemOf(400, fieldErrors.map((e) => e.detail).join('; '), fieldErrors);
}
