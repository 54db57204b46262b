import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { OpenAPIBackend, type Document } from 'openapi-backend';

/**
 * Checks answers against the service's own OpenAPI document with openapi-backend
 * (https://github.com/openapistack/openapi-backend): the request is matched to its operation, the
 * status must be one the operation lists, the content type one that status lists, and the body
 * must validate against that schema. A request that matches no operation (an unknown path, a
 * method no operation has) is not checked: the document does not describe it.
 */
export interface Conformance {
  /** Fails the test when the answer is not what the document says; false when nothing matched. */
  check(
    method: string,
    path: string,
    answer: { status: number; contentType: string | undefined; headers: Readonly<Record<string, unknown>>; body: string },
  ): boolean;
}

/**
 * The headers the service itself sets on an operation's answers, which the document must describe
 * where they are sent; the security and CORS headers every answer of any path carries are not the
 * operations' (docs/operations.md, "Edge protection").
 */
const SERVICE_HEADERS = ['x-request-id', 'vary', 'retry-after', 'allow', 'deprecation', 'link', 'sunset', 'accept-encoding', 'content-encoding'];

export async function conformanceTo(app: FastifyInstance, docsPrefix = '/api'): Promise<Conformance> {
  const definition = (await app.inject({ method: 'GET', url: `${docsPrefix}/openapi.json` })).json<Document>();
  // quick: the document is linted by Redocly (openapi.test.ts); openapi-backend's own check knows OpenAPI 3.0 only.
  const api = new OpenAPIBackend({ definition, quick: true });
  await api.init();
  return {
    check(method, path, answer) {
      if (method === 'HEAD' || method === 'OPTIONS') return false;
      const pathOnly = path.split('?')[0] as string;
      // A path template's value may be empty (`/api/isEven/` is `/api/isEven/{number}` with ""),
      // as an OpenAPI-validating proxy matches it; openapi-backend's router wants a character.
      const operation =
        api.matchOperation({ method, path: pathOnly, headers: {} }) ??
        (pathOnly.endsWith('/') ? api.matchOperation({ method, path: `${pathOnly}_`, headers: {} }) : undefined);
      if (operation === undefined) return false;
      const where = `${method} ${path} → ${answer.status} (${operation.operationId})`;
      const documented = operation.responses?.[String(answer.status)] as { content?: Record<string, unknown>; headers?: Record<string, unknown> } | undefined;
      assert.ok(documented, `${where}: the status is not in the document`);
      const described = new Set(Object.keys(documented.headers ?? {}).map((name) => name.toLowerCase()));
      const undescribed = SERVICE_HEADERS.filter((name) => answer.headers[name] !== undefined && !described.has(name));
      assert.deepEqual(undescribed, [], `${where}: headers sent that the document does not describe`);
      const mediaType = (answer.contentType ?? '').split(';')[0]?.trim() as string;
      assert.ok(documented.content?.[mediaType], `${where}: ${mediaType} is not documented for this status`);
      const body: unknown = answer.body === '' ? undefined : JSON.parse(answer.body);
      const result = api.validateResponse(body, operation, answer.status);
      assert.ok(result.valid, `${where}: ${JSON.stringify(result.errors)}\n${answer.body.slice(0, 300)}`);
      return true;
    },
  };
}
