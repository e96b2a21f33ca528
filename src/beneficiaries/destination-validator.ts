import type { FieldError } from '../common/errors';
import type { ProviderDestinationField } from '../provider';

/**
 * Checks a beneficiary destination against the country's field descriptors
 * (docs/provider.md#beneficiaries: required, const, enum, pattern) before the provider is
 * called. `destination.type` picks the descriptor list. Returns every failing field, with paths
 * under `destination.`; an empty array means valid. Fields the country does not describe are refused.
 */
export function validateDestination(
  destination: Record<string, unknown>,
  destinations: Record<string, ProviderDestinationField[]>,
): FieldError[] {
  const type = destination.type;
  const types = Object.keys(destinations);
  if (typeof type !== 'string' || !destinations[type]) {
    return [{ field: 'destination.type', message: `destination.type must be one of: ${types.join(', ')}` }];
  }
  const fields = destinations[type];
  const errors: FieldError[] = [];
  for (const field of fields) {
    const path = `destination.${field.name}`;
    const value = destination[field.name];
    if (value === undefined || value === null || value === '') {
      if (field.required) errors.push({ field: path, message: `${path} is required` });
      continue;
    }
    if (typeof value !== 'string') {
      errors.push({ field: path, message: `${path} must be a string` });
      continue;
    }
    if (field.const !== undefined && value !== field.const) {
      errors.push({ field: path, message: `${path} must be ${field.const}` });
    }
    if (field.enum && !field.enum.includes(value)) {
      errors.push({ field: path, message: `${path} must be one of: ${field.enum.join(', ')}` });
    }
    if (field.pattern && !safeRegExp(field.pattern)?.test(value)) {
      errors.push({ field: path, message: `${path} does not match the required format ${field.pattern}` });
    }
  }
  const known = new Set(['type', ...fields.map((f) => f.name)]);
  for (const name of Object.keys(destination)) {
    if (!known.has(name))
      errors.push({
        field: `destination.${name}`,
        message: `destination.${name} is not a field of ${type} destinations`,
      });
  }
  return errors;
}

function safeRegExp(pattern: string): RegExp | null {
  try {
    return new RegExp(pattern);
  } catch {
    return null;
  }
}
