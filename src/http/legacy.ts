import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from '../config.js';
import { addRouteHeaders } from './route-headers.js';
import { serializeNatively, type Limits } from './answers.js';
import { BODY_OPERATIONS, bodyRouteOptions, sendAnswer } from './body-operations.js';
import {
  BODY_ERRORS,
  LegacyParityBodySchema,
  LegacySortBodySchema,
  LegacyToStringBodySchema,
  SortResponseSchema,
  StringResultSchema,
  jsonResponse,
  legacyParityResultSchema,
  problemResponses,
} from './schemas.js';

/**
 * The earlier revision (docs/behaviour.md §4): root paths, old field names, old
 * response shapes. One row per route; the routes, their headers and the README's migration
 * table all come from it.
 */
export const LEGACY_ROUTES = [
  { path: '/sort', successor: '/api/sort', request: '{"array": [...]}', response: '{"sortedArray": [...]}', successorRequest: '{"input": [...]}', successorResponse: '{"sortedArray": [...]}' },
  { path: '/is-odd', successor: '/api/isOdd', request: '{"number": n}', response: '{"number": n, "isOdd": boolean}', successorRequest: '{"input": n}', successorResponse: '{"ret": boolean}' },
  { path: '/is-even', successor: '/api/isEven', request: '{"number": n}', response: '{"number": n, "isEven": boolean}', successorRequest: '{"input": n}', successorResponse: '{"ret": boolean}' },
  { path: '/toString', successor: '/api/toString', request: '{"number": value}', response: '{"ret": string}', successorRequest: '{"input": value}', successorResponse: '{"ret": string}' },
] as const;

type LegacyPath = (typeof LEGACY_ROUTES)[number]['path'];

/** A successor path under the prefix the current operations were given. */
const withPrefix = (successor: string, prefix: string): string => successor.replace(/^\/api(?=\/)/, prefix);

const successorOf = (path: LegacyPath): string => LEGACY_ROUTES.find((route) => route.path === path)?.successor as string;

/**
 * Marks every response of a legacy path, errors, 405 and OPTIONS included, as deprecated:
 * `Deprecation` (RFC 9745 §2: `@` and Unix seconds), `Link` to the successor (RFC 9745 §3,
 * RFC 8288) and, when configured, `Sunset` (RFC 8594: an HTTP-date). Add before the routes.
 */
export function markLegacyResponses(app: FastifyInstance, config: Pick<Config, 'legacyDeprecationDate' | 'legacySunset'>, prefix: string): void {
  const deprecation = `@${Math.floor(config.legacyDeprecationDate.getTime() / 1000)}`;
  const sunset = config.legacySunset?.toUTCString();
  const links = new Map<string, string>(LEGACY_ROUTES.map(({ path, successor }) => [path, `<${withPrefix(successor, prefix)}>; rel="successor-version"`]));
  addRouteHeaders(app, (path) => {
    const link = links.get(path);
    return link === undefined ? undefined : { deprecation, link, ...(sunset === undefined ? {} : { sunset }) };
  });
}

const LEGACY_RESPONSE_HEADERS = {
  Deprecation: { type: 'string', description: 'RFC 9745: when this route was deprecated, as `@` and Unix seconds', examples: ['@1795305600'] },
  Link: { type: 'string', description: 'The successor route: `</api/…>; rel="successor-version"`' },
  Sunset: { type: 'string', description: 'RFC 8594: when this route goes away (only when LEGACY_SUNSET is set)' },
};

const legacySchema = (path: LegacyPath, summary: string, prefix: string) => ({
  operationId: `legacy${path.replace(/(^|[-/])(\w)/g, (_m, _s, c: string) => c.toUpperCase())}`,
  summary,
  description: `Earlier revision, still served. Use \`POST ${withPrefix(successorOf(path), prefix)}\` instead; the response says so in its \`Deprecation\` and \`Link\` headers.`,
  tags: ['legacy'],
  deprecated: true,
});

const withHeaders = <T extends object>(response: T) => ({ ...response, headers: LEGACY_RESPONSE_HEADERS });

export const legacyRoutes: FastifyPluginAsync<Limits & { successorPrefix: string }> = async (plugin, limits) => {
  const prefix = limits.successorPrefix;
  const app = plugin.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/sort',
    {
      ...serializeNatively,
      ...bodyRouteOptions('legacySort'),
      schema: {
        ...legacySchema('/sort', 'Sort an array (earlier revision)', prefix),
        body: LegacySortBodySchema,
        response: { 200: withHeaders(jsonResponse('The sorted array', SortResponseSchema)), ...problemResponses(...BODY_ERRORS) },
      },
    },
    async (request) => BODY_OPERATIONS.legacySort.answer(request.body, { limits, numberSource: undefined }),
  );

  for (const [path, name, operation] of [['/is-odd', 'isOdd', 'legacyIsOdd'], ['/is-even', 'isEven', 'legacyIsEven']] as const) {
    app.post(
      path,
      {
        ...bodyRouteOptions(operation),
        schema: {
          ...legacySchema(path, `Tell whether a number is ${name === 'isOdd' ? 'odd' : 'even'} (earlier revision)`, prefix),
          body: LegacyParityBodySchema,
          response: { 200: withHeaders(jsonResponse('The number as sent, and the answer', legacyParityResultSchema(name))), ...problemResponses(...BODY_ERRORS) },
        },
      },
      async (request, reply) => sendAnswer(reply, BODY_OPERATIONS[operation].answer(request.body, { limits, numberSource: request.numberSource })),
    );
  }

  app.post(
    '/toString',
    {
      ...serializeNatively,
      ...bodyRouteOptions('legacyToString'),
      schema: {
        ...legacySchema('/toString', 'Convert a value to its string form (earlier revision)', prefix),
        body: LegacyToStringBodySchema,
        response: { 200: withHeaders(jsonResponse('`ret` is the string form', StringResultSchema)), ...problemResponses(...BODY_ERRORS) },
      },
    },
    async (request) => BODY_OPERATIONS.legacyToString.answer(request.body, { limits, numberSource: undefined }),
  );
};
