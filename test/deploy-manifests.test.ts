import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler, type IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job, type IJob } from 'kubernetes-models/batch/v1';
import { PodDisruptionBudget, type IPodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service, type IConfigMap, type IContainer, type IPodSpec, type IProbe, type IService } from 'kubernetes-models/v1';
import { parseAllDocuments } from 'yaml';

/*
 * The image and the Kubernetes manifests, read as a cluster would take them (docs/deployment.md).
 * Each overlay is rendered with `kubectl kustomize`, every object checked against the Kubernetes
 * schema offline (kubernetes-models), then what makes the service run well there: probes on its own
 * routes and on the port it listens on, only settings docs/configuration.md names, no secret in a
 * ConfigMap, non-root pods on a read-only root filesystem with no capability, and a grace period
 * that covers the drain. The schema allows fields it does not know, so each check below reads the
 * fields it needs and fails when one is missing or misspelt. The Dockerfile is read, not built.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const KUBERNETES = join(ROOT, 'deploy', 'kubernetes');
const OVERLAYS = ['demo', 'production'] as const;
type Overlay = (typeof OVERLAYS)[number];

/** On SIGTERM: /readyz answers 503 and serving goes on this long (SHUTDOWN_DRAIN_MS's default)... */
const DEFAULT_DRAIN_MS = 5_000;
/** ...then the requests in flight may take this long... */
const IN_FLIGHT_MS = 10_000;
/** ...and the pod is given at least this much more before it is killed. */
const GRACE_MARGIN_MS = 5_000;

/** Each listener's port setting, by the name the manifests give its container port, with its address setting and defaults. */
const LISTENERS: Readonly<Record<string, { port: string; defaultPort: number; host: string }>> = {
  http: { port: 'PORT', defaultPort: 3000, host: 'HOST' },
  portal: { port: 'PORTAL_PORT', defaultPort: 3001, host: 'PORTAL_HOST' },
  metrics: { port: 'METRICS_PORT', defaultPort: 9464, host: 'METRICS_HOST' },
};

/** Settings whose values are secrets: they come from a Secret, never from a ConfigMap or the manifest itself. */
const SECRET_SETTINGS = ['DATABASE_URL', 'DATABASE_REPLICA_URLS', 'REDIS_URL', 'REDIS_PASSWORD', 'REDIS_SENTINEL_PASSWORD', 'CURSOR_SECRET'];
const SECRET_LIKE = /PASSWORD|SECRET|TOKEN|CREDENTIAL|PRIVATE|_KEY$/;
/** A URL that carries a password: `scheme://user:password@host`. */
const URL_WITH_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^/@\s]*:[^/@\s]+@/i;

interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string };
  readonly [field: string]: unknown;
}

type ModelClass = new (data: any) => { validate(): void };

/** The model of each kind the manifests may hold, by apiVersion and kind. */
const MODELS: Readonly<Record<string, ModelClass>> = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
};

/** Checks `object` against the Kubernetes schema of its kind; throws, naming it, when the kind is unknown here or the object is invalid. */
function validateObject(object: KubeObject): void {
  const model = MODELS[`${object.apiVersion}/${object.kind}`];
  if (model === undefined) throw new Error(`${object.kind} ${object.metadata.name}: no model for ${object.apiVersion} ${object.kind}`);
  try {
    new model(object).validate();
  } catch (error) {
    throw new Error(`${object.kind} ${object.metadata.name}: ${(error as Error).message}`);
  }
}

/** Whether kubectl runs here; without it the suite is skipped loudly, except under CI=true, where it fails. */
function requireKubectl(context: Mocha.Context): void {
  const probe = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
  if (probe.error === undefined && probe.status === 0) return;
  const reason = `kubectl cannot be run (${probe.error?.message ?? `exit ${String(probe.status)}: ${probe.stderr}`})`;
  if (process.env.CI === 'true') throw new Error(`${reason}, and CI=true forbids skipping: the manifests must be rendered`);
  process.stderr.write(`\n!!! ${reason}: SKIPPING the checks of the rendered Kubernetes manifests !!!\n\n`);
  context.skip();
}

function render(overlay: Overlay): KubeObject[] {
  const result = spawnSync('kubectl', ['kustomize', join(KUBERNETES, 'overlays', overlay)], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`kubectl kustomize overlays/${overlay}: ${result.stderr}`);
  return parseAllDocuments(result.stdout).map((document) => {
    if (document.errors.length > 0) throw new Error(`overlays/${overlay}: ${document.errors.map(String).join('; ')}`);
    return document.toJS() as KubeObject | null;
  }).filter((object) => object !== null);
}

const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/** The variables docs/configuration.md names in the first column of its tables. */
function documentedVariables(): Set<string> {
  const names = read('docs/configuration.md').split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => match[1]!));
  return new Set(names);
}

/** `NAME=value` lines of an env file, comments and blank lines left out. */
function envFile(path: string): Map<string, string> {
  const entries = read(path).split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line): [string, string] => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]);
  return new Map(entries);
}

interface Workload {
  readonly name: string;
  readonly pod: IPodSpec;
}

/** The pod templates of the Deployments and Jobs, by the workload's kind and name. */
function workloads(objects: readonly KubeObject[]): Workload[] {
  return objects.flatMap((object) => {
    const name = `${object.kind} ${object.metadata.name}`;
    if (object.kind === 'Deployment') return [{ name, pod: (object as unknown as IDeployment).spec!.template.spec! }];
    if (object.kind === 'Job') return [{ name, pod: (object as unknown as IJob).spec!.template.spec! }];
    return [];
  });
}

function ofKind<T>(objects: readonly KubeObject[], kind: string): T[] {
  return objects.filter((object) => object.kind === kind) as unknown as T[];
}

/**
 * The settings a container's process reads, as Kubernetes makes its environment: the ConfigMaps
 * of envFrom in order, then env's values over them. Values from a Secret are left out: the manifests
 * hold none.
 */
function settingsOf(container: IContainer, objects: readonly KubeObject[]): Map<string, string> {
  const settings = new Map<string, string>();
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef === undefined) continue;
    const configMap = ofKind<IConfigMap>(objects, 'ConfigMap').find((map) => map.metadata?.name === source.configMapRef!.name);
    if (configMap === undefined) throw new Error(`container ${container.name}: no ConfigMap ${source.configMapRef.name} in the overlay`);
    for (const [name, value] of Object.entries(configMap.data ?? {})) settings.set(name, value);
  }
  for (const variable of container.env ?? []) if (variable.value !== undefined) settings.set(variable.name, variable.value);
  return settings;
}

/** The container port a probe or a Service names, by name or number; undefined when the container declares no such port. */
function declaredPort(container: IContainer, port: number | string): number | undefined {
  return container.ports?.find((declared) => declared.name === port || declared.containerPort === port)?.containerPort;
}

function probesOf(container: IContainer): [string, IProbe][] {
  const probes: [string, IProbe | undefined][] = [
    ['startupProbe', container.startupProbe],
    ['readinessProbe', container.readinessProbe],
    ['livenessProbe', container.livenessProbe],
  ];
  return probes.filter((entry): entry is [string, IProbe] => entry[1] !== undefined);
}

/** How long the service drains on SIGTERM, as the container's settings make it. */
function drainMs(settings: ReadonlyMap<string, string>): number {
  const setting = settings.get('SHUTDOWN_DRAIN_MS');
  return setting === undefined ? DEFAULT_DRAIN_MS : Number(setting);
}

/** The instructions of a Dockerfile, continuation lines joined and comments left out. */
interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

function instructions(dockerfile: string): Instruction[] {
  const lines = dockerfile.replace(/\\\n/g, ' ').split('\n').map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'));
  return lines.map((line) => {
    const [keyword = '', ...rest] = line.split(/\s+/);
    return { keyword: keyword.toUpperCase(), args: rest.join(' ') };
  });
}

/** The stages of a Dockerfile, each from its FROM to the next, with the global ARGs before the first. */
function stages(all: readonly Instruction[]): { globals: Instruction[]; stages: Instruction[][] } {
  const firstFrom = all.findIndex((instruction) => instruction.keyword === 'FROM');
  const result: Instruction[][] = [];
  for (const instruction of all.slice(firstFrom)) {
    if (instruction.keyword === 'FROM') result.push([]);
    result.at(-1)!.push(instruction);
  }
  return { globals: all.slice(0, firstFrom), stages: result };
}

/** `ENV A=1 B=2` of a stage, as a map. */
function envOf(stage: readonly Instruction[]): Map<string, string> {
  const pairs = stage.filter((instruction) => instruction.keyword === 'ENV')
    .flatMap((instruction) => instruction.args.split(/\s+/).map((pair): [string, string] => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
  return new Map(pairs);
}

function dockerfile(): { globals: Instruction[]; stages: Instruction[][]; runtime: Instruction[] } {
  const parsed = stages(instructions(read('Dockerfile')));
  return { ...parsed, runtime: parsed.stages.at(-1) ?? [] };
}

/** The image's ports, its user and its environment, which the manifests must agree with. */
function image(): { ports: number[]; user: string; env: Map<string, string> } {
  const { runtime } = dockerfile();
  return {
    ports: runtime.filter((instruction) => instruction.keyword === 'EXPOSE').flatMap((instruction) => instruction.args.split(/\s+/).map((port) => Number.parseInt(port, 10))),
    user: runtime.findLast((instruction) => instruction.keyword === 'USER')?.args ?? '',
    env: envOf(runtime),
  };
}

describe('the Dockerfile', function () {
  it('builds on an official Node.js LTS image by default, named once in an ARG', function () {
    const { globals, stages: all } = dockerfile();
    const arg = globals.find((instruction) => instruction.keyword === 'ARG' && instruction.args.startsWith('NODE_IMAGE='));
    expect(arg, 'ARG NODE_IMAGE=... before the first FROM').to.not.equal(undefined);
    const [, repository, major] = /^NODE_IMAGE=((?:docker\.io\/)?(?:library\/)?node):(\d+)(?:[.-][\w.-]*)?$/.exec(arg!.args) ?? [];
    expect(repository, `${arg!.args}: the official node image`).to.not.equal(undefined);
    // Node.js's even majors become LTS; 20 is the oldest line package.json supports.
    expect(Number(major) % 2, `node ${major ?? '?'}: an LTS line`).to.equal(0);
    expect(Number(major)).to.be.at.least(20);
    const names = all.map((stage) => / AS (\S+)$/i.exec(stage[0]!.args)?.[1]);
    for (const [i, stage] of all.entries()) {
      const base = stage[0]!.args.split(/\s+/)[0]!;
      expect(base === '${NODE_IMAGE}' || names.slice(0, i).includes(base), `stage ${i + 1} FROM ${base}`).to.equal(true);
    }
  });

  it('runs node itself on dist/main.js, in exec form, as a numeric user other than root', function () {
    const { runtime } = dockerfile();
    expect(runtime.some((instruction) => instruction.keyword === 'ENTRYPOINT'), 'no ENTRYPOINT in the runtime stage').to.equal(false);
    const cmd = runtime.findLast((instruction) => instruction.keyword === 'CMD');
    expect(cmd, 'a CMD in the runtime stage').to.not.equal(undefined);
    expect(JSON.parse(cmd!.args), 'CMD in exec form').to.deep.equal(['node', 'dist/main.js']);
    const { user } = image();
    expect(user, 'USER uid[:gid]').to.match(/^\d+(:\d+)?$/);
    expect(Number.parseInt(user, 10)).to.be.greaterThan(0);
  });

  it('ships dist/, production dependencies, package.json and the demo catalog, and no source, test or bench', function () {
    const { stages: all, runtime } = dockerfile();
    const copies = runtime.filter((instruction) => instruction.keyword === 'COPY').map((instruction) => instruction.args);
    const sources = copies.map((args) => args.split(/\s+/).filter((word) => !word.startsWith('--'))[0]);
    expect(sources).to.include.members(['package.json', 'catalogs', '/app/node_modules', '/app/dist']);
    const unwanted = (source = ''): boolean => ['.', './'].includes(source) || /^(src|test|bench|scripts|docs)(\/|$)/.test(source);
    expect(sources.filter((source) => unwanted(source)), 'sources, tests or the whole context').to.deep.equal([]);
    const fromStage = (path: string): Instruction[] | undefined => {
      const name = / --from=(\S+) /.exec(` ${copies.find((args) => args.includes(path)) ?? ''} `)?.[1];
      return all.find((stage) => new RegExp(` AS ${name ?? '-'}$`, 'i').test(stage[0]!.args));
    };
    expect(fromStage('/app/node_modules')?.some((instruction) => instruction.keyword === 'RUN' && /npm ci\b.*--omit=dev/.test(instruction.args)), 'node_modules from `npm ci --omit=dev`').to.equal(true);
    expect(fromStage('/app/dist')?.some((instruction) => instruction.keyword === 'RUN' && /npm run build/.test(instruction.args)), 'dist/ from `npm run build`').to.equal(true);
  });

  it('listens on every interface and exposes the API, the portal and the metrics', function () {
    const { ports, env } = image();
    expect(ports).to.have.members([3000, 3001, 9464]);
    for (const host of ['HOST', 'PORTAL_HOST', 'METRICS_HOST']) expect(env.get(host), host).to.equal('0.0.0.0');
    expect(env.get('NODE_ENV')).to.equal('production');
  });

  it('keeps node_modules, .git and the tests out of the build context', function () {
    const ignored = read('.dockerignore').split('\n').map((line) => line.trim());
    expect(ignored).to.include.members(['node_modules', '.git', 'dist', 'test', 'bench']);
  });
});

describe('the Kubernetes manifests (deploy/kubernetes)', function () {
  this.timeout(30_000);
  const rendered = new Map<Overlay, KubeObject[]>();
  const documented = documentedVariables();

  before(function () {
    requireKubectl(this);
    for (const overlay of OVERLAYS) rendered.set(overlay, render(overlay));
  });

  it('reads the variables docs/configuration.md names', function () {
    expect(documented).to.include.keys('PORT', 'HOST', 'ROLE', 'STORAGE', 'DATABASE_URL', 'CURSOR_SECRET', 'METRICS_PORT');
  });

  it('validation fails on a broken object: the schema check is not a formality', function () {
    const api = rendered.get('production')!.find((object) => object.kind === 'Deployment')!;
    const copy = structuredClone(api) as any;
    copy.spec.template.spec.containers[0].ports[0].containerPort = 'http';
    expect(() => validateObject(copy as KubeObject)).to.throw(/containerPort must be integer/);
    delete copy.spec.template.spec.containers;
    expect(() => validateObject(copy as KubeObject)).to.throw(/containers/);
    expect(() => validateObject({ ...api, kind: 'Deploymnet' })).to.throw(/no model/);
  });

  for (const overlay of OVERLAYS) {
    describe(`overlays/${overlay}`, function () {
      const objects = (): KubeObject[] => rendered.get(overlay)!;
      const containers = (): { workload: string; container: IContainer; settings: Map<string, string> }[] =>
        workloads(objects()).flatMap(({ name, pod }) => pod.containers.map((container) => ({ workload: name, container, settings: settingsOf(container, objects()) })));

      it('renders objects the Kubernetes schema accepts', function () {
        expect(objects().map((object) => object.kind)).to.include.members(['ConfigMap', 'Deployment', 'Service']);
        for (const object of objects()) validateObject(object);
      });

      it('probes /healthz and /readyz on a port the container declares, the one its settings listen on', function () {
        for (const { workload, container, settings } of containers()) {
          for (const [kind, probe] of probesOf(container)) {
            const where = `${workload}, ${container.name}, ${kind}`;
            const target = probe.httpGet ?? probe.tcpSocket;
            expect(target, `${where}: an httpGet or tcpSocket probe`).to.not.equal(undefined);
            const port = declaredPort(container, target!.port);
            expect(port, `${where}: port ${String(target!.port)} is declared`).to.not.equal(undefined);
            if (probe.httpGet === undefined) continue;
            expect(probe.httpGet.path, where).to.be.oneOf(['/healthz', '/readyz']);
            expect(port, `${where}: the API's port (PORT)`).to.equal(Number(settings.get('PORT') ?? LISTENERS.http!.defaultPort));
          }
          for (const declared of container.ports ?? []) {
            const listener = LISTENERS[declared.name ?? ''];
            expect(listener, `${workload}, ${container.name}: port ${declared.name ?? declared.containerPort} is one of the service's listeners`).to.not.equal(undefined);
            expect(declared.containerPort, `${workload}: ${listener!.port}`).to.equal(Number(settings.get(listener!.port) ?? listener!.defaultPort));
            expect(settings.get(listener!.host) ?? image().env.get(listener!.host), `${workload}: ${listener!.host}, or the cluster cannot reach it`).to.equal('0.0.0.0');
            expect(image().ports, `${workload}: the image exposes ${declared.containerPort}`).to.include(declared.containerPort);
          }
        }
      });

      it('takes an API pod out of its Service on /readyz within the drain, and restarts it only on /healthz', function () {
        const api = containers().filter(({ container }) => container.ports?.some((port) => port.name === 'http'));
        expect(api, 'the API\'s containers').to.not.be.empty;
        for (const { workload, container, settings } of api) {
          expect(container.startupProbe?.httpGet?.path, `${workload}: startupProbe`).to.equal('/readyz');
          expect(container.readinessProbe?.httpGet?.path, `${workload}: readinessProbe`).to.equal('/readyz');
          expect(container.livenessProbe?.httpGet?.path, `${workload}: livenessProbe`).to.equal('/healthz');
          const readiness = container.readinessProbe!;
          const noticedWithinS = (readiness.periodSeconds ?? 10) * (readiness.failureThreshold ?? 3) + (readiness.timeoutSeconds ?? 1);
          expect(noticedWithinS * 1000, `${workload}: a draining pod is seen unready before the drain ends`).to.be.at.most(drainMs(settings));
        }
      });

      it('sets only variables docs/configuration.md names', function () {
        const names = [
          ...containers().flatMap(({ workload, container }) => (container.env ?? []).map((variable) => `${workload}: ${variable.name}`)),
          ...ofKind<IConfigMap>(objects(), 'ConfigMap').flatMap((map) => Object.keys(map.data ?? {}).map((key) => `ConfigMap ${map.metadata!.name!}: ${key}`)),
          ...objects().filter((object) => object.kind === 'Secret')
            .flatMap((secret) => [...Object.keys(secret.data ?? {}), ...Object.keys(secret.stringData ?? {})].map((key) => `Secret ${secret.metadata.name}: ${key}`)),
        ];
        expect(names).to.not.be.empty;
        const undocumented = names.filter((name) => !documented.has(name.slice(name.lastIndexOf(' ') + 1)));
        expect(undocumented, `not in docs/configuration.md: ${undocumented.join('; ')}`).to.deep.equal([]);
      });

      it('keeps secrets out of ConfigMaps and out of the manifests', function () {
        const exposed = [
          ...ofKind<IConfigMap>(objects(), 'ConfigMap').flatMap((map) => Object.entries(map.data ?? {}).map(([key, value]) => ({ where: `ConfigMap ${map.metadata!.name!}`, key, value }))),
          ...containers().flatMap(({ workload, container }) => (container.env ?? []).filter((variable) => variable.value !== undefined).map((variable) => ({ where: workload, key: variable.name, value: variable.value! }))),
        ];
        const secrets = exposed.filter(({ key, value }) => SECRET_SETTINGS.includes(key) || SECRET_LIKE.test(key) || URL_WITH_PASSWORD.test(value));
        const named = secrets.map(({ where, key }) => `${where}: ${key}`);
        expect(named, `secrets outside a Secret: ${named.join('; ')}`).to.deep.equal([]);
        expect(objects().filter((object) => object.kind === 'Secret').map((object) => object.metadata.name), 'Secrets with values').to.deep.equal([]);
      });

      it('runs every pod as a non-root user on a read-only root filesystem, without capabilities or privilege escalation', function () {
        const { user } = image();
        for (const { name, pod } of workloads(objects())) {
          expect(pod.securityContext?.runAsNonRoot, `${name}: runAsNonRoot`).to.equal(true);
          expect(pod.securityContext?.runAsUser, `${name}: runAsUser, the image's USER`).to.equal(Number.parseInt(user, 10));
          expect(pod.securityContext?.seccompProfile?.type, `${name}: seccompProfile`).to.equal('RuntimeDefault');
          expect(pod.enableServiceLinks, `${name}: enableServiceLinks (a Service named portal would set PORTAL_PORT=tcp://...)`).to.equal(false);
          expect(pod.automountServiceAccountToken, `${name}: automountServiceAccountToken`).to.equal(false);
          for (const container of [...(pod.initContainers ?? []), ...pod.containers]) {
            const where = `${name}, ${container.name}`;
            expect(container.securityContext?.readOnlyRootFilesystem, `${where}: readOnlyRootFilesystem`).to.equal(true);
            expect(container.securityContext?.allowPrivilegeEscalation, `${where}: allowPrivilegeEscalation`).to.equal(false);
            expect(container.securityContext?.capabilities?.drop, `${where}: capabilities dropped`).to.include('ALL');
            expect(container.securityContext?.capabilities?.add ?? [], `${where}: capabilities added`).to.deep.equal([]);
            expect(container.resources?.requests, `${where}: resources.requests`).to.include.keys('cpu', 'memory');
            expect(container.resources?.limits, `${where}: resources.limits`).to.include.keys('memory');
          }
        }
      });

      it('gives a stopping pod the time to drain and to finish its requests', function () {
        for (const deployment of ofKind<IDeployment>(objects(), 'Deployment')) {
          const pod = deployment.spec!.template.spec!;
          const drain = Math.max(...pod.containers.map((container) => drainMs(settingsOf(container, objects()))));
          expect((pod.terminationGracePeriodSeconds ?? 30) * 1000, `Deployment ${deployment.metadata!.name!}: terminationGracePeriodSeconds`)
            .to.be.at.least(drain + IN_FLIGHT_MS + GRACE_MARGIN_MS);
        }
      });

      it('has each Service and disruption budget select pods, and each Service target a port they declare', function () {
        const templates = ofKind<IDeployment>(objects(), 'Deployment').map((deployment) => deployment.spec!.template);
        const selects = (selector: Record<string, string>) => templates.filter((template) =>
          Object.entries(selector).every(([key, value]) => template.metadata?.labels?.[key] === value));
        for (const service of ofKind<IService>(objects(), 'Service')) {
          const pods = selects(service.spec!.selector!);
          expect(pods, `Service ${service.metadata!.name!} selects pods`).to.have.length(1);
          for (const port of service.spec!.ports!) {
            expect(declaredPort(pods[0]!.spec!.containers[0]!, port.targetPort ?? port.port), `Service ${service.metadata!.name!}: ${port.name ?? port.port}`).to.not.equal(undefined);
          }
        }
        for (const budget of ofKind<IPodDisruptionBudget>(objects(), 'PodDisruptionBudget')) {
          expect(selects(budget.spec!.selector!.matchLabels!), `PodDisruptionBudget ${budget.metadata!.name!} selects pods`).to.have.length(1);
        }
      });
    });
  }

  describe('overlays/demo', function () {
    it('runs one API pod on memory storage, without autoscaler or disruption budget', function () {
      const objects = rendered.get('demo')!;
      const [api, ...others] = ofKind<IDeployment>(objects, 'Deployment');
      expect(others).to.deep.equal([]);
      expect(api!.spec!.replicas).to.equal(1);
      const settings = settingsOf(api!.spec!.template.spec!.containers[0]!, objects);
      expect(settings.get('STORAGE')).to.equal('memory');
      expect(settings.get('ROLE')).to.equal('api');
      expect(objects.map((object) => object.kind)).to.not.include.members(['HorizontalPodAutoscaler', 'PodDisruptionBudget', 'Job']);
    });

    it('makes a namespace that enforces the restricted Pod Security Standard', function () {
      const namespaces = rendered.get('demo')!.filter((object) => object.kind === 'Namespace') as { metadata: { labels?: Record<string, string> } }[];
      expect(namespaces).to.have.length(1);
      expect(namespaces[0]!.metadata.labels?.['pod-security.kubernetes.io/enforce']).to.equal('restricted');
    });
  });

  describe('overlays/production', function () {
    const objects = (): KubeObject[] => rendered.get('production')!;
    const deployment = (name: string): IDeployment => ofKind<IDeployment>(objects(), 'Deployment').find((found) => found.metadata!.name === name)!;

    it('runs the API on MySQL and Redis, 2 to 10 pods on CPU, and keeps one through a disruption', function () {
      const api = deployment('partner-catalog-api');
      const settings = settingsOf(api.spec!.template.spec!.containers[0]!, objects());
      expect([settings.get('ROLE'), settings.get('STORAGE'), settings.get('RATE_LIMIT_STORE')]).to.deep.equal(['api', 'mysql', 'redis']);
      // The autoscaler owns the count: a count in the Deployment would reset it on every apply.
      expect(api.spec!.replicas).to.equal(undefined);
      const [hpa] = ofKind<IHorizontalPodAutoscaler>(objects(), 'HorizontalPodAutoscaler');
      expect(hpa!.spec!.scaleTargetRef).to.include({ kind: 'Deployment', name: 'partner-catalog-api' });
      expect([hpa!.spec!.minReplicas, hpa!.spec!.maxReplicas]).to.deep.equal([2, 10]);
      expect(hpa!.spec!.metrics).to.deep.equal([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }]);
      const [budget] = ofKind<IPodDisruptionBudget>(objects(), 'PodDisruptionBudget');
      expect(budget!.spec!.minAvailable).to.equal(1);
    });

    it('runs the portal in pods of its own, and the migration as a Job, with the Secret the operator creates', function () {
      const portal = deployment('partner-catalog-portal').spec!.template.spec!.containers[0]!;
      expect(settingsOf(portal, objects()).get('ROLE')).to.equal('portal');
      expect(settingsOf(portal, objects()).get('STORAGE')).to.equal('mysql');
      const [job] = ofKind<IJob>(objects(), 'Job');
      const migrate = job!.spec!.template.spec!.containers[0]!;
      expect([...(migrate.command ?? []), ...(migrate.args ?? [])]).to.deep.equal(['node', 'dist/cli.js', 'migrate']);
      for (const { workload, container } of workloads(objects()).flatMap(({ name, pod }) => pod.containers.map((found) => ({ workload: name, container: found })))) {
        expect(container.envFrom?.map((source) => source.secretRef?.name), workload).to.include('partner-catalog-secrets');
      }
    });

    it('shows the Secret\'s keys in an example of documented variables, with no real value', function () {
      const example = envFile('deploy/kubernetes/overlays/production/secrets.example.env');
      expect([...example.keys()]).to.include.members(['DATABASE_URL', 'REDIS_URL', 'CURSOR_SECRET']);
      for (const [key, value] of example) {
        expect(documented.has(key), `${key} is documented`).to.equal(true);
        expect(value, key).to.include('CHANGE-ME');
      }
    });
  });
});
