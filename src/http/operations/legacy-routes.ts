import type { FastifyPluginAsync } from 'fastify';
import { SETTINGS, type Config } from '../../config.js';
import { LEGACY_OPERATION_IDS, OPERATIONS, type LegacyForm, type Operation } from '../../operations/index.js';
import { postOperation, type Answering } from './routes.js';

/**
 * The earlier revision (docs/behaviour.md §4): root paths, old field names, old response shapes.
 * Each is an operation of the table (src/operations) with a `legacy` form; the routes, their
 * headers and the migration table of docs/earlier-revision.md all come from it.
 */
export const LEGACY_ROUTES: ReadonlyArray<LegacyForm & { path: string }> = LEGACY_OPERATION_IDS.map((id) => ({
  path: OPERATIONS[id].path,
  ...(OPERATIONS[id].legacy as LegacyForm),
}));

/** A successor path under the prefix the current operations were given. */
const withPrefix = (successor: string, prefix: string): string => successor.replace(/^\/api(?=\/)/, prefix);

/**
 * The headers that mark every response of a legacy route as deprecated, errors, 405 and OPTIONS
 * included: `Deprecation` (RFC 9745 §2: `@` and Unix seconds), `Link` to the successor (RFC 9745
 * §3, RFC 8288) and, when configured, `Sunset` (RFC 8594: an HTTP-date).
 */
function deprecationHeaders(successor: string, config: Pick<Config, 'legacyDeprecationDate' | 'legacySunset'>): Record<string, string> {
  const sunset = config.legacySunset?.toUTCString();
  return {
    deprecation: `@${Math.floor(config.legacyDeprecationDate.getTime() / 1000)}`,
    link: `<${successor}>; rel="successor-version"`,
    ...(sunset === undefined ? {} : { sunset }),
  };
}

const LEGACY_RESPONSE_HEADERS = {
  Deprecation: { type: 'string', description: 'RFC 9745: when this route was deprecated, as `@` and Unix seconds', examples: ['@1795305600'] },
  Link: { type: 'string', description: 'The successor route: `</api/…>; rel="successor-version"`' },
  Sunset: { type: 'string', description: `RFC 8594: when this route goes away (only when ${SETTINGS.legacySunset.env} is set)` },
};

type LegacyOptions = Answering & Pick<Config, 'legacyDeprecationDate' | 'legacySunset'> & { readonly successorPrefix: string };

export const legacyRoutes: FastifyPluginAsync<LegacyOptions> = async (app, options) => {
  const { successorPrefix, legacyDeprecationDate, legacySunset, ...answering } = options;
  for (const id of LEGACY_OPERATION_IDS) {
    const operation = OPERATIONS[id] as Operation;
    const successor = withPrefix((operation.legacy as LegacyForm).successor, successorPrefix);
    postOperation(app, id, answering, {
      documentedHeaders: LEGACY_RESPONSE_HEADERS,
      headers: deprecationHeaders(successor, { legacyDeprecationDate, legacySunset }),
      extra: {
        description: `${operation.description} Use \`POST ${successor}\` instead; the response says so in its \`Deprecation\` and \`Link\` headers.`,
        deprecated: true,
      },
    });
  }
};
