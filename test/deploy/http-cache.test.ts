import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { installed } from '../../bench/load.js';
import { buildApp } from '../../src/app.js';
import { busyEveryTurn } from '../http/helper.js';
import { freePort, waitForHttp } from './tools.js';

// Behind a real HTTP cache (Debian's nginx, proxy_cache), configured as an operator who keeps
// whatever the origin does not forbid: `proxy_cache_valid any`. A GET operation's answer is kept
// and the service asked once; a limit's 400 and a 503 are never served from the cache; a
// conditional request gets 304 from it (docs/operations.md, "Caches and CDNs").

const missing = installed('nginx') ? [] : ['nginx'];
if (missing.length > 0) process.stdout.write('# SKIPPED: the HTTP cache test needs nginx (scripts/ensure-deploy-tools.sh)\n');

// `/shed/…` goes to a second instance that sheds load (MAX_EVENT_LOOP_DELAY_MS), `/…` to one that does not.
function nginxConfig(dir: string, port: number, service: string, shedding: string): string {
  const cached = `proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_cache api;
      proxy_cache_valid any 10m;
      add_header X-Cache-Status $upstream_cache_status always;`;
  return `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events {}
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  proxy_cache_path ${dir}/cache keys_zone=api:1m;
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass ${service};
      ${cached}
    }
    location /shed/ {
      proxy_pass ${shedding}/;
      ${cached}
    }
  }
}
`;
}

test(
  'behind nginx proxy_cache: a GET operation is kept and the service asked once; 304 from the cache; a limit’s 400 and a 503 never kept',
  { skip: missing.length > 0 },
  async (t) => {
    const app = await buildApp({ numberTextLimit: 100 }, { logger: false });
    t.after(() => app.close());
    const service = await app.listen({ port: 0, host: '127.0.0.1' });
    const shedding = await buildApp({ maxEventLoopDelayMs: 50 }, { logger: false });
    t.after(() => shedding.close());
    const sheddingBase = await shedding.listen({ port: 0, host: '127.0.0.1' });
    const dir = mkdtempSync(join(tmpdir(), 'json-utility-nginx-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(join(dir, 'cache'));
    const port = await freePort();
    writeFileSync(join(dir, 'nginx.conf'), nginxConfig(dir, port, service, sheddingBase));
    const nginx = spawn('nginx', ['-c', join(dir, 'nginx.conf'), '-p', dir], { stdio: ['ignore', 'inherit', 'inherit'] });
    t.after(() => nginx.kill('SIGKILL'));
    const front = `http://127.0.0.1:${port}`;
    await waitForHttp(`${front}/healthz`, 10_000);

    /** How many GETs to `route` the service answered with `status`. */
    const reached = async (route: string, status: number): Promise<number> => {
      const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
      const line = text.split('\n').find((l) => l.startsWith(`http_requests_total{method="GET",route="${route}",status="${status}"}`));
      return Number(line?.split(' ')[1] ?? 0);
    };
    const ask = async (path: string, headers: Record<string, string> = {}) => {
      const answer = await fetch(`${front}${path}`, { headers });
      return { status: answer.status, cache: answer.headers.get('x-cache-status'), etag: answer.headers.get('etag'), body: await answer.text() };
    };

    const first = await ask('/api/isEven/9007199254740993');
    const second = await ask('/api/isEven/9007199254740993');
    assert.deepEqual([first.status, first.cache, first.body], [200, 'MISS', '{"ret":false}']);
    assert.deepEqual([second.status, second.cache, second.body, second.etag], [200, 'HIT', '{"ret":false}', first.etag]);
    assert.equal(await reached('/api/isEven/:number', 200), 1, 'the service was asked once');
    const conditional = await ask('/api/isEven/9007199254740993', { 'if-none-match': first.etag ?? '' });
    assert.deepEqual([conditional.status, conditional.cache, conditional.body], [304, 'HIT', '']);
    assert.equal(await reached('/api/isEven/:number', 200), 1, 'the 304 came from the cache');

    // NUMBER_TEXT_LIMIT's 400: asked twice, the service answers both.
    const tooLong = `/api/isEven/${'1'.repeat(101)}`;
    assert.deepEqual([(await ask(tooLong)).status, (await ask(tooLong)).cache], [400, 'MISS']);
    assert.equal(await reached('/api/isEven/:number', 400), 2, 'a limit’s 400 is never kept');

    // A 503 while the service sheds load, then the answer once it no longer does: never the 503 kept.
    const stop = busyEveryTurn(200);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const refused = await ask('/shed/api/isOdd/5');
    stop();
    assert.equal(refused.status, 503, refused.body);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = await ask('/shed/api/isOdd/5');
    assert.deepEqual([after.status, after.cache, after.body], [200, 'MISS', '{"ret":true}']);
  },
);
