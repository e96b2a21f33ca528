/** `npx tsx simulator/main.ts` (`npm run simulator`): the provider simulator on SIMULATOR_HOST:SIMULATOR_PORT. */
import { buildSimulator } from './app';
import { parseFaults } from './faults';

const optionalNumber = (value: string | undefined) => (value ? Number(value) : undefined);

async function main(): Promise<void> {
  const port = Number(process.env.SIMULATOR_PORT ?? 4010);
  const host = process.env.SIMULATOR_HOST ?? '127.0.0.1';
  const { app } = await buildSimulator({
    apiKey: process.env.PROVIDER_API_KEY || 'sk.sim.0123456789abcdef.local',
    webhookSecret: process.env.PROVIDER_WEBHOOK_SECRET || 'whsec-sim-local',
    webhookUrl: process.env.SIMULATOR_WEBHOOK_URL || undefined,
    quoteTtlSeconds: optionalNumber(process.env.SIMULATOR_QUOTE_TTL_SECONDS),
    faults: process.env.SIMULATOR_FAULTS ? parseFaults(JSON.parse(process.env.SIMULATOR_FAULTS)) : undefined,
    logger: process.env.SIMULATOR_LOG === 'true',
  });
  await app.listen({ port, host });
  process.stdout.write(`simulator listening on http://${host}:${port}/api/v1\n`);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`simulator failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
