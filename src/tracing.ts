import 'dotenv/config';
import { createRequire } from 'node:module';
import type * as FastifyOtel from '@fastify/otel';
import type * as Otlp from '@opentelemetry/exporter-trace-otlp-http';
import type * as Http from '@opentelemetry/instrumentation-http';
import type * as Pg from '@opentelemetry/instrumentation-pg';
import type * as Undici from '@opentelemetry/instrumentation-undici';
import type * as SdkNode from '@opentelemetry/sdk-node';
import type * as SdkTrace from '@opentelemetry/sdk-trace-base';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type * as Prisma from '@prisma/instrumentation';

/**
 * OpenTelemetry tracing (docs/operations.md "Tracing"). Imported first by src/main.ts: the
 * instrumentations patch `http`, `undici`, `pg`, Fastify and Prisma, so they must be loaded before
 * those modules are (dotenv first, so a .env file may set it). With OTEL_EXPORTER_OTLP_ENDPOINT unset nothing of the SDK is loaded (the
 * requires below sit inside the branch that starts it), so tracing off costs nothing.
 */

let sdk: SdkNode.NodeSDK | undefined;

/**
 * Starts the Node SDK with the http, undici, pg, @fastify/otel (Fastify 5, registered on every
 * Fastify instance created afterwards) and Prisma instrumentations.
 * - `exporter` given (tests: an InMemorySpanExporter): spans go to it through a SimpleSpanProcessor,
 *   one by one as they end.
 * - otherwise, when OTEL_EXPORTER_OTLP_ENDPOINT is set: batched OTLP over HTTP to that endpoint (the
 *   SDK reads OTEL_SERVICE_NAME and the other OTEL_* variables; the service name defaults to
 *   `wallet-gateway`).
 * - otherwise: does nothing and returns false.
 * Idempotent: a second call while started returns true without starting another SDK.
 * @returns whether tracing is on.
 */
export function startTracing(exporter?: SpanExporter): boolean {
  if (sdk) return true;
  if (!exporter && !process.env.OTEL_EXPORTER_OTLP_ENDPOINT) return false;
  // Loaded here only, when tracing is on (the type imports above are erased): zero cost otherwise.
  const load = createRequire(__filename);
  const { NodeSDK } = load('@opentelemetry/sdk-node') as typeof SdkNode;
  const { BatchSpanProcessor, SimpleSpanProcessor } = load('@opentelemetry/sdk-trace-base') as typeof SdkTrace;
  const { OTLPTraceExporter } = load('@opentelemetry/exporter-trace-otlp-http') as typeof Otlp;
  const { HttpInstrumentation } = load('@opentelemetry/instrumentation-http') as typeof Http;
  const { UndiciInstrumentation } = load('@opentelemetry/instrumentation-undici') as typeof Undici;
  const { PgInstrumentation } = load('@opentelemetry/instrumentation-pg') as typeof Pg;
  const { FastifyOtelInstrumentation } = load('@fastify/otel') as typeof FastifyOtel;
  const { PrismaInstrumentation } = load('@prisma/instrumentation') as typeof Prisma;
  process.env.OTEL_SERVICE_NAME ??= 'wallet-gateway';
  sdk = new NodeSDK({
    spanProcessors: [exporter ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(new OTLPTraceExporter())],
    instrumentations: [
      new HttpInstrumentation(),
      new UndiciInstrumentation(),
      new PgInstrumentation(),
      new FastifyOtelInstrumentation({ registerOnInitialization: true }),
      new PrismaInstrumentation(),
    ],
  });
  sdk.start();
  return true;
}

/** Whether tracing is on (started with an exporter or OTEL_EXPORTER_OTLP_ENDPOINT). */
export function tracingActive(): boolean {
  return sdk !== undefined;
}

/** Flushes the spans not yet exported and stops the SDK (no-op when tracing is off). */
export async function stopTracing(): Promise<void> {
  const running = sdk;
  sdk = undefined;
  await running?.shutdown();
}

startTracing();
