/**
 * `npx tsx simulator/main.ts` (`npm run simulator`): the provider simulator on SIMULATOR_HOST:SIMULATOR_PORT.
 * Settings (all optional): PROVIDER_API_KEY, PROVIDER_WEBHOOK_SECRET, SIMULATOR_WEBHOOK_URL,
 * SIMULATOR_QUOTE_TTL_SECONDS, SIMULATOR_CARD_CREATE_DELAY_MS, SIMULATOR_CARD_TXN_SETTLE_DELAY_MS,
 * SIMULATOR_PAYOUT_COMPLETE_DELAY_MS (payouts complete by themselves), SIMULATOR_BENEFICIARY_CALLBACK_DELAY_MS
 * (default 50 here), SIMULATOR_KYC_CALLBACK_DELAY_MS, SIMULATOR_CALLBACK_RETRY_DELAY_MS,
 * SIMULATOR_CALL_LOG_LIMIT, SIMULATOR_FAULTS and SIMULATOR_CALLBACK_FAULTS (JSON), SIMULATOR_LOG=true,
 * SIMULATOR_SWAP_AMOUNT_UNIT (major, the default, or minor: how initialize-swap reads `amount`),
 * SIMULATOR_STATE_FILE (records and balances are loaded from it at start and written to it every
 * 2 s and on stop, so a restart keeps the customers and cards the gateway knows; `npm start` sets it).
 */
import fs from 'node:fs';
import { buildSimulator } from './app';
import { parseCallbackFaults } from './callbacks';
import { parseFaults } from './faults';

const optionalNumber = (value: string | undefined) => (value ? Number(value) : undefined);
const swapAmountUnit = (value: string | undefined): 'major' | 'minor' | undefined => {
  if (!value) return undefined;
  if (value !== 'major' && value !== 'minor') throw new Error('SIMULATOR_SWAP_AMOUNT_UNIT must be major or minor');
  return value;
};
const env = process.env;

async function main(): Promise<void> {
  const port = Number(process.env.SIMULATOR_PORT ?? 4010);
  const host = process.env.SIMULATOR_HOST ?? '127.0.0.1';
  const { app, state } = await buildSimulator({
    apiKey: env.PROVIDER_API_KEY || 'sk.sim.0123456789abcdef.local',
    webhookSecret: env.PROVIDER_WEBHOOK_SECRET || 'whsec-sim-local',
    webhookUrl: env.SIMULATOR_WEBHOOK_URL || undefined,
    quoteTtlSeconds: optionalNumber(env.SIMULATOR_QUOTE_TTL_SECONDS),
    swapAmountUnit: swapAmountUnit(env.SIMULATOR_SWAP_AMOUNT_UNIT),
    cardCreateDelayMs: optionalNumber(env.SIMULATOR_CARD_CREATE_DELAY_MS),
    cardTxnSettleDelayMs: optionalNumber(env.SIMULATOR_CARD_TXN_SETTLE_DELAY_MS),
    payoutCompleteDelayMs: optionalNumber(env.SIMULATOR_PAYOUT_COMPLETE_DELAY_MS),
    // A running simulator follows each new beneficiary with its status callback, as the provider does.
    beneficiaryCallbackDelayMs: optionalNumber(env.SIMULATOR_BENEFICIARY_CALLBACK_DELAY_MS) ?? 50,
    kycCallbackDelayMs: optionalNumber(env.SIMULATOR_KYC_CALLBACK_DELAY_MS),
    callbackRetryDelayMs: optionalNumber(env.SIMULATOR_CALLBACK_RETRY_DELAY_MS),
    callLogLimit: optionalNumber(env.SIMULATOR_CALL_LOG_LIMIT),
    faults: env.SIMULATOR_FAULTS ? parseFaults(JSON.parse(env.SIMULATOR_FAULTS)) : undefined,
    callbackFaults: env.SIMULATOR_CALLBACK_FAULTS
      ? parseCallbackFaults(JSON.parse(env.SIMULATOR_CALLBACK_FAULTS))
      : undefined,
    logger: env.SIMULATOR_LOG === 'true',
  });
  const stateFile = env.SIMULATOR_STATE_FILE || undefined;
  let saved = '';
  const save = () => {
    if (!stateFile) return;
    const snapshot = state.snapshot();
    if (snapshot === saved) return;
    fs.writeFileSync(`${stateFile}.tmp`, snapshot);
    fs.renameSync(`${stateFile}.tmp`, stateFile);
    saved = snapshot;
  };
  if (stateFile && fs.existsSync(stateFile)) {
    state.restore(fs.readFileSync(stateFile, 'utf8'));
    saved = state.snapshot();
  }
  if (stateFile) setInterval(save, 2000).unref();
  await app.listen({ port, host });
  process.stdout.write(`simulator listening on http://${host}:${port}/api/v1\n`);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    save();
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.on('SIGHUP', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`simulator failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
