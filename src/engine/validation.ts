import AjvCompiler from '@fastify/ajv-compiler';
import type { TSchema } from 'typebox';
import { EXPECTED, type ValidationError } from '../operations/problem.js';

/**
 * Fastify's ajv options for this service, in one place: the app validates with them, and the
 * worker threads compile the same schemas with the same compiler (@fastify/ajv-compiler), so a
 * body is judged alike wherever it is answered.
 */
export const AJV_CUSTOM_OPTIONS = {
  coerceTypes: false, // "4" stays a string and true a boolean
  useDefaults: false,
  removeAdditional: false,
  allErrors: false,
  strictNumbers: false, // a literal beyond double range (1e400) parses to Infinity and is still a number (docs/behaviour.md)
  verbose: true, // error.parentSchema carries the x-expected words for the detail
  keywords: [EXPECTED, 'x-examples'],
};

export type BodyValidator = ((body: unknown) => boolean) & { errors?: ValidationError[] | null };

/** A validator for a request body schema, as Fastify's route would build it. */
export function compileBodyValidator(schema: TSchema): BodyValidator {
  // The compiler takes Fastify's route description; its published types show ajv's own signature.
  const compile = AjvCompiler()({}, { customOptions: AJV_CUSTOM_OPTIONS }) as unknown as (route: object) => BodyValidator;
  return compile({ schema, method: 'POST', url: '', httpPart: 'body' });
}
