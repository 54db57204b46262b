// @ts-check
/**
 * The benchmark's routes as most people would write them with Express 5: express.json() for
 * bodies, a handler per route, res.json() for answers, BigInt for parity of a path value so that
 * long integers are exact. No logger, so it carries less than the service does.
 */
import express from 'express';

const app = express();
app.disable('x-powered-by');
app.use(express.json({ limit: '16mb' }));

/** @param {import('express').Response} res @param {string} message */
const badRequest = (res, message) => res.status(400).json({ error: message });

for (const [name, even] of /** @type {const} */ ([
  ['isEven', true],
  ['isOdd', false],
])) {
  app.post(`/api/${name}`, (req, res) => {
    const input = req.body?.input;
    if (!Number.isInteger(input)) return badRequest(res, 'input must be an integer');
    res.json({ ret: (input % 2 === 0) === even });
  });
  app.get(`/api/${name}/:number`, (req, res) => {
    let value;
    try {
      value = BigInt(req.params.number);
    } catch {
      return badRequest(res, 'number must be an integer');
    }
    res.json({ ret: (value % 2n === 0n) === even });
  });
}

app.post('/api/sort', (req, res) => {
  const input = req.body?.input;
  if (!Array.isArray(input)) return badRequest(res, 'input must be an array');
  const sortedArray = input.every((value) => typeof value === 'number') ? [...input].sort((a, b) => a - b) : [...input].sort();
  res.json({ sortedArray });
});

app.post('/api/toString', (req, res) => {
  const input = req.body?.input;
  res.json({ ret: typeof input === 'string' ? input : JSON.stringify(input) });
});

const server = app.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  process.stdout.write(`express listening on http://${address.address}:${address.port}\n`);
});
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));
