import { decodeUtf8Body, numberIn, parseJsonText, withNumberSources } from './json-text.js';
import { JsonText, type Operation } from '../operations/index.js';
import { numberTextTooLong, type Limits } from '../operations/field-rules.js';
import { compileBodyValidator, type BodyValidator } from './validation.js';
import { fieldProblem, ProblemError, validationProblem, type Problem } from '../operations/problem.js';

/**
 * The one way an operation is run, whoever asks: the single route, a worker thread, a batch item,
 * a stream line, the CLI. From the body's bytes (or an already parsed value) to its answer or its
 * problem: UTF-8, the depth limit and the number's source text (json-text.ts), validation by the
 * operation's own schema, then the operation's `answer`, which calls the core.
 */

export interface RunLimits extends Limits {
  readonly maxDepth: number;
}

/** The answer to one operation: what its single endpoint answers with 200, or its problem. */
export type Outcome<Result = object | JsonText> = { readonly status: 200; readonly result: Result } | { readonly status: number; readonly problem: Problem };

/**
 * The outcome of a problem.
 *
 * @example
 * problemOutcome(problemOf(400, 'The request body is empty')) //=> { status: 400, problem: { … } }
 */
export function problemOutcome(problem: Problem): { readonly status: number; readonly problem: Problem } {
  return { status: problem.status, problem };
}

const bodyValidators = new WeakMap<Operation, BodyValidator>();

/** The validator of an operation's body schema, compiled once per operation. */
function bodyValidatorOf(operation: Operation): BodyValidator {
  let validate = bodyValidators.get(operation);
  if (validate === undefined) bodyValidators.set(operation, (validate = compileBodyValidator(operation.body)));
  return validate;
}

/**
 * A number field's string is measured before the schema reads it: one over NUMBER_TEXT_LIMIT is
 * answered as too long whatever it holds, as the operation itself would (the schema's `pattern`
 * would call a long string of letters no number, and the answer would depend on the order).
 */
function refuseLongNumberText(operation: Operation, value: unknown, limits: Limits): void {
  const field = operation.numberField;
  if (field === undefined || typeof value !== 'object' || value === null) return;
  const text = (value as Record<string, unknown>)[field];
  const tooLong = typeof text === 'string' ? numberTextTooLong(text, limits) : undefined;
  if (tooLong !== undefined) throw fieldProblem(`/${field}`, tooLong);
}

/**
 * Runs `operation` on a value already parsed: validated by `validate` (the operation's body
 * schema unless given; `body` is what the value is called in problems), then answered. A
 * `ProblemError` thrown by the operation is its problem.
 *
 * @example
 * runValue(OPERATIONS.isOdd, { input: 7 }, undefined, limits) //=> { status: 200, result: { ret: true } }
 */
export function runValue(
  operation: Operation,
  value: unknown,
  numberSource: string | undefined,
  limits: Limits,
  validate: BodyValidator = bodyValidatorOf(operation),
  body = 'the body',
): Outcome {
  try {
    refuseLongNumberText(operation, value, limits);
    if (!validate(value)) return problemOutcome(validationProblem(validate.errors ?? [], body));
    return { status: 200, result: (operation.answer as (value: unknown, context: object) => object | JsonText)(value, { limits, numberSource }) };
  } catch (error) {
    return outcomeOfError(error);
  }
}

/**
 * Runs `operation` on a request body as it arrived (`undefined`: none): what its single endpoint answers.
 *
 * @example
 * runBody(OPERATIONS.isEven, Buffer.from('{"input":9007199254740993}'), limits) //=> { status: 200, result: { ret: false } }
 */
export function runBody(operation: Operation, bytes: Uint8Array | undefined, limits: RunLimits): Outcome {
  // No body at all is judged as a missing value: "The request body must be …".
  if (bytes === undefined) return runValue(operation, undefined, undefined, limits);
  try {
    const text = decodeUtf8Body(bytes, 'a JSON object with an "input" field');
    const parsed = parseJsonText(text, limits.maxDepth, bytes);
    const field = operation.numberField;
    if (field === undefined) return runValue(operation, parsed, undefined, limits);
    const { value, sources } = withNumberSources(
      text,
      parsed,
      (body) => numberIn(body, field),
      () => field,
    );
    return runValue(operation, value, sources?.get(value as object), limits);
  } catch (error) {
    return outcomeOfError(error);
  }
}

/**
 * Runs the path form of `operation` (`GET <path>/{number}`) on a percent-decoded path segment.
 *
 * @example
 * runPathValue(OPERATIONS.isNumber, ' 0x1F ', limits) //=> { status: 200, result: JsonText { text: '{"ret":true}' } }
 */
export function runPathValue(operation: Operation, text: string, limits: Limits): Outcome<JsonText> {
  try {
    if (operation.byPath === undefined) throw new TypeError(`${operation.path} has no path form`);
    return { status: 200, result: operation.byPath.answer(text, limits) };
  } catch (error) {
    return outcomeOfError(error);
  }
}

function outcomeOfError(error: unknown): ReturnType<typeof problemOutcome> {
  if (error instanceof ProblemError) return problemOutcome(error.problem);
  throw error;
}
