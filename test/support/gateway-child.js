// The gateway (src/main.ts) as a child process of a test, for tests that kill it mid-call
// (SIGKILL) and look at what it left behind. TypeScript is compiled on load by SWC with decorator
// metadata (Nest's dependency injection needs it; tsx/esbuild does not emit it), to CommonJS as
// under Jest. Configuration comes from the environment, as for `node dist/main.js`.
const fs = require('node:fs');
const { transformSync } = require('@swc/core');

const OPTIONS = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
  },
  module: { type: 'commonjs' },
};

require.extensions['.ts'] = (module, filename) => {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), { ...OPTIONS, filename });
  module._compile(code, filename);
};

require('../../src/main.ts');
