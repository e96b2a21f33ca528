// Jest runs on Node 20, where Jest's own module loader cannot require() ES modules (Node's
// require(esm) only reaches Jest on Node >= 24.9). NestJS 12 and a few of its dependencies ship
// only ESM, so those packages are compiled to CommonJS by SWC like our own TypeScript. The list
// is read from node_modules ("type": "module") so a dependency bump needs no edit here.
const fs = require('node:fs');
const path = require('node:path');

function esmPackages(dir = path.join(__dirname, 'node_modules')) {
  const found = new Set();
  const visit = (d) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const full = path.join(d, entry.name);
      if (entry.name.startsWith('@')) {
        visit(full);
        continue;
      }
      try {
        const pkg = JSON.parse(fs.readFileSync(path.join(full, 'package.json'), 'utf8'));
        if (pkg.type === 'module') found.add(pkg.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
      } catch {
        /* not a package */
      }
      const nested = path.join(full, 'node_modules');
      if (fs.existsSync(nested)) visit(nested);
    }
  };
  visit(dir);
  return [...found];
}

const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
  },
];

module.exports = {
  testEnvironment: 'node',
  rootDir: __dirname,
  transform: { '^.+\\.(t|m?j)s$': swc },
  transformIgnorePatterns: [`/node_modules/(?!(${esmPackages().join('|')})/)`],
  // json-schema-faker's `exports` offer only an `import` condition, which Jest's resolver (asking for
  // `require`/`default`) does not take: point it at that entry, which SWC compiles like the above.
  moduleNameMapper: { '^json-schema-faker$': '<rootDir>/node_modules/json-schema-faker/dist/index.js' },
  testRegex: '(src|test|simulator)/.*\\.(test|spec|e2e-spec|medium-spec)\\.ts$',
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // Two cores: one worker per core; e2e files each boot an app, a simulator and a database.
  maxWorkers: process.env.JEST_MAX_WORKERS ?? 2,
  testTimeout: 30_000,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
};
