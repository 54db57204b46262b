import AjvCompiler from '@fastify/ajv-compiler';
import type { TSchema } from 'typebox';
import { EXPECTED, type ValidationError } from './problem.js';

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

// What Fastify's `schemaController.compilersFactory.buildValidator` is; the published type shows ajv's own compile.
type ValidatorFactory = (externalSchemas: object, options?: object) => (route: { httpPart?: string }) => BodyValidator;

/**
 * Fastify's validator factory for this service: Fastify's default (@fastify/ajv-compiler), except
 * that a body for which `passes` is true is valid without a look. A body answered in the worker
 * threads, which validated it there, reaches the route's handler that way; a hook sending it
 * before validation instead cost every other request a hook stage for nothing.
 */
export function validatorFactoryPassing(passes: (body: unknown) => boolean): ReturnType<typeof AjvCompiler> {
  const buildCompiler = AjvCompiler() as unknown as ValidatorFactory;
  const factory: ValidatorFactory = (externalSchemas, options) => {
    const compile = buildCompiler(externalSchemas, options);
    return (route) => {
      const validate = compile(route);
      if (route.httpPart !== 'body') return validate;
      const check: BodyValidator = (body) => passes(body) || validate(body);
      // Fastify reads a failed validation's errors from the function it called.
      Object.defineProperty(check, 'errors', { get: () => validate.errors });
      return check;
    };
  };
  return factory as unknown as ReturnType<typeof AjvCompiler>;
}
