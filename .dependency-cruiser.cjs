/** The architecture rule (docs/architecture.md): dependencies point inward, adapters stay apart. */
module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      comment: 'src/domain imports only itself, Node built-ins, TypeBox, in which the response contract is declared, and ipaddr.js, which classifies webhook target addresses (pure functions, no I/O).',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { pathNot: '^(src/domain/|node_modules/typebox/|node_modules/ipaddr\\.js/)', dependencyTypesNot: ['core'] },
    },
    {
      name: 'application-needs-only-domain',
      comment: 'src/application imports only itself and src/domain.',
      severity: 'error',
      from: { path: '^src/application/' },
      to: { pathNot: '^src/(application|domain)/' },
    },
    {
      name: 'adapters-stay-apart',
      comment: 'An adapter never imports another adapter; the composition root joins them. src/adapters/listening is no adapter: how each of our listeners opens and closes; nor is src/adapters/tracing: the traces of the process, in which every adapter draws its spans. Files directly in src/adapters (timeouts, service metrics) are what every adapter shares.',
      severity: 'error',
      from: { path: '^src/adapters/([^/]+)/' },
      to: { path: '^src/adapters/([^/]+)/', pathNot: '^src/adapters/($1|listening|tracing)/' },
    },
    {
      name: 'nothing-imports-the-roots',
      severity: 'error',
      from: { path: '^src/(domain|application|adapters)/' },
      to: { path: '^src/((main|cli)\\.ts$|composition/)' },
    },
    {
      name: 'no-dev-dependencies-at-run-time',
      comment: 'Production installs omit devDependencies (README, production): src/ runs on dependencies only. Types are erased.',
      severity: 'error',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
