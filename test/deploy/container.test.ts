/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call --
   the manifests are untyped YAML (test/deploy.test.ts checks their shape against the Kubernetes API schemas). */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { buildStandIn, freePort, PODMAN_ENV, podmanMissing, ROOT, sh, waitForHttp } from './tools.js';

// The image and the pod, run as the manifest runs them, with podman. No image registry is
// reachable here: the Dockerfile's FROM image is a stand-in built by tools.ts (same Node.js, npm
// and user), and deploy/Dockerfile itself is built unchanged over it.

const IMAGE = 'localhost/json-utility-service:deploy-test';
const missing = podmanMissing();
if (missing !== undefined) process.stdout.write(`# SKIPPED: the container tests need podman: ${missing}\n`);
const log = (line: string) => process.stdout.write(`# ${line}\n`);

const manifests = parseAllDocuments(readFileSync(join(ROOT, 'deploy/kubernetes.yaml'), 'utf8')).map((d) => d.toJS() as Record<string, any>);
const deployment = manifests.find((m) => m.kind === 'Deployment') as Record<string, any>;
const podSpec = deployment.spec.template.spec;
const container = podSpec.containers[0];
const env: Record<string, string> = Object.fromEntries(container.env.map((e: { name: string; value: string }) => [e.name, e.value]));

describe('the image and the pod, with podman', { skip: missing, timeout: 900_000 }, () => {
  before(async () => {
    await buildStandIn(log);
    const started = Date.now();
    // The image format `docker` keeps HEALTHCHECK (the OCI format drops it).
    await sh('podman', ['build', '--pull=never', '--network=host', '--format', 'docker', '-f', 'deploy/Dockerfile', '-t', IMAGE, '.']);
    log(`deploy/Dockerfile built in ${Math.round((Date.now() - started) / 1000)} s`);
  });

  test('run as the manifest runs it: the cgroup limit found, API and admin ports apart, healthy, stopped within the drain', async (t) => {
    const name = `json-utility-deploy-${process.pid}`;
    const [api, admin] = [await freePort(), await freePort()];
    t.after(() => spawnSync('podman', ['rm', '--force', name], { env: PODMAN_ENV }));
    await sh('podman', [
      'run',
      '--detach',
      '--name',
      name,
      // The manifest's security context: a read-only root, uid 1000, no capabilities, no privilege gain.
      '--read-only',
      '--user',
      '1000:1000',
      '--cap-drop=ALL',
      '--security-opt',
      'no-new-privileges',
      '--memory',
      '768m',
      '--publish',
      `127.0.0.1:${api}:3000`,
      '--publish',
      `127.0.0.1:${admin}:9090`,
      IMAGE,
    ]);
    assert.deepEqual(await (await waitForHttp(`http://127.0.0.1:${api}/api/isOdd/7`)).json(), { ret: true });
    const logs = await sh('podman', ['logs', name]);
    assert.match(logs, /"memory":"768 MiB \(MEMORY_LIMIT=auto: the cgroup's\)/, logs);
    // Probes and metrics on the admin port alone.
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      assert.equal((await fetch(`http://127.0.0.1:${admin}${path}`)).status, 200, path);
      assert.equal((await fetch(`http://127.0.0.1:${api}${path}`)).status, 404, path);
    }
    assert.match(
      await (await fetch(`http://127.0.0.1:${admin}/metrics`)).text(),
      /^http_requests_total\{method="GET",route="\/api\/isOdd\/:number",status="200"\} 1$/m,
    );
    // The Dockerfile's HEALTHCHECK, run on demand (its timers need systemd, which is not here).
    const health = spawnSync('podman', ['healthcheck', 'run', name], { env: PODMAN_ENV, encoding: 'utf8' });
    assert.equal(health.status, 0, `podman healthcheck run: ${health.stdout}${health.stderr}`);
    const inspected = JSON.parse(await sh('podman', ['inspect', name])) as Array<{ State: { Health?: { Status: string } } }>;
    assert.equal(inspected[0]?.State.Health?.Status, 'healthy');
    const started = Date.now();
    await sh('podman', ['stop', '--time', '30', name]);
    const took = Date.now() - started;
    const drain = Number(/DRAIN_DELAY_MS=(\d+)/.exec(readFileSync(join(ROOT, 'deploy/Dockerfile'), 'utf8'))?.[1]);
    assert.ok(took < drain + 3000, `podman stop took ${took} ms (DRAIN_DELAY_MS ${drain})`);
    assert.equal((await sh('podman', ['inspect', '--format', '{{.State.ExitCode}}', name])).trim(), '0');
  });

  test('podman kube play runs the Deployment with its security context, environment and limit; kube down stops it', async (t) => {
    const [api, admin] = [await freePort(), await freePort()];
    // The image swapped for the one built here, and its ports published on free host ports.
    const documents = manifests.map((manifest) => {
      if (manifest.kind !== 'Deployment') return manifest;
      const copy = structuredClone(manifest);
      const [spec] = copy.spec.template.spec.containers;
      spec.image = IMAGE;
      spec.imagePullPolicy = 'Never';
      spec.ports = [
        { name: 'http', containerPort: 3000, hostPort: api },
        { name: 'admin', containerPort: 9090, hostPort: admin },
      ];
      return copy;
    });
    const file = join(tmpdir(), `json-utility-kube-${process.pid}.yaml`);
    writeFileSync(file, documents.map((document) => JSON.stringify(document)).join('\n---\n'));
    t.after(() => spawnSync('podman', ['kube', 'down', file], { env: PODMAN_ENV }));
    await sh('podman', ['kube', 'play', '--replace', file]);
    assert.deepEqual(await (await waitForHttp(`http://127.0.0.1:${api}/api/isEven/4`)).json(), { ret: true });
    assert.equal((await fetch(`http://127.0.0.1:${admin}/readyz`)).status, 200);
    // The pod's container holds the manifest's settings.
    const pods = JSON.parse(await sh('podman', ['pod', 'ps', '--format', 'json'])) as Array<{ Name: string; Containers: Array<{ Names: string }> }>;
    const pod = pods.find((p) => p.Name.startsWith(String(deployment.metadata.name)));
    assert.ok(pod, JSON.stringify(pods));
    const serviceContainer = pod.Containers.find((c) => !c.Names.endsWith('-infra'));
    assert.ok(serviceContainer);
    const [inspected] = JSON.parse(await sh('podman', ['inspect', serviceContainer.Names])) as Array<{
      Config: { User: string; Env: string[] };
      HostConfig: { ReadonlyRootfs: boolean; Memory: number; CapDrop: string[] | null; SecurityOpt: string[] | null };
    }>;
    assert.ok(inspected);
    assert.equal(inspected.HostConfig.ReadonlyRootfs, true);
    assert.equal(inspected.HostConfig.Memory, 1024 ** 3);
    assert.match(inspected.Config.User, /^1000/);
    for (const [key, value] of Object.entries(env)) assert.ok(inspected.Config.Env.includes(`${key}=${value}`), `${key}=${value}`);
    const logs = await sh('podman', ['logs', serviceContainer.Names]);
    assert.match(logs, /"memory":"1 GiB \(MEMORY_LIMIT=auto: the cgroup's\)/, logs);
    await sh('podman', ['kube', 'down', file]);
    await assert.rejects(fetch(`http://127.0.0.1:${api}/healthz`, { signal: AbortSignal.timeout(2000) }));
  });

  after(() => spawnSync('podman', ['rmi', '--force', IMAGE], { env: PODMAN_ENV }));
});
