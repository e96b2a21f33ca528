import { createApp, buildOpenApiDocument } from './app';

/** Placeholder environment for building the document: nothing is connected or called. */
const DOCUMENT_ENV = {
  DATABASE_URL: 'postgresql://openapi@127.0.0.1:1/openapi',
  PROVIDER_BASE_URL: 'http://127.0.0.1:1/api/v1',
  PROVIDER_API_KEY: 'unused',
  PROVIDER_WEBHOOK_SECRET: 'unused',
  PUBLIC_BASE_URL: 'http://127.0.0.1:3000',
  LOG_LEVEL: 'silent',
  JOBS_ENABLED: 'false',
};

/** The OpenAPI document as committed in openapi.json (2-space JSON with a final newline). */
export async function renderOpenApi(): Promise<string> {
  const saved = { ...process.env };
  Object.assign(process.env, DOCUMENT_ENV);
  try {
    const app = await createApp({ bufferLogs: false });
    try {
      return `${JSON.stringify(buildOpenApiDocument(app), null, 2)}\n`;
    } finally {
      await app.close();
    }
  } finally {
    process.env = saved;
  }
}
