// One traced request, in a process of its own: tracing's instrumentations must patch http, pg,
// Fastify and Prisma before those load, which Jest's per-file module registry does not allow.
// Starts tracing (src/tracing.ts) into an in-memory exporter, then the gateway (src/app.ts) on
// DATABASE_URL and PROVIDER_BASE_URL from the environment, sends it one POST /v1/customers (key in
// TRACE_API_KEY) over real HTTP, and prints the finished spans as one JSON line on stdout.
// TypeScript is compiled on load by SWC, as in gateway-child.js (Nest needs decorator metadata).
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

const { InMemorySpanExporter } = require('@opentelemetry/sdk-trace-base');
const { startTracing, stopTracing } = require('../../src/tracing.ts');

const exporter = new InMemorySpanExporter();
startTracing(exporter);
require('reflect-metadata');
const { createApp } = require('../../src/app.ts');

const SERVER = 1; // SpanKind.SERVER

async function main() {
  const app = await createApp({ bufferLogs: true });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const res = await fetch(`${await app.getUrl()}/v1/customers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${process.env.TRACE_API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      email: 'traced@example.com',
      firstName: 'Ada',
      lastName: 'Obi',
      phone: '8012345678',
      countryCode: '+254',
    }),
  });
  const body = await res.text();
  // The server span ends once the answer is written: wait for it rather than for a fixed time.
  const deadline = Date.now() + 10_000;
  while (!exporter.getFinishedSpans().some((s) => s.kind === SERVER) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
  await app.close();
  const spans = exporter.getFinishedSpans().map((s) => ({
    name: s.name,
    traceId: s.spanContext().traceId,
    spanId: s.spanContext().spanId,
    parentSpanId: s.parentSpanContext?.spanId,
    kind: s.kind,
    scope: s.instrumentationScope.name,
    attributes: Object.fromEntries(
      Object.entries(s.attributes).filter(([k]) => /^(http|url|server|db|net|fastify)\./.test(k)),
    ),
  }));
  process.stdout.write(`${JSON.stringify({ status: res.status, body, spans })}\n`);
  await stopTracing();
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`${error.stack}\n`);
    process.exit(1);
  },
);
