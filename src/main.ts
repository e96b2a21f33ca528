// First: tracing's instrumentations must patch http, pg, Fastify and Prisma before they load.
import { stopTracing, tracingActive } from './tracing';
import 'reflect-metadata';
import 'dotenv/config';
import { Logger } from '@nestjs/common';
import { createApp } from './app';
import { validateEnv } from './config/env';
import { ShutdownService } from './lifecycle/shutdown.service';
import { stopOnSignals } from './lifecycle/stop-signals';

/** Production entry point: `node dist/main.js` against whatever the environment points to. */
async function main(): Promise<void> {
  const started = process.hrtime.bigint();
  let env;
  try {
    env = validateEnv(process.env);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(1);
  }
  const app = await createApp();
  // Only when tracing is on: the shutdown log then names the flush of the last spans.
  if (tracingActive()) app.get(ShutdownService).register('pools', 'tracing exporter', stopTracing, { last: true });
  stopOnSignals(app, env.SHUTDOWN_DELAY_MS);
  await app.listen({ port: env.PORT, host: env.HOST });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  new Logger('Main').log({ port: env.PORT, startupMs: Math.round(ms) }, `gateway ready on ${await app.getUrl()}`);
}

void main();
