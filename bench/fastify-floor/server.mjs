// @ts-check
/**
 * The benchmark's routes on Fastify 5 with nothing added: no logger, no schemas, no hooks or
 * plugins, Fastify's own JSON parser. Not a service anyone should run; it shows in the same run
 * how close to bare node:http the framework the service is built on can get at all.
 */
import Fastify from 'fastify';

// FASTIFY_LOGGER=1: Fastify as commonly run in production, with its default request logging
// (`logger: true`: pino to stdout, a line when each request arrives and one when it is answered).
const logger = process.env.FASTIFY_LOGGER === '1';
const app = Fastify({ logger, bodyLimit: 16 * 1024 * 1024, routerOptions: { maxParamLength: 16 * 1024 } });

/** @param {unknown} value */
const isInteger = (value) => typeof value === 'number' && Number.isInteger(value);

for (const [name, even] of /** @type {const} */ ([
  ['isEven', true],
  ['isOdd', false],
])) {
  app.post(`/api/${name}`, async (request, reply) => {
    const input = /** @type {any} */ (request.body)?.input;
    if (!isInteger(input)) return reply.code(400).send({ error: 'input must be an integer' });
    return { ret: (input % 2 === 0) === even };
  });
  app.get(`/api/${name}/:number`, async (request, reply) => {
    const text = /** @type {{ number: string }} */ (request.params).number;
    if (!/^-?\d+$/.test(text)) return reply.code(400).send({ error: 'number must be an integer' });
    return { ret: ((text.charCodeAt(text.length - 1) & 1) === 0) === even };
  });
}

app.post('/api/sort', async (request, reply) => {
  const input = /** @type {any} */ (request.body)?.input;
  if (!Array.isArray(input)) return reply.code(400).send({ error: 'input must be an array' });
  if (!input.every((value) => typeof value === 'number')) return { sortedArray: input.slice().sort() };
  const sorted = Float64Array.from(input).sort();
  /** @type {number[]} */
  const sortedArray = [];
  for (let i = 0; i < sorted.length; i++) sortedArray.push(/** @type {number} */ (sorted[i]));
  return { sortedArray };
});

app.post('/api/toString', async (request) => {
  const input = /** @type {any} */ (request.body)?.input;
  return { ret: typeof input === 'string' ? input : JSON.stringify(input) };
});

const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? '127.0.0.1' });
process.stdout.write(`fastify-${logger ? 'logger' : 'floor'} listening on ${address}\n`);
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));
