/**
 * The one fetch type the generated client (clients/typescript, compiled on its own with the DOM
 * library) names that Node's typings do not put in the global scope. The project compiles without
 * the DOM library, and test/sdk-client.e2e-spec.ts imports the client: this gives it Node's own type.
 */
import type { BodyInit as NodeBodyInit } from 'undici-types';

declare global {
  type BodyInit = NodeBodyInit;
}
