// The worker thread of scripts/memory-probe.ts. On Node 20, tsx's ES module hooks do not reach a
// worker thread but its require hook does (piscina's workers load TypeScript the same way).
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS entry on purpose, as said above
require(require('node:path').join(__dirname, 'memory-probe.ts'));
