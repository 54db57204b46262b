/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   the manifests are untyped YAML; the last test checks their shape against the Kubernetes API schemas. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { SETTINGS, loadConfig } from '../src/config.js';
import { build } from './http/helper.js';
import { buildAdminApp } from '../src/http/observability/probes.js';
import { START_FLAGS } from '../scripts/start-flags.js';

// The settings of deploy/ against the service's own, with no container engine: these tests keep it
// true to the service; test/deploy/ (npm run test:deploy) runs the image, the pod and the alerts.
const dockerfile = readFileSync(new URL('../deploy/Dockerfile', import.meta.url), 'utf8');
const manifests = parseAllDocuments(readFileSync(new URL('../deploy/kubernetes.yaml', import.meta.url), 'utf8')).map((d) => d.toJS()) as Array<
  Record<string, any>
>;
const ofKind = (kind: string) => manifests.find((m) => m.kind === kind) as Record<string, any>;
const deployment = ofKind('Deployment');
const container = deployment.spec.template.spec.containers[0];
const containerEnv: Record<string, string> = Object.fromEntries(container.env.map((e: { name: string; value: string }) => [e.name, e.value]));
const dockerEnv: Record<string, string> = Object.fromEntries(
  [...(/^ENV ([\s\S]*?)\n(?!\s)/m.exec(dockerfile)?.[1] ?? '').matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1] as string, m[2] as string]),
);
const KNOWN = new Set([...Object.values(SETTINGS).map((s) => s.env), 'NODE_ENV', 'NODE_OPTIONS']);
const UNITS: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 };
const quantityBytes = (quantity: string): number => {
  const [, number, unit] = /^(\d+)(Ki|Mi|Gi)?$/.exec(quantity) ?? [];
  assert.ok(number !== undefined, `a memory quantity in bytes, Ki, Mi or Gi: ${quantity}`);
  return Number(number) * (unit === undefined ? 1 : (UNITS[unit] as number));
};

/**
 * What a pod spec breaks of the "restricted" Pod Security Standard
 * (https://kubernetes.io/docs/concepts/security/pod-security-standards/), its baseline controls
 * included, control by control.
 */
function restrictedViolations(pod: Record<string, any>): string[] {
  const found: string[] = [];
  const check = (ok: boolean, what: string) => void (ok || found.push(what));
  const podContext = pod.securityContext ?? {};
  const containers = [...pod.containers, ...(pod.initContainers ?? []), ...(pod.ephemeralContainers ?? [])];
  // Baseline: host namespaces, host paths, sysctls, privileged, host ports, /proc, host processes.
  check(!pod.hostNetwork && !pod.hostPID && !pod.hostIPC, 'host namespaces');
  for (const volume of pod.volumes ?? []) check(volume.hostPath === undefined, `volume ${volume.name}: hostPath`);
  check(podContext.sysctls === undefined, 'sysctls');
  check(podContext.runAsUser !== 0, 'runAsUser 0');
  // Restricted: only these volume types.
  const volumeTypes = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret'];
  for (const volume of pod.volumes ?? [])
    check(
      Object.keys(volume).some((key) => volumeTypes.includes(key)),
      `volume ${volume.name}: type`,
    );
  for (const c of containers) {
    const sc = c.securityContext ?? {};
    check(sc.privileged !== true, `${c.name}: privileged`);
    for (const port of c.ports ?? []) check(!port.hostPort, `${c.name}: hostPort`);
    check(sc.procMount === undefined || sc.procMount === 'Default', `${c.name}: procMount`);
    check(sc.windowsOptions?.hostProcess !== true, `${c.name}: hostProcess`);
    // Restricted: no privilege escalation, non-root, seccomp RuntimeDefault or Localhost, drop ALL, add at most NET_BIND_SERVICE.
    check(sc.allowPrivilegeEscalation === false, `${c.name}: allowPrivilegeEscalation`);
    check(sc.runAsNonRoot === true || (sc.runAsNonRoot === undefined && podContext.runAsNonRoot === true), `${c.name}: runAsNonRoot`);
    check((sc.runAsUser ?? podContext.runAsUser) !== 0, `${c.name}: runAsUser 0`);
    const seccomp = sc.seccompProfile?.type ?? podContext.seccompProfile?.type;
    check(seccomp === 'RuntimeDefault' || seccomp === 'Localhost', `${c.name}: seccompProfile ${seccomp}`);
    check((sc.capabilities?.drop ?? []).includes('ALL'), `${c.name}: capabilities.drop ALL`);
    for (const added of sc.capabilities?.add ?? []) check(added === 'NET_BIND_SERVICE', `${c.name}: capabilities.add ${added}`);
  }
  return found;
}

describe('deploy/', () => {
  test('every variable the Dockerfile and the manifest set is one the service reads, with a valid value', () => {
    assert.ok(Object.keys(dockerEnv).length >= 4);
    for (const name of [...Object.keys(dockerEnv), ...Object.keys(containerEnv)]) assert.ok(KNOWN.has(name), `${name} is not in src/config.ts`);
    const dockerSettings = Object.fromEntries(Object.entries(dockerEnv).filter(([name]) => name !== 'NODE_ENV'));
    loadConfig(dockerSettings);
    loadConfig(containerEnv);
  });

  test('the ports are one number everywhere: PORT and ADMIN_PORT, EXPOSE, containerPorts, probes, Prometheus and the Service', () => {
    const port = Number(containerEnv.PORT);
    const adminPort = Number(containerEnv.ADMIN_PORT);
    assert.ok(adminPort > 0 && adminPort !== port);
    assert.equal(Number(dockerEnv.PORT), port);
    assert.equal(Number(dockerEnv.ADMIN_PORT), adminPort);
    assert.match(dockerfile, new RegExp(`^EXPOSE ${port} ${adminPort}$`, 'm'));
    assert.deepEqual(container.ports, [
      { name: 'http', containerPort: port },
      { name: 'admin', containerPort: adminPort },
    ]);
    // The probes and the scrape reach the admin port; callers reach the API port alone.
    for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) assert.equal(container[probe].httpGet.port, 'admin', probe);
    assert.deepEqual(ofKind('Service').spec.ports, [{ name: 'http', port: 80, targetPort: 'http' }]);
    assert.equal(deployment.spec.template.metadata.annotations['prometheus.io/port'], String(adminPort));
    assert.match(dockerfile, /^HEALTHCHECK .*\n.*process\.env\.ADMIN_PORT \+ '\/healthz'/m);
  });

  test('the probe and metrics paths answer 200 on the admin app, and 404 on the API port', async (t) => {
    const app = await build(t, loadConfig(containerEnv));
    const admin = await buildAdminApp({ ready: () => app.lifecycle.ready, metrics: app.metrics }, app.serviceLog);
    t.after(() => admin.close());
    const paths = [
      container.livenessProbe.httpGet.path,
      container.readinessProbe.httpGet.path,
      container.startupProbe.httpGet.path,
      deployment.spec.template.metadata.annotations['prometheus.io/path'],
    ];
    assert.deepEqual(paths, ['/healthz', '/readyz', '/healthz', '/metrics']);
    for (const path of paths) {
      assert.equal((await admin.inject({ method: 'GET', url: path })).statusCode, 200, path);
      assert.equal((await app.inject({ method: 'GET', url: path })).statusCode, 404, path);
    }
  });

  test('the NetworkPolicy fences the pods: the API port to labelled namespaces, the admin port to monitoring, no egress', () => {
    const policy = ofKind('NetworkPolicy');
    assert.deepEqual(policy.spec.podSelector.matchLabels, deployment.spec.template.metadata.labels);
    assert.deepEqual(policy.spec.policyTypes, ['Ingress', 'Egress']);
    assert.deepEqual(policy.spec.egress, []);
    const rules = policy.spec.ingress.map((rule: any) => ({ from: rule.from[0].namespaceSelector.matchLabels, ports: rule.ports.map((p: any) => p.port) }));
    assert.deepEqual(rules, [
      { from: { 'json-utility-service/client': 'true' }, ports: ['http'] },
      { from: { 'kubernetes.io/metadata.name': 'monitoring' }, ports: ['admin'] },
    ]);
    // Each port it names is one the container declares.
    const named = container.ports.map((p: { name: string }) => p.name);
    for (const rule of rules) for (const port of rule.ports) assert.ok(named.includes(port), port);
    const operations = readFileSync(new URL('../docs/operations.md', import.meta.url), 'utf8');
    assert.ok(operations.includes('kubectl label namespace NAME json-utility-service/client=true'), 'docs/operations.md says how to let a namespace in');
  });

  test('the grace period covers preStop and the whole shutdown deadline', () => {
    const preStopSeconds = Number(container.lifecycle.preStop.exec.command[1]);
    const config = loadConfig(containerEnv);
    const grace = deployment.spec.template.spec.terminationGracePeriodSeconds as number;
    assert.ok(config.drainDelayMs < config.shutdownTimeoutMs);
    assert.ok(grace >= preStopSeconds + config.shutdownTimeoutMs / 1000 + 2, `${grace} s`);
    assert.equal(dockerEnv.SHUTDOWN_TIMEOUT_MS, containerEnv.SHUTDOWN_TIMEOUT_MS);
    assert.equal(dockerEnv.DRAIN_DELAY_MS, containerEnv.DRAIN_DELAY_MS);
  });

  test('the image runs an exact Node.js version that CI runs the suite on (scripts/node.sh), and engines allows it', () => {
    const versions = [...dockerfile.matchAll(/^FROM node:(\d+\.\d+\.\d+)-bookworm-slim\b/gm)].map((m) => m[1] as string);
    assert.equal(versions.length, 2, 'both stages pin an exact version');
    const script = readFileSync(new URL('../scripts/node.sh', import.meta.url), 'utf8');
    const ciRun = readFileSync(new URL('../.ci/run', import.meta.url), 'utf8');
    for (const version of versions) {
      const major = version.split('.')[0] as string;
      assert.match(script, new RegExp(`^  ${major}\\) version=${version.replaceAll('.', '\\.')} ;;$`, 'm'), `scripts/node.sh ${major} is ${version}`);
      assert.match(ciRun, new RegExp(`scripts/node\\.sh ${major}\\b`), `.ci/run runs the suite on ${major}`);
    }
    const engines = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { engines: { node: string } }).engines.node;
    assert.equal(engines, '^22.12.0 || ^24.11.0 || ^26.0.0');
  });

  test('the Dockerfile is multi-stage, keeps production dependencies only, and runs as a non-root user', () => {
    assert.equal([...dockerfile.matchAll(/^FROM /gm)].length, 2);
    assert.match(dockerfile, /npm prune --omit=dev/);
    assert.match(dockerfile, /^USER node$/m);
    // The container runs the service as `npm start` does, with its Node.js flags.
    assert.deepEqual(JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)?.[1] ?? 'null'), ['node', ...START_FLAGS, 'dist/main.js']);
    assert.equal(deployment.spec.template.spec.securityContext.runAsNonRoot, true);
  });

  test('memory agrees: MEMORY_LIMIT is the container limit (auto), one worker per one-CPU pod, a heap well under the limit', () => {
    const limit = quantityBytes(container.resources.limits.memory);
    const requested = quantityBytes(container.resources.requests.memory);
    const env = containerEnv;
    assert.ok(env.MEMORY_LIMIT === undefined || env.MEMORY_LIMIT === 'auto', 'the service reads the container limit itself');
    assert.equal(loadConfig({}).memoryLimit, 'auto');
    assert.equal(env.WORKERS, '1');
    assert.equal(container.resources.limits.cpu, '1');
    assert.equal(dockerEnv.WORKERS, '1');
    assert.ok(!('MEMORY_LIMIT' in dockerEnv), 'the image reads the container limit too');
    const heapMb = Number(/--max-old-space-size=(\d+)/.exec(env.NODE_OPTIONS ?? '')?.[1]);
    assert.ok(heapMb > 0 && heapMb * 2 ** 20 <= limit / 2, `heap ${heapMb} MiB under half of the ${limit} byte limit`);
    assert.equal(requested, limit, 'the memory request is the limit the service budgets against');
    assert.ok(limit >= 768 * 2 ** 20, 'room for the largest legal request (README, Reliability)');
  });

  test('every manifest validates against the Kubernetes API schemas (kubernetes-models 5.1.0: Kubernetes 1.34), offline', async () => {
    const { Deployment } = await import('kubernetes-models/apps/v1');
    const { Service } = await import('kubernetes-models/v1');
    const { HorizontalPodAutoscaler } = await import('kubernetes-models/autoscaling/v2');
    const { PodDisruptionBudget } = await import('kubernetes-models/policy/v1');
    const { NetworkPolicy } = await import('kubernetes-models/networking.k8s.io/v1');
    const models: Record<string, new (document: never) => { validate(): void }> = {
      'apps/v1 Deployment': Deployment,
      'v1 Service': Service,
      'autoscaling/v2 HorizontalPodAutoscaler': HorizontalPodAutoscaler,
      'policy/v1 PodDisruptionBudget': PodDisruptionBudget,
      'networking.k8s.io/v1 NetworkPolicy': NetworkPolicy,
    };
    assert.deepEqual(manifests.map((m) => `${m.apiVersion} ${m.kind}`).sort(), Object.keys(models).sort());
    for (const manifest of manifests) {
      const Model = models[`${manifest.apiVersion} ${manifest.kind}`] as new (document: never) => { validate(): void };
      assert.doesNotThrow(() => new Model(manifest as never).validate(), `${manifest.kind}`);
    }
    // The validation has teeth: a port written as a string is refused.
    const broken = structuredClone(deployment);
    broken.spec.template.spec.containers[0].ports[0].containerPort = '3000';
    assert.throws(() => new Deployment(broken as never).validate());
  });

  test('resources, the Service selector and the HPA all point at the Deployment', () => {
    assert.ok(container.resources.requests.cpu && container.resources.limits.memory);
    const labels = deployment.spec.template.metadata.labels;
    assert.deepEqual(ofKind('Service').spec.selector, labels);
    assert.deepEqual(deployment.spec.selector.matchLabels, labels);
    const hpa = ofKind('HorizontalPodAutoscaler');
    assert.deepEqual(hpa.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata.name });
    assert.equal(hpa.spec.metrics[0].resource.name, 'cpu');
    assert.deepEqual(ofKind('PodDisruptionBudget').spec.selector.matchLabels, labels);
  });

  test('the HPA owns the pod count, and scales at a share of the one core README sizes a pod at', () => {
    assert.equal(deployment.spec.replicas, undefined, 'no replicas: every kubectl apply would reset what the HPA chose');
    const hpa = ofKind('HorizontalPodAutoscaler');
    assert.ok(hpa.spec.minReplicas >= 2 && hpa.spec.maxReplicas > hpa.spec.minReplicas);
    assert.equal(container.resources.requests.cpu, '1', 'the HPA counts utilization against the request: one core, as the pod is sized');
    assert.equal(container.resources.limits.cpu, '1');
    const target = hpa.spec.metrics[0].resource.target.averageUtilization as number;
    assert.ok(target >= 50 && target <= 90, `${target}%`);
    assert.ok(ofKind('PodDisruptionBudget').spec.maxUnavailable === 1 || ofKind('PodDisruptionBudget').spec.minAvailable >= 1);
  });

  test('one image tag everywhere: the manifest, the Dockerfile, docs/usage.md, and the package version', () => {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    const image = `json-utility-service:${version}`;
    assert.equal(container.image, image);
    const usage = readFileSync(new URL('../docs/usage.md', import.meta.url), 'utf8');
    const yamlText = readFileSync(new URL('../deploy/kubernetes.yaml', import.meta.url), 'utf8');
    for (const [name, text] of [
      ['Dockerfile', dockerfile],
      ['docs/usage.md', usage],
      ['kubernetes.yaml', yamlText],
    ] as const) {
      const tags = [...text.matchAll(/json-utility-service:([\w.-]+)/g)].map((m) => m[1]);
      assert.ok(tags.length > 0, `${name} names the image`);
      for (const tag of tags) assert.equal(tag, version, `${name}: json-utility-service:${tag}`);
    }
    assert.match(usage, new RegExp(`^docker build -f deploy/Dockerfile -t ${image.replaceAll('.', '\\.')} \\.$`, 'm'));
    assert.match(usage, new RegExp(`^docker run .*${image.replaceAll('.', '\\.')}$`, 'm'));
  });

  test('the pod meets the restricted Pod Security Standard; the check has teeth', () => {
    assert.deepEqual(restrictedViolations(deployment.spec.template.spec), []);
    const broken = structuredClone(deployment.spec.template.spec);
    delete broken.securityContext.seccompProfile;
    delete broken.containers[0].securityContext.seccompProfile;
    broken.containers[0].securityContext.capabilities = { add: ['SYS_ADMIN'] };
    broken.hostNetwork = true;
    assert.deepEqual(restrictedViolations(broken), [
      'host namespaces',
      'service: seccompProfile undefined',
      'service: capabilities.drop ALL',
      'service: capabilities.add SYS_ADMIN',
    ]);
  });
});
