// The deployment files (issue 43 item 5) agree with each other and with the code: deploy/kubernetes's
// probes and drain line up with BASEPLANE_UNREADY_MS and the node's 10 s drain, every variable they
// set is one lib/config.ts reads (and the whole set loads), the pods and the image run as non-root,
// the Containerfile copies what the runtime reads, and the systemd unit's stop covers the drain.
// Where the tools are installed, kubectl decodes the manifests and systemd-analyze verifies the unit;
// a machine without them skips those parts, saying so.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
// tap's own YAML parser (tap -> tap-yaml -> yaml), not a dependency of ours: the test runs under tap anyway.
import { parseAllDocuments } from 'yaml'
import { loadConfig } from '../../lib/config.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')
const K8S = path.join(ROOT, 'deploy/kubernetes')
const read = (relative: string) => fs.readFileSync(path.join(ROOT, relative), 'utf8')

// The manifests' shapes are Kubernetes', checked field by field below.
type Json = Record<string, any>

function manifest(file: string): Json {
  const documents = parseAllDocuments(fs.readFileSync(path.join(K8S, file), 'utf8'))
  if (!Array.isArray(documents) || documents.length !== 1) throw new Error(`${file}: expected one YAML document`)
  const [document] = documents
  if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0].message}`)
  return document.toJS() as Json
}

const FILES = { 'configmap.yaml': 'ConfigMap', 'secret.yaml': 'Secret', 'deployment.yaml': 'Deployment', 'service.yaml': 'Service', 'pdb.yaml': 'PodDisruptionBudget' } as const
const objects = Object.fromEntries(Object.keys(FILES).map((file) => [file, manifest(file)])) as Record<keyof typeof FILES, Json>
const deployment = objects['deployment.yaml']
const pod = deployment.spec.template.spec
const container = pod.containers[0]
const configMap = objects['configmap.yaml'].data as Record<string, string>
const secret = objects['secret.yaml'].stringData as Record<string, string>

/** The node's own drain (cli/commands/start.ts), read from its source rather than imported: importing it loads the whole start path. */
const DRAIN_SECONDS = Number(/export const DRAIN_MS = (\d+)/.exec(read('cli/commands/start.ts'))![1]) / 1000
const UNREADY_SECONDS = Number(configMap.BASEPLANE_UNREADY_MS) / 1000
/** What the preStop hook sleeps: exec ["sleep", "N"] or Kubernetes 1.30's sleep action. */
const PRESTOP_SECONDS = (() => {
  const preStop = container.lifecycle?.preStop ?? {}
  if (preStop.sleep) return Number(preStop.sleep.seconds)
  const [command, seconds] = preStop.exec?.command ?? []
  return command === 'sleep' ? Number(seconds) : NaN
})()

/** Every environment variable lib/config.ts reads: the names it passes as strings ('PORT') and the ones it reads as env.NAME. */
const CONFIG_NAMES = (() => {
  const source = read('lib/config.ts')
  const names = new Set<string>()
  for (const match of source.matchAll(/'((?:BASEPLANE|DATABASE|SMTP|HOST|PORT)[A-Z0-9_]*)'/g)) names.add(match[1])
  for (const match of source.matchAll(/\benv\.([A-Z][A-Z0-9_]*)/g)) names.add(match[1])
  return names
})()

/** NAME=value lines of deploy/systemd/baseplane.env.example; commented ones (`# NAME=...`) with set false. */
function envExample(): Array<{ name: string; value: string; set: boolean }> {
  return read('deploy/systemd/baseplane.env.example')
    .split('\n')
    .flatMap((line) => {
      const match = /^(# )?([A-Z][A-Z0-9_]*)=(.*)$/.exec(line)
      return match ? [{ name: match[2], value: match[3], set: match[1] === undefined }] : []
    })
}

/** A unit file's Key=value lines (the last one wins, as for systemd's single-valued keys). */
function unitSettings(text: string): Map<string, string> {
  const settings = new Map<string, string>()
  for (const line of text.split('\n')) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(line)
    if (match) settings.set(match[1], match[2])
  }
  return settings
}

const ADMIN_TOKEN = 'a'.repeat(32)

t.test('each manifest is one object of the expected kind, all named baseplane', async (t) => {
  for (const [file, kind] of Object.entries(FILES)) {
    const object = objects[file as keyof typeof FILES]
    t.equal(object.kind, kind, `${file} is a ${kind}`)
    t.equal(object.metadata.name, 'baseplane', `${file} is named baseplane`)
  }
  const kustomization = parseAllDocuments(read('deploy/kubernetes/kustomization.yaml'))
  t.same(Array.isArray(kustomization) ? [...(kustomization[0].toJS() as Json).resources].sort() : [], Object.keys(FILES).sort(), 'the kustomization lists every manifest')
})

t.test('the probes and the drain line up with BASEPLANE_UNREADY_MS and the node\'s 10 s drain', async (t) => {
  t.equal(DRAIN_SECONDS, 10, 'the node finishes requests in flight for up to 10 s')
  t.equal(container.livenessProbe.httpGet.path, '/live', 'liveness asks /live')
  t.equal(container.startupProbe.httpGet.path, '/live', 'the start is judged by /live too')
  t.equal(container.readinessProbe.httpGet.path, '/ready', 'readiness asks /ready')
  const portNames = container.ports.map((port: Json) => port.name)
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
    t.ok(portNames.includes(container[probe].httpGet.port), `${probe} asks a port the container names`)
  }
  const readiness = container.readinessProbe
  t.ok(readiness.periodSeconds * readiness.failureThreshold <= UNREADY_SECONDS, `readiness gives up (${readiness.periodSeconds} s x ${readiness.failureThreshold}) within BASEPLANE_UNREADY_MS (${UNREADY_SECONDS} s)`)
  t.ok(PRESTOP_SECONDS > 0, `preStop sleeps (${PRESTOP_SECONDS} s) before SIGTERM`)
  const needed = PRESTOP_SECONDS + UNREADY_SECONDS + DRAIN_SECONDS
  t.ok(pod.terminationGracePeriodSeconds >= needed + 5, `terminationGracePeriodSeconds (${pod.terminationGracePeriodSeconds}) covers preStop + unready + drain (${needed} s) with a margin`)
  t.ok(UNREADY_SECONDS * 1000 <= 120000, 'BASEPLANE_UNREADY_MS is within what lib/config.ts accepts')
  t.equal(Number(container.env.find((entry: Json) => entry.name === 'PORT').value), container.ports[0].containerPort, 'PORT is the container port')
  t.equal(container.env.find((entry: Json) => entry.name === 'HOST').value, '0.0.0.0', 'the node listens beyond the pod\'s loopback')
})

t.test('three replicas, a rollout that never lowers capacity, a budget of one, a Service that selects the pods', async (t) => {
  t.equal(deployment.spec.replicas, 3)
  t.same(deployment.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } })
  const labels = deployment.spec.template.metadata.labels
  t.same(deployment.spec.selector.matchLabels, labels, 'the Deployment selects its own pods')
  const pdb = objects['pdb.yaml'].spec
  t.ok(pdb.maxUnavailable === 1 || pdb.minAvailable === 2, 'the budget keeps two of three nodes')
  t.same(pdb.selector.matchLabels, labels, 'the budget covers the pods')
  t.same(Object.keys(pdb).filter((key) => !['maxUnavailable', 'minAvailable', 'selector', 'unhealthyPodEvictionPolicy'].includes(key)), [], 'the budget names only policy/v1 fields')
  const service = objects['service.yaml'].spec
  t.same(service.selector, labels, 'the Service selects the pods')
  t.ok(container.ports.some((port: Json) => port.name === service.ports[0].targetPort), 'the Service targets the container\'s named port')
  t.notOk(service.sessionAffinity && service.sessionAffinity !== 'None', 'no stickiness: every node answers every project')
})

t.test('every variable the manifests and the environment file set is one lib/config.ts reads, and the set loads', async (t) => {
  t.ok(CONFIG_NAMES.has('PORT') && CONFIG_NAMES.has('DATABASE_URL') && CONFIG_NAMES.has('BASEPLANE_UNREADY_MS') && CONFIG_NAMES.has('BASEPLANE_STORAGE_S3_BUCKET'), 'the names are read from lib/config.ts')
  const deploymentEnv = Object.fromEntries(container.env.map((entry: Json) => [entry.name, entry.value as string]))
  const example = envExample()
  const named = { 'configmap.yaml': Object.keys(configMap), 'secret.yaml': Object.keys(secret), 'deployment.yaml': Object.keys(deploymentEnv), 'baseplane.env.example': example.map((entry) => entry.name) }
  for (const [file, names] of Object.entries(named)) {
    t.same(names.filter((name) => !CONFIG_NAMES.has(name)), [], `${file} names only variables lib/config.ts reads`)
  }
  t.same(
    envFromNames(),
    ['configMapRef:baseplane', 'secretRef:baseplane'],
    'the pods take the ConfigMap and the Secret',
  )

  const env = { ...configMap, ...secret, ...deploymentEnv }
  t.throws(() => loadConfig(env, '/'), { message: 'BASEPLANE_ADMIN_TOKEN must be at least 32 characters' }, 'the placeholder admin token fails the start, so no node runs with it')
  const config = loadConfig({ ...env, BASEPLANE_ADMIN_TOKEN: ADMIN_TOKEN }, '/')
  t.match(config, { host: '0.0.0.0', port: 8000, home: '/var/lib/baseplane', unreadyMillis: UNREADY_SECONDS * 1000, storage: { kind: 's3', bucket: 'baseplane' } }, 'the Kubernetes settings load, with Storage on S3')
  t.ok(config.natsServers !== undefined, 'Realtime crosses the fleet over NATS')

  const set = Object.fromEntries(example.filter((entry) => entry.set).map((entry) => [entry.name, entry.value]))
  t.match(loadConfig({ ...set, BASEPLANE_ADMIN_TOKEN: ADMIN_TOKEN, BASEPLANE_HOME: '/var/lib/baseplane' }, '/'), { host: '0.0.0.0', unreadyMillis: Number(set.BASEPLANE_UNREADY_MS) }, 'the systemd environment file loads')
})

function envFromNames(): string[] {
  return container.envFrom.map((source: Json) => (source.configMapRef ? `configMapRef:${source.configMapRef.name}` : `secretRef:${source.secretRef.name}`))
}

t.test('no secret is committed: the Secret and the environment file hold placeholders', async (t) => {
  for (const [name, value] of Object.entries(secret)) t.match(value, /REPLACE_ME/, `secret.yaml's ${name} is a placeholder`)
  t.notOk(objects['secret.yaml'].data, 'no base64 data beside stringData')
  for (const entry of envExample().filter((entry) => /DATABASE_URL|TOKEN|SECRET|KEY_ID|SMTP_URL/.test(entry.name))) {
    t.match(entry.value, /REPLACE_ME/, `baseplane.env.example's ${entry.name} is a placeholder`)
  }
})

t.test('the pods and the image run as a non-root user on a read-only root', async (t) => {
  t.equal(pod.securityContext.runAsNonRoot, true, 'runAsNonRoot')
  t.ok(pod.securityContext.runAsUser > 0, 'a numeric user that is not root, which the kubelet can check')
  t.same(container.securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } })
  const mounts = container.volumeMounts.map((mount: Json) => mount.mountPath).sort()
  t.same(mounts, ['/tmp', container.env.find((entry: Json) => entry.name === 'BASEPLANE_HOME').value].sort(), 'the home and /tmp are the only writable folders')
  const containerfile = read('deploy/container/Containerfile')
  const users = [...containerfile.matchAll(/^USER (.+)$/gm)].map((match) => match[1])
  t.equal(users.at(-1), `${pod.securityContext.runAsUser}:${pod.securityContext.runAsGroup}`, 'the image\'s last USER is the pod\'s user')
  t.match(containerfile, /^ARG NODE_IMAGE=node:22-bookworm-slim$/m, 'Node 22 on Debian 12')
  t.match(containerfile, /BASEPLANE_HOME=\/var\/lib\/baseplane/, 'the image\'s home is the one the pods mount')
  t.match(containerfile, /^CMD \["node", "dist\/cli\/main.js", "start"\]$/m, 'the image runs what npm start runs')
  t.same(container.command, ['node', 'dist/cli/main.js', 'start', '--no-demo'], 'the pods run the same as PID 1 (command replaces the entrypoint script), with --no-demo')
})

t.test('the Containerfile builds every folder tsconfig.build.json compiles and copies what the runtime reads', async (t) => {
  const containerfile = read('deploy/container/Containerfile')
  const include = (JSON.parse(read('tsconfig.build.json')) as { include: string[] }).include
  for (const folder of include) t.match(containerfile, new RegExp(`^COPY ${folder} \\./${folder}$`, 'm'), `the build stage copies ${folder}/`)
  t.match(containerfile, /^RUN npm run build$/m, 'the build stage compiles')
  // lib/db/migrations.ts reads sql/, control-plane/dashboard/assets.ts the dashboard's scripts,
  // control-plane/version.ts package.json: all from the package's root, beside dist/.
  for (const copied of ['COPY --from=build /app/dist ./dist', 'COPY sql ./sql', 'COPY control-plane/dashboard/assets ./control-plane/dashboard/assets', 'COPY package.json package-lock.json ./']) {
    t.ok(containerfile.includes(copied), copied)
  }
  t.ok(read('lib/db/migrations.ts').includes("path.join(PACKAGE_ROOT, 'sql')"), 'the migrations are read from sql/ at the package root')
  t.ok(read('control-plane/dashboard/assets.ts').includes("path.join(PACKAGE_ROOT, 'control-plane', 'dashboard', 'assets')"), 'the dashboard\'s scripts are read from the package, not dist/')
  t.match(containerfile, /npm ci --omit=dev/, 'the runtime installs production dependencies only')
  const ignored = read('deploy/container/Containerfile.dockerignore').split('\n')
  t.ok(['node_modules', 'dist', '.baseplane'].every((entry) => ignored.includes(entry)), 'the build context leaves out node_modules/, dist/ and the home')
})

t.test('the systemd unit runs the node as its own user and waits for the drain', async (t) => {
  const unit = unitSettings(read('deploy/systemd/baseplane.service'))
  const unready = Number(envExample().find((entry) => entry.name === 'BASEPLANE_UNREADY_MS' && entry.set)!.value) / 1000
  t.match(Object.fromEntries(unit), {
    User: 'baseplane',
    KillSignal: 'SIGTERM',
    KillMode: 'mixed',
    Restart: 'on-failure',
    NoNewPrivileges: 'yes',
    ProtectSystem: 'strict',
    PrivateTmp: 'yes',
    EnvironmentFile: '/etc/baseplane/baseplane.env',
    StateDirectory: 'baseplane',
  })
  t.match(unit.get('ExecStart'), /^\/usr\/bin\/node \/opt\/baseplane\/dist\/cli\/main\.js start\b/, 'it runs what npm start runs')
  t.match(unit.get('Environment'), /BASEPLANE_HOME=\/var\/lib\/baseplane\b/, 'the home is the state folder systemd makes writable')
  t.ok(Number(unit.get('TimeoutStopSec')) >= unready + DRAIN_SECONDS + 5, `TimeoutStopSec (${unit.get('TimeoutStopSec')}) covers BASEPLANE_UNREADY_MS (${unready} s) + the drain (${DRAIN_SECONDS} s) with a margin`)
})

/** kubectl on PATH, or undefined. */
function which(command: string): string | undefined {
  for (const folder of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(folder, command)
    if (folder && fs.existsSync(candidate)) return candidate
  }
  return undefined
}

const kubectl = which('kubectl')

/**
 * kubectl without a cluster. `create` and `apply --dry-run=client` still ask the server's discovery
 * (and `--validate` its OpenAPI): offline they fail with "couldn't get current server API group list".
 * The `--local` forms read files only: `label --local` decodes any object, and `set image` and
 * `set selector --local` decode a Deployment and a Service into kubectl's typed Go structs and back,
 * which drops every field the API does not define and refuses a value of the wrong type. An empty
 * KUBECONFIG keeps a developer's own cluster out of it.
 */
function runKubectl(t: Test, args: string[]): Json {
  const kubeconfig = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'kubeconfig-')), 'config')
  fs.writeFileSync(kubeconfig, '')
  const run = spawnSync(kubectl!, args, { encoding: 'utf8', env: { ...process.env, KUBECONFIG: kubeconfig }, timeout: 60000 })
  fs.rmSync(path.dirname(kubeconfig), { recursive: true, force: true })
  t.equal(run.status, 0, `kubectl ${args.join(' ')}${run.stderr ? `: ${run.stderr.trim()}` : ''}`)
  return run.status === 0 && run.stdout.trim() !== '' ? (JSON.parse(run.stdout) as Json) : {}
}

/** Every leaf of a JSON value, as path -> value. */
function leaves(value: unknown, at = ''): Map<string, unknown> {
  const found = new Map<string, unknown>()
  if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) for (const [leaf, leafValue] of leaves(inner, `${at}/${key}`)) found.set(leaf, leafValue)
  } else {
    found.set(at, value)
  }
  return found
}

/** The leaves of `written` that the typed round trip lost or changed (so a misspelt or unknown field, or a wrong type). */
function lostInRoundTrip(written: Json, typed: Json, except: string[]): string[] {
  const kept = leaves(typed)
  return [...leaves(written)].filter(([leaf, value]) => !except.includes(leaf) && kept.get(leaf) !== value).map(([leaf, value]) => `${leaf}=${JSON.stringify(value)} -> ${JSON.stringify(kept.get(leaf))}`)
}

t.test('kubectl decodes every manifest, offline', { skip: kubectl ? false : 'kubectl is not installed (Debian: apt-get install kubernetes-client)' }, async (t) => {
  for (const [file, kind] of Object.entries(FILES)) {
    const decoded = runKubectl(t, ['label', '--local', '-f', path.join(K8S, file), 'checked=true', '-o', 'json'])
    t.equal(decoded.kind, kind, `kubectl reads ${file} as a ${kind}`)
  }
  const image = `${container.image}-roundtrip`
  const typedDeployment = runKubectl(t, ['set', 'image', '--local', '-f', path.join(K8S, 'deployment.yaml'), `${container.name}=${image}`, '-o', 'json'])
  t.equal(typedDeployment.spec?.template?.spec?.containers?.[0]?.image, image, 'the Deployment went through the typed round trip')
  t.same(lostInRoundTrip(deployment, typedDeployment, ['/spec/template/spec/containers/0/image']), [], 'apps/v1 Deployment defines every field deployment.yaml writes')
  const service = objects['service.yaml']
  const selector = Object.entries(service.spec.selector).map(([key, value]) => `${key}=${value}`).join(',')
  const typedService = runKubectl(t, ['set', 'selector', '--local', '-f', path.join(K8S, 'service.yaml'), selector, '-o', 'json'])
  t.same(lostInRoundTrip(service, typedService, []), [], 'v1 Service defines every field service.yaml writes')
  const kustomize = spawnSync(kubectl!, ['kustomize', K8S], { encoding: 'utf8', timeout: 60000 })
  t.equal(kustomize.status, 0, `kubectl kustomize deploy/kubernetes${kustomize.stderr ? `: ${kustomize.stderr.trim()}` : ''}`)
  t.same(parseAllDocuments(kustomize.stdout).length, Object.keys(FILES).length, 'the kustomization renders the five objects')
})

const systemdAnalyze = which('systemd-analyze')

t.test('systemd-analyze verifies the unit', { skip: systemdAnalyze ? false : 'systemd-analyze is not installed (Debian: apt-get install systemd)' }, async (t) => {
  // verify checks that ExecStart's binary exists; /usr/bin/node may not on this machine, so a copy
  // names the Node running this test instead. Nothing else is changed, and any message fails.
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'baseplane-unit-'))
  t.teardown(() => fs.rmSync(folder, { recursive: true, force: true }))
  const unit = read('deploy/systemd/baseplane.service')
  t.ok(unit.includes('ExecStart=/usr/bin/node '), 'the unit runs /usr/bin/node')
  const copy = path.join(folder, 'baseplane.service')
  fs.writeFileSync(copy, unit.replace('ExecStart=/usr/bin/node ', `ExecStart=${process.execPath} `))
  const run = spawnSync(systemdAnalyze!, ['verify', copy], { encoding: 'utf8', timeout: 60000 })
  t.same({ status: run.status, messages: run.stderr.trim() + run.stdout.trim() }, { status: 0, messages: '' }, 'systemd-analyze verify: no unknown key, no bad value')
})
