/**
 * The layers of src/ (ARCHITECTURE.md), bottom first: a module imports from its own layer or from the layers
 * below it, never from one above. Checked by `npm run lint:layers` in `npm test`.
 */
const LAYERS = [
  ['lib', 'wire', 'version', 'telemetry'],
  ['domain'],
  ['metrics'],
  ['upstream'],
  ['settings', 'config'],
  ['reference'],
  ['store'],
  ['dataset'],
  ['freshness', 'search', 'estimate', 'access', 'keys', 'notify', 'billing'],
  ['presenters'],
  ['read'],
  ['sync'],
  ['http'],
  ['agents'],
  ['app', 'local-site', 'local-stripe'],
  ['runtime'],
  ['cli'],
  ['main'],
];

/** A folder of src/ or a file at its top (`config` is src/config.ts). */
const place = (names) => `^src/(${names.join('|')})(/|\\.ts$)`;

const upward = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `layer-${layer.join('-')}`,
  comment: `${layer.join(', ')} import only from their own layer and the ones below (ARCHITECTURE.md)`,
  severity: 'error',
  from: { path: place(layer) },
  to: { path: place(LAYERS.slice(i + 1).flat()) },
}));

/** Peers of one layer that stay apart: each is its own slice. */
const peers = ['freshness', 'search', 'estimate', 'access', 'keys', 'notify', 'billing'].map((name, _, all) => ({
  name: `apart-${name}`,
  comment: `${name} does not import its peers of the same layer`,
  severity: 'error',
  from: { path: place([name]) },
  to: { path: place(all.filter((other) => other !== name)) },
}));

module.exports = {
  forbidden: [
    ...upward,
    ...peers,
    {
      name: 'request-path-without-emulators',
      comment: "the request path does not read the emulators' data builders or the background jobs",
      severity: 'error',
      from: { path: place(['http', 'read', 'search', 'estimate', 'freshness', 'access', 'agents', 'presenters', 'billing']) },
      to: { path: place(['dataset', 'sync']) },
    },
    {
      name: 'background-without-request-path',
      comment: 'the background jobs (the crawl, the webhooks) do not import the read service or the HTTP layer',
      severity: 'error',
      from: { path: place(['sync', 'notify']) },
      to: { path: place(['read', 'http', 'agents']) },
    },
    {
      name: 'production-without-local-upstreams',
      comment: 'only the composition (runtime, local-site, the command line) starts the local emulators',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(runtime|local-site|local-stripe|main)\\.ts$|^src/runtime/|^src/cli/|^src/upstream/local|^src/dataset/' },
      to: { path: '^src/upstream/local' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-orphans',
      comment: 'every module of src/ is used (the entry points aside: the command line, and the background thread it starts)',
      severity: 'error',
      from: { orphan: true, path: '^src/', pathNot: '\\.d\\.ts$|^src/main\\.ts$|^src/runtime/background-worker\\.ts$|^src/store/migrations/' },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
